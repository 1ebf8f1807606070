import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { ERROR_CATALOG } from '../api/errors.ts'

const readme = fs.readFileSync(path.resolve(import.meta.dirname, '../README.md'), 'utf8')

describe('README', () => {
  test('behavior: the published error catalog lists every code with its HTTP status and meaning', () => {
    const rows = new Map<string, string[]>()
    for (const line of readme.split('\n')) {
      const cells = line.split('|').map((c) => c.trim())
      if (/^IR\d{4}$/.test(cells[1] ?? '')) rows.set(cells[1]!, cells.slice(2, 4))
    }
    for (const [code, { http, meaning }] of Object.entries(ERROR_CATALOG)) {
      expect(rows.get(code), code).toEqual([String(http), meaning])
    }
    expect([...rows.keys()].sort()).toEqual(Object.keys(ERROR_CATALOG).sort())
  })

  test('behavior: gives the two commands', () => {
    expect(readme).toContain('npm ci && npm start')
    expect(readme).toContain('npm ci && npm test')
  })
})
