import { fc, test } from '@fast-check/vitest'
import { describe, expect } from 'vitest'
import { runs } from '../fixtures/property-runs.ts'
import { copyText } from './bulk.ts'
import { createCopyRows } from './copy-rows.ts'

const UNESCAPES: Record<string, string> = { '\\': '\\', t: '\t', n: '\n', r: '\r' }

/** The values of one COPY text line: `\N` is null, escapes undone (the inverse of `copyText`). */
function copyLineValues(line: string): (string | null)[] {
  return line.split('\t').map((field) => {
    if (field === '\\N') return null
    return field.includes('\\') ? field.replace(/\\(.)/g, (_, c: string) => UNESCAPES[c] ?? c) : field
  })
}

describe('createCopyRows', () => {
  test('behavior: walks the rows and hands out their fields, with or without a final newline', () => {
    for (const text of ['0xab\t12\t-3\n0xcd\t0\t\\N\n', '0xab\t12\t-3\n0xcd\t0\t\\N']) {
      const rows = createCopyRows(text, 3)
      const seen: string[][] = []
      const spans: string[] = []
      while (rows.next()) {
        seen.push([rows.field(0), rows.field(1), rows.field(2)])
        spans.push(rows.fields(1, 2), rows.fields(0, 0))
      }
      expect(seen).toEqual([
        ['0xab', '12', '-3'],
        ['0xcd', '0', '\\N'],
      ])
      expect(spans).toEqual(['12\t-3', '0xab', '0\t\\N', '0xcd'])
    }
    expect(createCopyRows('', 2).next()).toBe(false)
  })

  test('behavior: a row with too few or too many fields is refused', () => {
    expect(() => createCopyRows('a\tb\n', 3).next()).toThrow(/2 fields, 3 expected/)
    expect(() => createCopyRows('a\tb\tc\n', 2).next()).toThrow(/more than 2 fields/)
  })

  test.prop([fc.array(fc.array(fc.option(fc.string()), { minLength: 2, maxLength: 2 }), { maxLength: 8 })], {
    numRuns: runs(200),
  })('property: lines written with copyText read back to the same values', (values) => {
    const text = values.map((row) => `${row.map((v) => copyText(v)).join('\t')}\n`).join('')
    const rows = createCopyRows(text, 2)
    const read: (string | null)[][] = []
    while (rows.next()) read.push(copyLineValues(`${rows.field(0)}\t${rows.field(1)}`))
    expect(read).toEqual(values)
  })
})
