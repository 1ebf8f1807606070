import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, test } from 'vitest'
import { importsOf } from './helpers/imports.ts'
import { readTree, type SourceFile } from './helpers/source-tree.ts'

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
 * The one-way order of STYLE.md "Shape", lowest first: fields (the computed records' field names, pure data
 * that engine and db both read: one list for the math and the columns) ; engine (pure math) ; common ; chain and db (side by
 * side, each over common) ; metrics (the service's Prometheus figures, over db: the shared state's reads,
 * BullMQ's counts loaded lazily, never a worker) and platform (account, wallet and webhook-URL rules over db,
 * no ABI, no HTTP), side by side ; jobs (chain, db, engine, platform and metrics meet) ; api (reads db, calls
 * engine, platform and metrics: never jobs nor chain, so no request reaches the chain or the consensus
 * node) ; cli on top. devnet (anvil and the protocol simulator) sits beside them over chain and common; only
 * cli uses it. bench (benchmarks) may import anything, test helpers included. Nothing imports cli or bench
 * (no folder lists them but bench, for cli). clients (the typed client packages, clients/typescript) stand
 * apart: they talk to the API over HTTP only, so they import no other folder, and no package but the ones
 * their own package.json declares (openapi-fetch; no `node:` module: the client runs in browsers too).
 */
const LAYERS: Record<string, LayerRule> = {
  fields: { folders: ['fields'], onlyPackages: /(?!)/ },
  engine: { folders: ['engine', 'fields'], onlyPackages: /^(decimal\.js|date-fns)(\/|$)/ },
  common: { folders: ['common'], forbiddenPackages: anyOf(HTTP, SQL, QUEUE) },
  chain: { folders: ['chain', 'common'], forbiddenPackages: anyOf(HTTP, SQL, QUEUE) },
  db: { folders: ['db', 'common', 'fields'], forbiddenPackages: anyOf(HTTP, QUEUE, CHAIN_CLIENT) },
  metrics: {
    folders: ['metrics', 'db', 'common', 'fields'],
    forbiddenPackages: anyOf(HTTP, SQL, CHAIN_CLIENT),
  },
  platform: {
    folders: ['platform', 'db', 'common', 'fields'],
    forbiddenPackages: anyOf(HTTP, SQL, QUEUE, CHAIN_CLIENT),
  },
  jobs: {
    folders: ['jobs', 'metrics', 'platform', 'chain', 'db', 'engine', 'common', 'fields'],
    forbiddenPackages: anyOf(HTTP, SQL),
  },
  api: {
    folders: ['api', 'metrics', 'platform', 'db', 'engine', 'common', 'fields'],
    forbiddenPackages: anyOf(SQL, QUEUE),
  },
  devnet: { folders: ['devnet', 'chain', 'common'], forbiddenPackages: anyOf(HTTP, SQL, QUEUE) },
  cli: {
    folders: [
      'cli',
      'api',
      'jobs',
      'metrics',
      'platform',
      'devnet',
      'chain',
      'db',
      'engine',
      'common',
      'fields',
    ],
    forbiddenPackages: anyOf(HTTP, SQL),
  },
  bench: { folders: '*' },
  clients: { folders: ['clients'], onlyPackages: /^openapi-fetch(\/|$)/ },
}

/**
 * Top-level folders outside the product, not checked: tests, fixtures (golden vectors and their scripts),
 * tooling, the bin shim and docs may import any layer; node_modules and the git-ignored outputs (data/, the
 * default DATA_DIR; coverage/; scratch/; dist/, the bundle of `npm run build`) hold no source of ours.
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
  'dist',
])

/** Files at the top of the repository any layer may read as data (`lsreport --version` reads package.json). */
const TOP_LEVEL_DATA = new Set(['package.json'])

/** Every module a file imports (static, type-only, dynamic): test/helpers/imports.ts, the TypeScript parser. */
function importsOfFile(file: SourceFile): string[] {
  return importsOf(file.path, file.text)
    .filter((ref) => ref.kind !== 'command')
    .map((ref) => ref.spec)
}

