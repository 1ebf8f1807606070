import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, test } from 'vitest'

const ROOT = path.resolve(import.meta.dirname, '..')

/** What one layer may import: relative imports only into `folders`, packages limited by the two patterns. */
interface LayerRule {
  /** The top-level folders its relative imports may reach; `'*'`: any. */
  folders: string[] | '*'
  /** When set, the only packages (and no `node:` module) this layer may import. */
  onlyPackages?: RegExp
  /** Packages this layer must not import (they belong to another layer). */
  forbiddenPackages?: RegExp
}

/** Packages that belong to one layer: the HTTP framework to api/, SQL drivers to db/, the queue to jobs/. */
const HTTP = /^(fastify|fastify-plugin|@fastify\/)/
const SQL = /^(knex|pg|pg-copy-streams|@electric-sql\/pglite)(\/|$)/
const QUEUE = /^bullmq(\/|$)/
const CHAIN_CLIENT = /^viem(\/|$)/
const anyOf = (...patterns: RegExp[]) => new RegExp(patterns.map((p) => `(?:${p.source})`).join('|'))

/**
 * The one-way order of STYLE.md "Shape", lowest first: engine (pure math) ; common ; chain and db (side by
 * side, each over common) ; metrics (the service's Prometheus figures, over db: the shared state's reads,
 * BullMQ's counts loaded lazily, never a worker) and platform (account, wallet and webhook-URL rules over db,
 * no ABI, no HTTP), side by side ; jobs (chain, db, engine, platform and metrics meet) ; api (reads db, calls
 * engine, platform and metrics: never jobs nor chain, so no request reaches the chain or the consensus
 * node) ; cli on top. devnet (anvil and the protocol simulator) sits beside them over chain and common; only
 * cli uses it. bench (benchmarks) may import anything, test helpers included. Nothing imports cli or bench
 * (no folder lists them but bench, for cli).
 */
const LAYERS: Record<string, LayerRule> = {
  engine: { folders: ['engine'], onlyPackages: /^(decimal\.js|date-fns)(\/|$)/ },
  common: { folders: ['common'], forbiddenPackages: anyOf(HTTP, SQL, QUEUE) },
  chain: { folders: ['chain', 'common'], forbiddenPackages: anyOf(HTTP, SQL, QUEUE) },
  db: { folders: ['db', 'common'], forbiddenPackages: anyOf(HTTP, QUEUE, CHAIN_CLIENT) },
  metrics: { folders: ['metrics', 'db', 'common'], forbiddenPackages: anyOf(HTTP, SQL, CHAIN_CLIENT) },
  platform: {
    folders: ['platform', 'db', 'common'],
    forbiddenPackages: anyOf(HTTP, SQL, QUEUE, CHAIN_CLIENT),
  },
  jobs: {
    folders: ['jobs', 'metrics', 'platform', 'chain', 'db', 'engine', 'common'],
    forbiddenPackages: anyOf(HTTP, SQL),
  },
  api: {
    folders: ['api', 'metrics', 'platform', 'db', 'engine', 'common'],
    forbiddenPackages: anyOf(SQL, QUEUE),
  },
  devnet: { folders: ['devnet', 'chain', 'common'], forbiddenPackages: anyOf(HTTP, SQL, QUEUE) },
  cli: {
    folders: ['cli', 'api', 'jobs', 'metrics', 'platform', 'devnet', 'chain', 'db', 'engine', 'common'],
    forbiddenPackages: anyOf(HTTP, SQL),
  },
  bench: { folders: '*' },
}

/**
 * Top-level folders outside the product, not checked: tests, fixtures (golden vectors and their scripts),
 * tooling, the bin shim and docs may import any layer; node_modules and the git-ignored outputs (data/, the
 * default DATA_DIR; coverage/; scratch/) hold no source of ours.
 */
const OUTSIDE_PRODUCT = new Set([
  'test',
  'fixtures',
  'tools',
  'bin',
  'docs',
  'node_modules',
  'data',
  'coverage',
  'scratch',
])

/** One source file: its path relative to the repository root (with `/`) and its text. */
interface SourceFile {
  path: string
  text: string
}

/** Every import specifier of a file: static `import`/`export ... from`, side-effect imports and `import()`. */
function importsOf(text: string): string[] {
  const specs = [
    ...text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]/g),
    ...text.matchAll(/(?:^|\n)\s*import\s+['"]([^'"]+)['"]/g),
    ...text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g),
  ]
  return specs.map((m) => m[1]!)
}

