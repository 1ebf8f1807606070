import {
  type BaseError,
  ContractFunctionExecutionError,
  ContractFunctionRevertedError,
  encodeErrorResult,
  getAddress,
  type Hex,
} from 'viem'
import { describe, expect, test } from 'vitest'
import { allowlistAbi } from './abi.ts'
import { allowlistErrorsAbi, decodeRevertData, REVERT_MEANINGS, revertReasonOf } from './revert-reasons.ts'

const CALLER = getAddress('0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266')

/** Example arguments for each error of the ABI (address arguments get CALLER). */
function argsOf(item: (typeof allowlistErrorsAbi)[number]): readonly unknown[] {
  return item.inputs.map(() => CALLER)
}

describe('revert reasons', () => {
  test.each(allowlistErrorsAbi.map((item) => [item.name, item] as const))(
    'behavior: custom error %s decodes to its name, its arguments and its meaning',
    (name, item) => {
      const data = encodeErrorResult({ abi: [item], errorName: item.name, args: argsOf(item) } as never)
      const reason = decodeRevertData(data)
      const args = argsOf(item).join(', ')
      expect(reason).toBe(`${name}(${args}): ${REVERT_MEANINGS[name]}`)
      expect(reason).not.toMatch(/0x[0-9a-f]{8}\b(?![0-9a-fA-F])/)
    },
  )

  test('behavior: every error has a one-sentence meaning', () => {
    expect(Object.keys(REVERT_MEANINGS).sort()).toEqual(allowlistErrorsAbi.map((e) => e.name).sort())
    for (const meaning of Object.values(REVERT_MEANINGS)) expect(meaning.length).toBeGreaterThan(10)
  })

  test('behavior: an unknown selector falls back to the selector only; Error(string) reads as its message', () => {
    expect(
      decodeRevertData('0xdeadbeef0000000000000000000000000000000000000000000000000000000000000001'),
    ).toBe('unknown custom error 0xdeadbeef')
    expect(decodeRevertData('0x')).toBe('reverted without a reason')
    const errorString = encodeErrorResult({
      abi: [{ type: 'error', name: 'Error', inputs: [{ name: 'message', type: 'string' }] }],
      errorName: 'Error',
      args: ['nope'],
    })
    expect(decodeRevertData(errorString)).toBe('Error(nope)')
  })

  test('behavior: a viem simulation error (ABI without the errors) gives the readable reason', () => {
    const data = encodeErrorResult({ abi: allowlistErrorsAbi, errorName: 'Denied', args: [CALLER] }) as Hex
    const reverted = new ContractFunctionRevertedError({
      abi: allowlistAbi,
      data,
      functionName: 'setAllowPermissions',
    })
    const err = new ContractFunctionExecutionError(reverted as BaseError, {
      abi: allowlistAbi,
      functionName: 'setAllowPermissions',
      args: [[CALLER], [1n]],
      contractAddress: CALLER,
    })
    expect(revertReasonOf(err)).toBe(`Denied(${CALLER}): ${REVERT_MEANINGS.Denied}`)
    expect(revertReasonOf(new Error('socket hang up'))).toBe('socket hang up')
  })
})
