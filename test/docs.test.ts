import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { ERROR_CATALOG } from '../api/errors.ts'

const ROOT = path.resolve(import.meta.dirname, '..')
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8')

const readme = read('README.md')
/** The documents the README links to by audience (issue 24): every relative link among them must resolve. */
const DOCS = [
  'README.md',
  'bench/README.md',
  'clients/typescript/README.md',
  ...fs
    .readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
]

/** Lines outside fenced code blocks. */
function prose(text: string): string[] {
  let fenced = false
  return text.split('\n').filter((line) => {
    if (/^\s*```/.test(line)) fenced = !fenced
    return !fenced && !/^\s*```/.test(line)
  })
}

/** GitHub's anchors of a Markdown file's headings (lower case, punctuation dropped, `-1` for a repeat). */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>()
  const out = new Set<string>()
  for (const line of prose(text)) {
    const heading = /^#{1,6} (.*)$/.exec(line)?.[1]
    if (heading === undefined) continue
    const base = heading
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-')
    const n = seen.get(base) ?? 0
    seen.set(base, n + 1)
    out.add(n === 0 ? base : `${base}-${n}`)
  }
  return out
}

describe('README and docs', () => {
  test('behavior: the published error catalog lists every code with its HTTP status and meaning', () => {
    const rows = new Map<string, string[]>()
    for (const line of read('docs/decisions.md').split('\n')) {
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

  test('behavior: the README stays at most 400 lines, the details in the documents it links to', () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(400)
    for (const doc of DOCS.filter((d) => d !== 'README.md')) expect(readme, doc).toContain(`](${doc}`)
  })

  test('behavior: every relative link of the README and docs names an existing file and heading', () => {
    const broken: string[] = []
    for (const doc of DOCS) {
      for (const line of prose(read(doc))) {
        for (const [, target] of line.matchAll(/\]\(([^)\s]+)\)/g)) {
          if (/^[a-z]+:/.test(target!)) continue // https:, mailto:
          const [file, anchor] = target!.split('#') as [string, string | undefined]
          const resolved =
            file === '' ? doc : path.posix.normalize(path.posix.join(path.posix.dirname(doc), file))
          if (!fs.existsSync(path.join(ROOT, resolved))) {
            broken.push(`${doc}: ${target} (no file ${resolved})`)
          } else if (
            anchor !== undefined &&
            resolved.endsWith('.md') &&
            !anchors(read(resolved)).has(anchor)
          ) {
            broken.push(`${doc}: ${target} (no heading #${anchor} in ${resolved})`)
          }
        }
      }
    }
    expect(broken).toEqual([])
  })

  test('behavior: every variable loadConfig reads is in the environment table of docs/operations.md', () => {
    const source = read('common/config.ts')
    const read_ = new Set([
      ...[...source.matchAll(/\benv\.([A-Z][A-Z0-9_]+)/g)].map((m) => m[1]!),
      ...[...source.matchAll(/\(env, '([A-Z][A-Z0-9_]+)'/g)].map((m) => m[1]!),
    ])
    expect(read_.size).toBeGreaterThan(20)
    const operations = read('docs/operations.md')
    const table = operations.slice(operations.indexOf('### Environment'), operations.indexOf('### CLI'))
    const documented = new Set(
      table
        .split('\n')
        .filter((line) => line.startsWith('| `'))
        .flatMap((line) => [...line.split('|')[1]!.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]!)),
    )
    expect([...read_].filter((name) => !documented.has(name))).toEqual([])
  })
})
