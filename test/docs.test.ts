import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { ERROR_CATALOG } from '../api/errors.ts'

const readme = fs.readFileSync(path.resolve(import.meta.dirname, '../README.md'), 'utf8')

describe('README', () => {
  test('behavior: the published error catalog lists every code with its HTTP status and meaning', () => {
    for (const [code, { http, meaning }] of Object.entries(ERROR_CATALOG)) {
      expect(readme).toContain(`| ${code} | ${http} | ${meaning} |`)
    }
    const published = [...readme.matchAll(/^\| (IR\d{4}) \|/gm)].map((m) => m[1])
    expect(published.sort()).toEqual(Object.keys(ERROR_CATALOG).sort())
  })

  test('behavior: gives the two commands', () => {
    expect(readme).toContain('npm ci && npm start')
    expect(readme).toContain('npm ci && npm test')
  })
})