/** The package name of a bare specifier (`@scope/name` or `name`). */
function packageName(spec: string): string {
  const parts = spec.split('/')
  return spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!
}

/** The top-level folder a relative import of `file` reaches. */
function targetFolder(file: SourceFile, spec: string): string {
  return path.posix.normalize(path.posix.join(path.posix.dirname(file.path), spec)).split('/')[0]!
}

/**
 * Checks the layer rules over a list of files (tests, `*.test.ts`, are exempt: unit tests beside the code may
 * use devnet and test helpers). Returns one line per wrong-way import, `file -> spec (why)`, and one per
 * top-level folder that is neither a layer nor a folder outside the product. bench/ is the top layer for
 * everyone: no file outside it imports it, tests, test helpers, fixtures and tools included (what a test
 * shares with a benchmark lives in test/helpers/, which bench imports).
 */
function layerViolations(files: SourceFile[], layers: Record<string, LayerRule> = LAYERS): string[] {
  const violations: string[] = []
  const unknownFolders = new Set<string>()
  for (const file of files) {
    const layer = file.path.includes('/') ? file.path.split('/')[0]! : ''
    // a product file's imports of bench/ are wrong by its layer's rule below; any other file's by this one
    const byLayerRule = !file.path.endsWith('.test.ts') && layers[layer] !== undefined
    if (layer !== 'bench' && !byLayerRule) {
      for (const spec of importsOfFile(file)) {
        if (spec.startsWith('.') && targetFolder(file, spec) === 'bench')
          violations.push(`${file.path} -> ${spec} (only bench/ may import bench/)`)
      }
    }
    if (file.path.endsWith('.test.ts')) continue
    if (!file.path.includes('/')) continue
    const rule = layers[layer]
    if (!rule) {
      if (!OUTSIDE_PRODUCT.has(layer)) unknownFolders.add(layer)
      continue
    }
    for (const spec of importsOfFile(file)) {
      if (spec.startsWith('.')) {
        const target = targetFolder(file, spec)
        if (TOP_LEVEL_DATA.has(target)) continue
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
    plant('test/seed.test.ts', "import { seedRewardsDay } from '../bench/api-data.ts'\n")
    plant('test/helpers/seed.ts', "export { seedRewardsDay } from '../../bench/api-data.ts'\n")
    plant('api/routes/load.test.ts', "const { run } = await import('../../bench/load.ts')\n")
    plant('bench/api.ts', "import { seedRewardsDay } from '../test/helpers/rewards-day.ts'\n")
    plant('bench/load.test.ts', "import { run } from './load.ts'\n")
    plant('fields/derived.ts', "import { CUMULATIVE_FIELDS } from '../engine/wallet-record.ts'\n")
    plant('fields/lib.ts', "import Decimal from 'decimal.js'\n")
    plant('engine/columns.ts', "import { FEE_TOTAL_FIELDS } from '../fields/record-fields.ts'\n")
    expect(layerViolations(readTree(scratch)).sort()).toEqual(
      [
        'api/cli-use.ts -> ../cli/main.ts (api/ may import api, metrics, platform, db, engine, common, fields)',
        'fields/derived.ts -> ../engine/wallet-record.ts (fields/ may import fields)',
        'fields/lib.ts -> decimal.js (not allowed in fields/)',
        'api/sql.ts -> pg (belongs to another layer than api/)',
        'db/lazy.ts -> ../jobs/index.ts (db/ may import db, common, fields)',
        'engine/io.ts -> node:fs (engine/ does no I/O)',
        'jobs/side.ts -> ../devnet/index.ts (jobs/ may import jobs, metrics, platform, chain, db, engine, common, fields)',
        'platform/moves.ts -> ../chain/abi.ts (platform/ may import platform, db, common, fields)',
        'platform/service.ts -> ../api/errors.ts (platform/ may import platform, db, common, fields)',
        'scripts/ is not a declared layer (add it to LAYERS or OUTSIDE_PRODUCT)',
        'test/seed.test.ts -> ../bench/api-data.ts (only bench/ may import bench/)',
        'test/helpers/seed.ts -> ../../bench/api-data.ts (only bench/ may import bench/)',
        'api/routes/load.test.ts -> ../../bench/load.ts (only bench/ may import bench/)',
      ].sort(),
    )
  })

  test('behavior: api -> jobs, api -> chain and any import of bench/ (tests included) fail the check (synthetic import lists)', () => {
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
      file('clients/typescript/src/index.ts', '../../../api/schemas.ts', 'fastify'),
      // right way: bench may import any folder, test helpers included
      file('bench/api.ts', '../api/app.ts', '../cli/main.ts', '../jobs/index.ts', '../test/helpers/api.ts'),
      file('jobs/webhooks/deliver.ts', '../../platform/webhooks/url-guard.ts', '../../metrics/index.ts'),
      file('clients/typescript/examples/run.ts', '../src/index.ts', 'openapi-fetch'),
      // outside the product: not checked by layer, but no test, fixture nor tool may import bench/
      file(
        'test/answer-memo.test.ts',
        '../bench/api-data.ts',
        '../jobs/index.ts',
        './helpers/rewards-day.ts',
      ),
      file('fixtures/engine/make.ts', '../../bench/engine-wallets.ts'),
      file('vitest.config.ts', './bench/v8-flags.ts'),
    ]
    expect(layerViolations(files).sort()).toEqual(
      [
        'api/app.ts -> ../chain/beacon.ts (api/ may import api, metrics, platform, db, engine, common, fields)',
        'api/lazy.ts -> ../jobs/index.ts (api/ may import api, metrics, platform, db, engine, common, fields)',
        'api/routes/metrics.ts -> ../../jobs/metrics/index.ts (api/ may import api, metrics, platform, db, engine, common, fields)',
        'clients/typescript/src/index.ts -> ../../../api/schemas.ts (clients/ may import clients)',
        'clients/typescript/src/index.ts -> fastify (not allowed in clients/)',
        'cli/up.ts -> ../bench/start.ts (cli/ may import cli, api, jobs, metrics, platform, devnet, chain, db, engine, common, fields)',
        'common/metrics.ts -> ../metrics/index.ts (common/ may import common)',
        'engine/bench-use.ts -> ../bench/engine-wallets.ts (engine/ may import engine, fields)',
        'jobs/seed.ts -> ../bench/api-data.ts (jobs/ may import jobs, metrics, platform, chain, db, engine, common, fields)',
        'metrics/queue.ts -> ../jobs/runner.ts (metrics/ may import metrics, db, common, fields)',
        'platform/webhooks/deliver.ts -> ../../jobs/webhooks/deliver.ts (platform/ may import platform, db, common, fields)',
        'test/answer-memo.test.ts -> ../bench/api-data.ts (only bench/ may import bench/)',
        'fixtures/engine/make.ts -> ../../bench/engine-wallets.ts (only bench/ may import bench/)',
        'vitest.config.ts -> ./bench/v8-flags.ts (only bench/ may import bench/)',
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
    expect(LAYERS.api?.folders).toEqual(['api', 'metrics', 'platform', 'db', 'engine', 'common', 'fields'])
  })

  test('behavior: every top-level folder is a layer or listed as outside the product', () => {
    const folders = fs
      .readdirSync(ROOT, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && !entry.name.startsWith('.'))
      .map((entry) => entry.name)
    expect(folders.length).toBeGreaterThan(0)
    expect(folders.filter((name) => !LAYERS[name] && !OUTSIDE_PRODUCT.has(name))).toEqual([])
  })

  test('behavior: only common/config.ts reads process.env among service code (cli/ and bench/ entrypoints pass it in; clients/ is no service code)', () => {
    const entrypoints = new Set(['cli', 'bench', 'clients'])
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
