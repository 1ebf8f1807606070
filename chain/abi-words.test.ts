import { fc, test } from '@fast-check/vitest'
import { type AbiParameter, decodeAbiParameters, encodeAbiParameters, type Hex } from 'viem'
import { describe, expect } from 'vitest'
import { runs } from '../fixtures/property-runs.ts'
import { wordDecoder } from './abi-words.ts'

/** What the generic strict path makes of one word: viem's value when the word re-encodes to itself, else undefined. */
function generic(param: AbiParameter, word: string): unknown {
  try {
    const [value] = decodeAbiParameters([param], `0x${word}`)
    if (encodeAbiParameters([param], [value]).toLowerCase() !== `0x${word}`) return undefined
    return param.type === 'address' ? (value as string).toLowerCase() : value
  } catch {
    return undefined
  }
}

const TYPES = [
  'address',
  'bool',
  'uint8',
  'uint32',
  'uint48',
  'uint56',
  'uint256',
  'bytes1',
  'bytes20',
  'bytes32',
]
const hexDigits = (length: number) =>
  fc
    .array(fc.constantFrom(...'0123456789abcdef'), { minLength: length, maxLength: length })
    .map((d) => d.join(''))
/** Words of every kind: random 32 bytes, a short value (canonical for most types), a value padded on the right. */
const arbWord = fc.oneof(
  hexDigits(64),
  fc.integer({ min: 1, max: 64 }).chain((n) => hexDigits(n).map((d) => d.padStart(64, '0'))),
  fc.integer({ min: 1, max: 64 }).chain((n) => hexDigits(n).map((d) => d.padEnd(64, '0'))),
)

describe('wordDecoder', () => {
  test.prop([fc.constantFrom(...TYPES), arbWord], { numRuns: runs(2000) })(
    'property: accepts exactly the canonical words the generic decode-and-re-encode accepts, with its value',
    (type, word) => {
      const decoder = wordDecoder({ type })
      expect(decoder).toBeDefined()
      expect(decoder?.(word)).toEqual(generic({ type }, word))
    },
  )

  test('behavior: uint up to 48 bits is a number, wider a bigint (as viem decodes them)', () => {
    const word = (value: bigint, type: string) =>
      (encodeAbiParameters([{ type }], [type === 'uint48' ? Number(value) : value]) as Hex).slice(2)
    expect(wordDecoder({ type: 'uint48' })?.(word(2n ** 48n - 1n, 'uint48'))).toBe(2 ** 48 - 1)
    expect(wordDecoder({ type: 'uint56' })?.(word(2n ** 56n - 1n, 'uint56'))).toBe(2n ** 56n - 1n)
  })

  test('behavior: types without a fast path have no decoder (the generic path decodes them)', () => {
    for (const type of ['int256', 'string', 'bytes', 'uint256[]', 'tuple', 'uint7', 'bytes33']) {
      expect(wordDecoder({ type })).toBeUndefined()
    }
  })
})