/** The package name of a bare specifier (`@scope/name` or `name`). */
function packageName(spec: string): string {
  const parts = spec.split('/')
  return spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!
}

/**
 * Checks the layer rules over a list of files (tests, `*.test.ts`, are exempt: unit tests beside the code may
 * use devnet and test helpers). Returns one line per wrong-way import, `file -> spec (why)`, and one per
 * top-level folder that is neither a layer nor a folder outside the product.
 */
function layerViolations(files: SourceFile[], layers: Record<string, LayerRule> = LAYERS): string[] {
  const violations: string[] = []
  const unknownFolders = new Set<string>()
  for (const file of files) {
    if (file.path.endsWith('.test.ts')) continue
    const layer = file.path.split('/')[0]!
    if (!file.path.includes('/')) continue
    const rule = layers[layer]
    if (!rule) {
      if (!OUTSIDE_PRODUCT.has(layer)) unknownFolders.add(layer)
      continue
    }
    for (const spec of importsOf(file.text)) {
      if (spec.startsWith('.')) {
        const target = path.posix
          .normalize(path.posix.join(path.posix.dirname(file.path), spec))
          .split('/')[0]!
        if (rule.folders !== '*' && !rule.folders.includes(target)) {
          violations.push(`${file.path} -> ${spec} (${layer}/ may import ${rule.folders.join(', ')})`)
        }
      } else if (rule.onlyPackages) {
        if (spec.startsWith('node:')) violations.push(`${file.path} -> ${spec} (${layer}/ does no I/O)`)
        else if (!rule.onlyPackages.test(spec))
          violations.push(`${file.path} -> ${spec} (not allowed in ${layer}/)`)
      } else if (rule.forbiddenPackages?.test(packageName(spec))) {
        violations.push(`${file.path} -> ${spec} (belongs to another layer than ${layer}/)`)
      }
    }
  }
  for (const folder of unknownFolders)
    violations.push(`${folder}/ is not a declared layer (add it to LAYERS or OUTSIDE_PRODUCT)`)
  return violations
}

/** Reads every `.ts` file under `root` (skipping node_modules and dot folders) as `SourceFile`s. */
function readTree(root: string, dir = root): SourceFile[] {
  const out: SourceFile[] = []
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) out.push(...readTree(root, full))
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) {
      out.push({
        path: path.relative(root, full).split(path.sep).join('/'),
        text: fs.readFileSync(full, 'utf8'),
      })
    }
  }
  return out
}

