import { describe, expect, test } from 'vitest'
import { formatTable } from './output.ts'

describe('formatTable', () => {
  test('behavior: pads each column to its widest cell, two spaces apart, no trailing blanks', () => {
    expect(
      formatTable(
        ['kid', 'status'],
        [
          ['abcdef', 'current'],
          ['x', ''],
        ],
      ),
    ).toBe('kid     status\nabcdef  current\nx')
    expect(formatTable(['date'], [])).toBe('date')
  })
})
