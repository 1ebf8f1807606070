import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, test } from 'vitest'

const ROOT = path.resolve(import.meta.dirname, '..')

/** Folders and what each may import (STYLE.md "Shape"): relative imports may only reach these folders. */
const ALLOWED: Record<string, { folders: string[]; packages?: RegExp }> = {
  engine: { folders: ['engine'], packages: /^(decimal\.js|date-fns)(\/|$)/ },
  common: { folders: ['common'] },
  chain: { folders: ['chain', 'common'] },
  db: { folders: ['db', 'common'] },
}

function sourceFiles(dir: string): string[] {
  const out: string[] = []
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) out.push(...sourceFiles(full))
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts')) out.push(full)
  }
  return out
}

function imports(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8')
  return [...text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]/g)].map((m) => m[1]!)
}

describe('architecture', () => {
  for (const [folder, rule] of Object.entries(ALLOWED)) {
    test(`behavior: ${folder}/ imports only ${rule.folders.join(', ')}${rule.packages ? ' and its allowed packages' : ''}`, () => {
      const dir = path.join(ROOT, folder)
      if (!fs.existsSync(dir)) return
      const violations: string[] = []
      for (const file of sourceFiles(dir)) {
        for (const spec of imports(file)) {
          if (spec.startsWith('.')) {
            const target = path.relative(ROOT, path.resolve(path.dirname(file), spec)).split(path.sep)[0]!
            if (!rule.folders.includes(target)) violations.push(`${path.relative(ROOT, file)} -> ${spec}`)
          } else if (rule.packages && !spec.startsWith('node:') && !rule.packages.test(spec)) {
            violations.push(`${path.relative(ROOT, file)} -> ${spec}`)
          } else if (rule.packages && spec.startsWith('node:')) {
            violations.push(`${path.relative(ROOT, file)} -> ${spec} (engine/ does no I/O)`)
          }
        }
      }
      expect(violations).toEqual([])
    })
  }

  test('behavior: only common/config.ts reads process.env among service code', () => {
    const readers: string[] = []
    for (const folder of ['common', 'engine', 'chain', 'db', 'jobs', 'api', 'devnet']) {
      const dir = path.join(ROOT, folder)
      if (!fs.existsSync(dir)) continue
      for (const file of sourceFiles(dir)) {
        const rel = path.relative(ROOT, file)
        if (
          rel !== path.join('common', 'config.ts') &&
          /process\.env\b/.test(fs.readFileSync(file, 'utf8'))
        ) {
          readers.push(rel)
        }
      }
    }
    expect(readers).toEqual([])
  })
})
