import { readdirSync, readFileSync } from 'node:fs'
import { describe, expect, test } from 'vitest'

const DIR = new URL('./', import.meta.url)
const ALLOWED_PACKAGES = new Set(['decimal.js', 'date-fns'])

describe('engine imports', () => {
  test('behavior: engine source files import only decimal.js, date-fns, other engine files and the record field lists', () => {
    const sources = readdirSync(DIR).filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts'))
    expect(sources.length).toBeGreaterThan(10)
    for (const name of sources) {
      const text = readFileSync(new URL(name, DIR), 'utf8')
      const specifiers = [
        ...text.matchAll(
          /(?:import|export)\s[^'"]*?from\s+'([^']+)'|import\(\s*'([^']+)'\s*\)|import\s+'([^']+)'/g,
        ),
      ].map((match) => match[1] ?? match[2] ?? match[3] ?? '')
      for (const specifier of specifiers) {
        const ok =
          ALLOWED_PACKAGES.has(specifier) ||
          /^\.\/[a-z0-9-]+\.ts$/.test(specifier) ||
          specifier === '../fields/record-fields.ts'
        expect(ok, `${name} imports ${specifier}`).toBe(true)
      }
      expect(text, name).not.toMatch(/process\.env|Date\.now\(|new Date\(\)|Math\.random\(/)
    }
  })
})
