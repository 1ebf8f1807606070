import fs from 'node:fs'
import path from 'node:path'
import {
  type BaseError,
  ContractFunctionExecutionError,
  ContractFunctionRevertedError,
  encodeErrorResult,
  getAddress,
  type Hex,
  toFunctionSelector,
} from 'viem'
import { describe, expect, test } from 'vitest'
import { allowlistAbi } from './abi.ts'
import {
  allowlistErrorsAbi,
  decodeRevertData,
  REVERT_MEANINGS,
  revertDataVerdict,
  revertReasonOf,
} from './revert-reasons.ts'

/** An ABI's error entry. */
interface AbiError {
  type: 'error'
  name: string
  inputs: readonly { type: string }[]
}

/** The protocol's real ABIs of what an Allowlist write meets: every Allowlist version, the firewall, the proxy. */
function realAllowlistWriteErrors(): { file: string; error: AbiError }[] {
  const out: { file: string; error: AbiError }[] = []
  const root = path.resolve(import.meta.dirname, '../fixtures/protocol')
  for (const network of ['mainnet', 'hoodi']) {
    for (const file of fs.readdirSync(path.join(root, network))) {
      if (!/^(AllowlistV1_Implementation_.*|AllowlistFirewall|Allowlist_Proxy)\.json$/.test(file)) continue
      const { abi } = JSON.parse(fs.readFileSync(path.join(root, network, file), 'utf8')) as {
        abi: { type: string }[]
      }
      for (const item of abi)
        if (item.type === 'error') out.push({ file: `${network}/${file}`, error: item as AbiError })
    }
  }
  return out
}

/** An error's signature, e.g. `Unauthorized(address)`. */
const signatureOf = (e: AbiError) => `${e.name}(${e.inputs.map((i) => i.type).join(',')})`

const CALLER = getAddress('0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266')

/** Example arguments for each error of the ABI (address arguments get CALLER, numbers 1). */
function argsOf(item: (typeof allowlistErrorsAbi)[number]): readonly unknown[] {
  return item.inputs.map((input) => (input.type === 'address' ? CALLER : 1n))
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

  test('behavior: every custom error of every real Allowlist version, its firewall and its proxy decodes by name', () => {
    const real = realAllowlistWriteErrors()
    expect(real.length).toBeGreaterThan(10)
    const ours = new Set(allowlistErrorsAbi.map((e) => toFunctionSelector(signatureOf(e as AbiError))))
    const missing = real.filter(({ error }) => !ours.has(toFunctionSelector(signatureOf(error))))
    expect(missing.map(({ file, error }) => `${file}: ${signatureOf(error)}`)).toEqual([])
  })

  test('behavior: a revert is final only when no retry can change it (a malformed call, a denied address)', () => {
    const verdict = (name: (typeof allowlistErrorsAbi)[number]['name']) => {
      const item = allowlistErrorsAbi.find((e) => e.name === name)!
      return revertDataVerdict(
        encodeErrorResult({ abi: [item], errorName: name, args: argsOf(item) } as never),
      ).final
    }
    for (const name of [
      'InvalidZeroAddress',
      'AttemptToSetDenyPermission',
      'AttemptToRemoveDenyPermission',
      'Denied',
      'InvalidCount',
      'MismatchedAlloweeAndStatusCount',
    ] as const) {
      expect([name, verdict(name)]).toEqual([name, true])
    }
    for (const name of [
      'Unauthorized',
      'CallWhenPaused',
      'InvalidInitialization',
      'AdminCannotCallImplementation',
    ] as const) {
      expect([name, verdict(name)]).toEqual([name, false])
    }
    // the revert seen in the field: a write the contract did not know (an upgrade since the route was read)
    expect(revertDataVerdict('0x')).toEqual({ reason: 'reverted without a reason', final: false })
    expect(revertDataVerdict('0xdeadbeef').final).toBe(false)
  })
})
