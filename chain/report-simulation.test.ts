import {
  type AbiFunction,
  BaseError,
  ContractFunctionExecutionError,
  ContractFunctionRevertedError,
  encodeErrorResult,
  HttpRequestError,
  toFunctionSelector,
} from 'viem'
import { describe, expect, test } from 'vitest'
import { readProtocolFixture } from '../test/helpers/protocol-bytecode.ts'
import { refusalOf, riverReportAbi } from './report-simulation.ts'

interface Item {
  type: string
  name?: string
  inputs?: readonly { type: string; name?: string; components?: unknown }[]
}

/** The ABIs of the 1.x implementations of `contract` on mainnet. */
function realAbis(files: string[]): Item[][] {
  return files.map((file) => readProtocolFixture<{ abi: Item[] }>('mainnet', `${file}.json`).abi)
}

const RIVER_1X = realAbis([
  'RiverV1_Implementation_1_0_0',
  'RiverV1_Implementation_1_0_1',
  'RiverV1_Implementation_1_2_1',
])
const REGISTRY_1X = realAbis([
  'OperatorsRegistryV1_Implementation_1_0_0',
  'OperatorsRegistryV1_Implementation_1_2_1',
])

/** The 4-byte selector of a function or error (both hash `Name(type,...)`, tuples spelled out). */
const selector = (item: Item) =>
  toFunctionSelector({ ...item, type: 'function', outputs: [], stateMutability: 'nonpayable' } as AbiFunction)

describe('riverReportAbi', () => {
  test('behavior: setConsensusLayerData has the selector of every River 1.x implementation', () => {
    const ours = riverReportAbi.find((i) => i.type === 'function')!
    for (const abi of RIVER_1X) {
      const real = abi.find((i) => i.type === 'function' && i.name === 'setConsensusLayerData')!
      expect(selector(real)).toBe(selector(ours))
    }
  })

  test('behavior: each error is River 1.x’s or the OperatorsRegistry 1.x’s, with the same signature and names', () => {
    const real = [...RIVER_1X, ...REGISTRY_1X].flat().filter((i) => i.type === 'error')
    for (const error of riverReportAbi.filter((i) => i.type === 'error')) {
      const match = real.find((r) => r.name === error.name && selector(r) === selector(error))
      expect(match, error.name).toBeDefined()
      expect(match?.inputs?.map((i) => i.name)).toEqual(error.inputs.map((i) => i.name))
    }
  })
})

const REPORT = {
  epoch: 439_650n,
  validatorsBalance: 704n,
  validatorsSkimmedBalance: 0n,
  validatorsExitedBalance: 0n,
  validatorsExitingBalance: 0n,
  validatorsCount: 20,
  stoppedValidatorCountPerOperator: [],
  rebalanceDepositToRedeemMode: false,
  slashingContainmentMode: false,
}

describe('refusalOf', () => {
  const revertOf = (data: `0x${string}`) =>
    new ContractFunctionExecutionError(
      new ContractFunctionRevertedError({ abi: riverReportAbi, data, functionName: 'setConsensusLayerData' }),
      { abi: riverReportAbi, functionName: 'setConsensusLayerData', args: [REPORT] },
    )

  test('behavior: a custom error of River gives its name and named arguments', () => {
    const data = encodeErrorResult({
      abi: riverReportAbi,
      errorName: 'TotalValidatorBalanceIncreaseOutOfBound',
      args: [642n, 706n, 86_400n, 1000n],
    })
    expect(refusalOf(revertOf(data))).toBe(
      'TotalValidatorBalanceIncreaseOutOfBound(prevTotalEthIncludingExited: 642, postTotalEthIncludingExited: 706, timeElapsed: 86400, annualAprUpperBound: 1000)',
    )
  })

  test('behavior: an unknown error gives its selector; a bare revert says so; an RPC failure is no refusal', () => {
    expect(refusalOf(revertOf('0x12345678'))).toBe('unknown custom error 0x12345678')
    expect(refusalOf(revertOf('0x'))).toBe('reverted without a reason')
    expect(refusalOf(new HttpRequestError({ url: 'http://127.0.0.1:1', status: 502 }))).toBeUndefined()
    expect(refusalOf(new BaseError('socket hang up'))).toBeUndefined()
    expect(refusalOf(new Error('plain'))).toBeUndefined()
  })
})
