import {
  type Abi,
  encodeAbiParameters,
  getAddress,
  type Hash,
  keccak256,
  pad,
  toEventSelector,
  toHex,
} from 'viem'
import { describe, expect, test } from 'vitest'
import { allowlistAbi, riverAbi } from './abi.ts'
import { InvalidLogError, LogDecodeError } from './errors.ts'
import { createLogDecoder, decodeLog } from './log-decoding.ts'

describe('createLogDecoder', () => {
  const TRANSFER = toEventSelector('Transfer(address,address,uint256)')
  const PERMISSIONS = toEventSelector('SetAllowlistPermissions(address[],uint256[])')
  const TX = `0x${'ab'.repeat(32)}` as Hash
  const base = {
    address: '0x8c1BEd5b9a0928467c9B1341Da1D7BD5e10b6549',
    blockHash: `0x${'11'.repeat(32)}`,
    blockNumber: '0x7b',
    transactionHash: TX,
    transactionIndex: '0x2',
    logIndex: '0x4',
    removed: false,
  }
  const word = (n: bigint) => toHex(n, { size: 32 })
  const transfer = {
    ...base,
    topics: [TRANSFER, word(1n), word(2n)],
    data: word(10n ** 18n),
  }
  const decode = createLogDecoder(riverAbi)

  test('behavior: decodes a log to a typed record with lower-case address and numeric positions', () => {
    expect(decode(transfer)).toEqual({
      address: '0x8c1bed5b9a0928467c9b1341da1d7bd5e10b6549',
      blockNumber: 123n,
      blockHash: `0x${'11'.repeat(32)}`,
      transactionHash: TX,
      transactionIndex: 2,
      logIndex: 4,
      eventName: 'Transfer',
      args: {
        from: '0x0000000000000000000000000000000000000001',
        to: '0x0000000000000000000000000000000000000002',
        value: 10n ** 18n,
      },
    })
  })

  test('behavior: address and address[] arguments come in the one stored form (lower case), not checksummed', () => {
    const holder = '0x8c1bed5b9a0928467c9b1341da1d7bd5e10b6549'
    const other = '0xfe3b557e8fb62b89f4916b721be55ceb828dbd73'
    const log = decode({ ...transfer, topics: [TRANSFER, pad(holder), pad(other)] })
    expect(log.eventName === 'Transfer' && log.args).toEqual({ from: holder, to: other, value: 10n ** 18n })
    const permissions = createLogDecoder(allowlistAbi)({
      ...base,
      topics: [PERMISSIONS],
      data: encodeAbiParameters(
        [{ type: 'address[]' }, { type: 'uint256[]' }],
        [
          [getAddress(holder), getAddress(other)],
          [5n, 0n],
        ],
      ),
    })
    expect(permissions.args).toEqual({ accounts: [holder, other], permissions: [5n, 0n] })
  })

  test('behavior: data too short raises LogDecodeError naming block, tx and log index', () => {
    const error = (() => {
      try {
        decode({ ...transfer, data: '0x1234' })
      } catch (e) {
        return e
      }
    })()
    expect(error).toBeInstanceOf(LogDecodeError)
    expect((error as Error).message).toContain('could not decode Transfer at block 123')
    expect((error as Error).message).toContain(`tx ${TX}`)
    expect((error as Error).message).toContain('log index 4')
    expect((error as LogDecodeError).details).toMatchObject({
      block_number: '123',
      transaction_hash: TX,
      log_index: 4,
    })
  })

  test('behavior: strict shape checks: topic count, trailing data, dirty address bits', () => {
    expect(() => decode({ ...transfer, topics: [TRANSFER, word(1n)] })).toThrow(/expected 3 topics, got 2/)
    expect(() => decode({ ...transfer, topics: [...transfer.topics, word(3n)] })).toThrow(LogDecodeError)
    expect(() => decode({ ...transfer, data: `${transfer.data}00` })).toThrow(/not the canonical encoding/)
    expect(() => decode({ ...transfer, topics: [TRANSFER, `0xff${word(1n).slice(4)}`, word(2n)] })).toThrow(
      /topic 1 is not a canonical address/,
    )
    expect(() =>
      decode({ ...transfer, topics: [toEventSelector('Foo(uint256)'), word(1n), word(2n)] }),
    ).toThrow(/matches no event of the ABI/)
  })

  test('behavior: a log in upper-case hex decodes as the lower-case one (both decoding paths)', () => {
    const upper = (hex: string) => `0x${hex.slice(2).toUpperCase()}`
    const holder = '0x8c1bed5b9a0928467c9b1341da1d7bd5e10b6549'
    const shouting = {
      ...transfer,
      topics: [TRANSFER, pad(holder), word(2n)].map(upper),
      data: upper(transfer.data),
    }
    expect(decode(shouting)).toEqual(decode({ ...transfer, topics: [TRANSFER, pad(holder), word(2n)] }))
  })

  test("behavior: the block's time comes with the log when the node gives it (blockTimestamp), else it is absent", () => {
    expect(decode({ ...transfer, blockTimestamp: '0x65f0c2a0' }).blockTimestamp).toBe(0x65f0c2a0n)
    expect('blockTimestamp' in decode(transfer)).toBe(false)
    expect('blockTimestamp' in decode({ ...transfer, blockTimestamp: null })).toBe(false)
    // a node that says 0 (no real block has it) does not stand in for the block's header
    expect('blockTimestamp' in decode({ ...transfer, blockTimestamp: '0x0' })).toBe(false)
    expect(() => decode({ ...transfer, blockTimestamp: 'yesterday' })).toThrow(/blockTimestamp is malformed/)
  })

  test('behavior: missing position fields or a removed log raise InvalidLogError', () => {
    expect(() => decode({ ...transfer, removed: true })).toThrow(InvalidLogError)
    expect(() => decode({ ...transfer, blockNumber: null })).toThrow(/blockNumber is missing/)
    expect(() => decode({ ...transfer, blockHash: null })).toThrow(/blockHash is missing/)
    expect(() => decode({ ...transfer, transactionHash: undefined })).toThrow(/transactionHash is missing/)
    expect(() => decode({ ...transfer, logIndex: null })).toThrow(/logIndex is missing/)
  })

  test('behavior: the legacy indexed SetAllowlistPermissions is flagged, not thrown; other shapes still throw', () => {
    const accountsHash = keccak256(word(0xa1n))
    const legacy = {
      ...base,
      topics: [PERMISSIONS, accountsHash],
      data: encodeAbiParameters([{ type: 'uint256[]' }], [[5n, 1n]]),
    }
    const log = decodeLog(allowlistAbi, legacy)
    expect(log).toMatchObject({
      eventName: 'SetAllowlistPermissions',
      legacyIndexed: true,
      args: { accountsHash, permissions: [5n, 1n] },
      blockNumber: 123n,
      logIndex: 4,
    })
    expect(() => decodeLog(allowlistAbi, { ...legacy, data: '0x12' })).toThrow(LogDecodeError)
    expect(() =>
      decodeLog(allowlistAbi, { ...legacy, topics: [PERMISSIONS, accountsHash, accountsHash] }),
    ).toThrow(/expected 1 topics, got 3/)
    const current = {
      ...base,
      topics: [PERMISSIONS],
      data: encodeAbiParameters(
        [{ type: 'address[]' }, { type: 'uint256[]' }],
        [['0x00000000000000000000000000000000000000a1'], [5n]],
      ),
    }
    expect(decodeLog(allowlistAbi, current)).toMatchObject({
      eventName: 'SetAllowlistPermissions',
      args: { accounts: ['0x00000000000000000000000000000000000000a1'], permissions: [5n] },
    })
    expect(decodeLog(allowlistAbi, current).legacyIndexed).toBeUndefined()
  })

  test('behavior: decodes the ProcessedConsensusLayerReport struct event', () => {
    const abi = riverAbi as Abi
    const report = {
      epoch: 1n,
      validatorsBalance: 32n * 10n ** 18n,
      validatorsSkimmedBalance: 0n,
      validatorsExitedBalance: 0n,
      validatorsExitingBalance: 0n,
      validatorsCount: 1,
      stoppedValidatorCountPerOperator: [0, 2],
      rebalanceDepositToRedeemMode: false,
      slashingContainmentMode: false,
    }
    const trace = {
      rewards: 5n,
      pulledELFees: 1n,
      pulledRedeemManagerExceedingEthBuffer: 0n,
      pulledCoverageFunds: 0n,
    }
    const event = riverAbi.find((x) => x.type === 'event' && x.name === 'ProcessedConsensusLayerReport')!
    if (event.type !== 'event') throw new Error('unreachable')
    const data = encodeAbiParameters(event.inputs, [report, trace])
    const log = decodeLog(abi, {
      ...base,
      topics: ['0x49ac0d2bb2a688ca460f7993eb93eccd3b9c9188da6b0727e9a409cf8b105875'],
      data,
    })
    expect(log.eventName).toBe('ProcessedConsensusLayerReport')
    expect(log.args).toEqual({ report, trace })
  })
})