describe('architecture', () => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'lsreport-arch-'))
  afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }))

  test('behavior: every layer imports only the layers below it and its own packages', () => {
    const tree = readTree(ROOT)
    expect(tree.some((f) => f.path.startsWith('platform/'))).toBe(true)
    expect(layerViolations(tree)).toEqual([])
  })

  test('behavior: a planted wrong-way import fails the check', () => {
    const plant = (file: string, text: string) => {
      fs.mkdirSync(path.join(scratch, path.dirname(file)), { recursive: true })
      fs.writeFileSync(path.join(scratch, file), text)
    }
    plant('common/ok.ts', "import { x } from './other.ts'\n")
    plant('db/ok.ts', "import type { Logger } from '../common/logger.ts'\nimport knex from 'knex'\n")
    plant('platform/service.ts', "import { ApiError } from '../api/errors.ts'\n")
    plant('platform/moves.ts', "import { PERMISSION } from '../chain/abi.ts'\n")
    plant('engine/io.ts', "import fs from 'node:fs'\n")
    plant('db/lazy.ts', "const jobs = await import('../jobs/index.ts')\n")
    plant('api/cli-use.ts', "export { main } from '../cli/main.ts'\n")
    plant('api/sql.ts', "import pg from 'pg'\n")
    plant('jobs/side.ts', "import '../devnet/index.ts'\n")
    plant('platform/rules.test.ts', "import { devnet } from '../devnet/index.ts'\n")
    plant('scripts/run.ts', "import { x } from '../common/x.ts'\n")
    expect(layerViolations(readTree(scratch)).sort()).toEqual(
      [
        'api/cli-use.ts -> ../cli/main.ts (api/ may import api, metrics, platform, db, engine, common)',
        'api/sql.ts -> pg (belongs to another layer than api/)',
        'db/lazy.ts -> ../jobs/index.ts (db/ may import db, common)',
        'engine/io.ts -> node:fs (engine/ does no I/O)',
        'jobs/side.ts -> ../devnet/index.ts (jobs/ may import jobs, metrics, platform, chain, db, engine, common)',
        'platform/moves.ts -> ../chain/abi.ts (platform/ may import platform, db, common)',
        'platform/service.ts -> ../api/errors.ts (platform/ may import platform, db, common)',
        'scripts/ is not a declared layer (add it to LAYERS or OUTSIDE_PRODUCT)',
      ].sort(),
    )
  })

  test('behavior: api -> jobs, api -> chain and any import of bench/ fail the check (synthetic import lists)', () => {
    const file = (p: string, ...specs: string[]) => ({
      path: p,
      text: specs.map((spec) => `import { x } from '${spec}'\n`).join(''),
    })
    const files = [
      // wrong way
      file('api/routes/metrics.ts', '../../jobs/metrics/index.ts'),
      file('api/app.ts', '../chain/beacon.ts', '../metrics/index.ts', '../platform/webhooks/url-guard.ts'),
      { path: 'api/lazy.ts', text: "const { createJobs } = await import('../jobs/index.ts')\n" },
      file('cli/up.ts', '../bench/start.ts', '../jobs/index.ts'),
      file('jobs/seed.ts', '../bench/api-data.ts'),
      file('engine/bench-use.ts', '../bench/engine-wallets.ts'),
      file('metrics/queue.ts', '../jobs/runner.ts', '../common/queue.ts'),
      file('common/metrics.ts', '../metrics/index.ts'),
      file('platform/webhooks/deliver.ts', '../../jobs/webhooks/deliver.ts'),
      // right way: bench may import any folder, test helpers included
      file('bench/api.ts', '../api/app.ts', '../cli/main.ts', '../jobs/index.ts', '../test/helpers/api.ts'),
      file('jobs/webhooks/deliver.ts', '../../platform/webhooks/url-guard.ts', '../../metrics/index.ts'),
      // outside the product: not checked
      file('test/answer-memo.test.ts', '../bench/api-data.ts'),
    ]
    expect(layerViolations(files).sort()).toEqual(
      [
        'api/app.ts -> ../chain/beacon.ts (api/ may import api, metrics, platform, db, engine, common)',
        'api/lazy.ts -> ../jobs/index.ts (api/ may import api, metrics, platform, db, engine, common)',
        'api/routes/metrics.ts -> ../../jobs/metrics/index.ts (api/ may import api, metrics, platform, db, engine, common)',
        'cli/up.ts -> ../bench/start.ts (cli/ may import cli, api, jobs, metrics, platform, devnet, chain, db, engine, common)',
        'common/metrics.ts -> ../metrics/index.ts (common/ may import common)',
        'engine/bench-use.ts -> ../bench/engine-wallets.ts (engine/ may import engine)',
        'jobs/seed.ts -> ../bench/api-data.ts (jobs/ may import jobs, metrics, platform, chain, db, engine, common)',
        'metrics/queue.ts -> ../jobs/runner.ts (metrics/ may import metrics, db, common)',
        'platform/webhooks/deliver.ts -> ../../jobs/webhooks/deliver.ts (platform/ may import platform, db, common)',
      ].sort(),
    )
  })

  test('behavior: no other layer lists bench/, only bench lists cli/, and api/ lists neither jobs/ nor chain/', () => {
    const lists = (folder: string) =>
      Object.entries(LAYERS)
        .filter(([name, rule]) => name !== folder && (rule.folders === '*' || rule.folders.includes(folder)))
        .map(([name]) => name)
    expect(lists('bench')).toEqual([])
    expect(lists('cli')).toEqual(['bench'])
    expect(LAYERS.api?.folders).toEqual(['api', 'metrics', 'platform', 'db', 'engine', 'common'])
  })

  test('behavior: every top-level folder is a layer or listed as outside the product', () => {
    const folders = fs
      .readdirSync(ROOT, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && !entry.name.startsWith('.'))
      .map((entry) => entry.name)
    expect(folders.length).toBeGreaterThan(0)
    expect(folders.filter((name) => !LAYERS[name] && !OUTSIDE_PRODUCT.has(name))).toEqual([])
  })

  test('behavior: only common/config.ts reads process.env among service code (cli/ and bench/ entrypoints pass it in)', () => {
    const entrypoints = new Set(['cli', 'bench'])
    const readers = readTree(ROOT)
      .filter((f) => {
        const layer = f.path.split('/')[0]!
        return !entrypoints.has(layer) && LAYERS[layer] && !f.path.endsWith('.test.ts')
      })
      .filter((f) => f.path !== 'common/config.ts' && /process\.env\b/.test(f.text))
      .map((f) => f.path)
    expect(readers).toEqual([])
  })
})
