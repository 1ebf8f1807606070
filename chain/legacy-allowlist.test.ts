import {
  createPublicClient,
  createWalletClient,
  encodeFunctionData,
  type Hash,
  type Hex,
  http,
  parseAbi,
  zeroAddress,
} from 'viem'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { type Anvil, startAnvil } from '../devnet/anvil.ts'
import { compileLegacyAllowlist } from '../test/helpers/legacy-allowlist.ts'
import { allowlistAbi, allowlistLegacyAbi } from './abi.ts'
import { recoverLegacyAllowlistAccounts } from './legacy-allowlist.ts'

const accounts = [
  '0x00000000000000000000000000000000000000a1',
  '0x00000000000000000000000000000000000000b2',
] as const
const permissions = [5n, 0n] as const

describe('recoverLegacyAllowlistAccounts', () => {
  let anvil: Anvil
  let input: Hex
  let accountsHash: Hash
  let logPermissions: readonly bigint[]

  beforeAll(async () => {
    anvil = await startAnvil()
    const transport = http(anvil.rpcUrl)
    const publicClient = createPublicClient({ transport })
    const wallet = createWalletClient({ transport, account: '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266' })
    const deployHash = await wallet.sendTransaction({ chain: null, data: compileLegacyAllowlist() })
    const { contractAddress } = await publicClient.waitForTransactionReceipt({ hash: deployHash })
    input = encodeFunctionData({
      abi: allowlistLegacyAbi,
      functionName: 'allow',
      args: [[...accounts], [...permissions]],
    })
    const hash = await wallet.sendTransaction({ chain: null, to: contractAddress!, data: input })
    const receipt = await publicClient.waitForTransactionReceipt({ hash })
    const log = receipt.logs[0]!
    accountsHash = log.topics[1] as Hash
    // data: the non-indexed uint256[] permissions
    const words = log.data
      .slice(2)
      .match(/.{64}/g)!
      .map((w) => BigInt(`0x${w}`))
    logPermissions = words.slice(2) // offset, length, elements
  }, 60_000)
  afterAll(async () => {
    await anvil?.stop()
  })

  test('behavior: recovers the accounts of a real legacy log from the transaction calldata', () => {
    expect(logPermissions).toEqual([...permissions])
    const recovered = recoverLegacyAllowlistAccounts(input, { accountsHash, permissions: logPermissions })
    // in the stored form: lower case
    expect(recovered).toEqual(accounts.map((a) => a.toLowerCase()))
  })

  test('behavior: refuses calldata that does not match the log, or is not the call', () => {
    const other = encodeFunctionData({
      abi: allowlistLegacyAbi,
      functionName: 'allow',
      args: [[accounts[0]], [5n]],
    })
    expect(
      recoverLegacyAllowlistAccounts(other, { accountsHash, permissions: logPermissions }),
    ).toBeUndefined()
    const wrongPerms = encodeFunctionData({
      abi: allowlistLegacyAbi,
      functionName: 'allow',
      args: [[...accounts], [5n, 5n]],
    })
    expect(
      recoverLegacyAllowlistAccounts(wrongPerms, { accountsHash, permissions: logPermissions }),
    ).toBeUndefined()
    expect(
      recoverLegacyAllowlistAccounts('0xdeadbeef', { accountsHash, permissions: logPermissions }),
    ).toBeUndefined()
    // the 1.2.1 write with the same arguments is not what 0.4.0 was called with
    const later = encodeFunctionData({
      abi: allowlistAbi,
      functionName: 'setAllowPermissions',
      args: [[...accounts], [...permissions]],
    })
    expect(
      recoverLegacyAllowlistAccounts(later, { accountsHash, permissions: logPermissions }),
    ).toBeUndefined()
  })

  test("behavior: the selector is the 0.4.0 implementation's (0xe580d994)", () => {
    expect(input.slice(0, 10)).toBe('0xe580d994')
  })

  test('behavior: an allow sent by a Safe (execTransaction wrapping it) is recovered from the inner call', () => {
    const safeCall = encodeFunctionData({
      abi: parseAbi([
        'function execTransaction(address to, uint256 value, bytes data, uint8 operation, uint256 safeTxGas, uint256 baseGas, uint256 gasPrice, address gasToken, address refundReceiver, bytes signatures) payable returns (bool)',
      ]),
      functionName: 'execTransaction',
      args: [accounts[0], 0n, input, 0, 0n, 0n, 0n, zeroAddress, zeroAddress, '0x'],
    })
    expect(recoverLegacyAllowlistAccounts(safeCall, { accountsHash, permissions: logPermissions })).toEqual(
      accounts.map((a) => a.toLowerCase()),
    )
  })
})
