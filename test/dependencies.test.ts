import { execFile } from 'node:child_process'
import fs from 'node:fs'
import { builtinModules } from 'node:module'
import path from 'node:path'
import { promisify } from 'node:util'
import ts from 'typescript'
import { describe, expect, test } from 'vitest'
import { type ImportKind, type ImportRef, importsOf } from './helpers/imports.ts'

/**
 * package.json against the code (issue 25): every `dependencies` entry is imported at run time by product code,
 * every `devDependencies` entry is used by something, every imported package is declared, and the product
 * code imports no dev dependency statically outside the embedded/devnet path (a production install,
 * `npm ci --omit=dev`, has none of them). Imports are read with the TypeScript compiler's parser.
 */

const ROOT = path.resolve(import.meta.dirname, '..')
const PACKAGE = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  scripts: Record<string, string>
  dependencies: Record<string, string>
  devDependencies: Record<string, string>
}

/** Folders that hold no source of ours (dependencies, git-ignored outputs, generated artifacts). */
const SKIPPED = new Set(['node_modules', 'data', 'coverage', 'scratch', 'results', 'build'])
const SOURCE = /\.(ts|mts|cts|js|mjs|cjs)$/

/** Every source file (.ts, .mjs, .js and kin) under `root` outside node_modules, as repository paths. */
function sourceFiles(root: string, dir = root): string[] {
  const out: string[] = []
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (SKIPPED.has(entry.name) || entry.name.startsWith('.')) continue
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) out.push(...sourceFiles(root, full))
    else if (SOURCE.test(entry.name)) out.push(path.relative(root, full).split(path.sep).join('/'))
  }
  return out
}

const BUILTINS = new Set(builtinModules)

/** The package a specifier names (`@scope/name/sub` -> `@scope/name`), or undefined for files and builtins. */
function packageOf(spec: string): string | undefined {
  if (spec.startsWith('.') || spec.startsWith('/') || spec.startsWith('#') || spec.startsWith('node:')) return
  const parts = spec.split('/')
  const name = spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!
  return BUILTINS.has(name) ? undefined : name
}

/** Tests, benchmarks, fixtures, tools and configs: the rest is product code (what a user runs). */
function isProduct(file: string): boolean {
  const top = file.split('/')[0]!
  if (!file.includes('/')) return false
  return !['test', 'bench', 'fixtures', 'tools', 'docs'].includes(top) && !/\.test\.[cm]?[jt]s$/.test(file)
}

/** The service's layers (STYLE.md "Shape"): what `npm ci --omit=dev` must be able to load. */
const SERVICE_LAYERS = new Set([
  'api',
  'cli',
  'common',
  'db',
  'engine',
  'jobs',
  'platform',
  'metrics',
  'chain',
])

/**
 * The files that may import a dev dependency statically, because the service loads them only through
 * `import()`: the embedded start (PGlite: db/index.ts imports these when DATABASE_URL is unset, and a production
 * install stops with MissingDevDependencyError, common/dev-dependency.ts) and the devnet (anvil, solc: `lsreport
 * up` without RPC_URL). A service file that loads one of them with itself, directly or through its own static
 * imports, is reported.
 */
const DEV_STATIC_IMPORT_ALLOWED = ['db/embedded.ts', 'db/pglite-template.ts', 'devnet/']
const devImportAllowed = (file: string) =>
  DEV_STATIC_IMPORT_ALLOWED.some((allowed) =>
    allowed.endsWith('/') ? file.startsWith(allowed) : file === allowed,
  )

/**
 * What loading each service file loads with it, from its static imports: one line per (service file,
 * file reached) that imports a dev dependency statically, with the chain of static imports between them.
 */
function staticDevImports(refs: ImportRef[], isDev: (name: string) => boolean): string[] {
  const localTargets = new Map<string, string[]>()
  const devImports = new Map<string, string[]>()
  for (const ref of refs) {
    if (ref.kind !== 'static') continue
    if (ref.spec.startsWith('.')) {
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(ref.file), ref.spec))
      localTargets.set(ref.file, [...(localTargets.get(ref.file) ?? []), target])
    } else {
      const name = packageOf(ref.spec)
      if (name !== undefined && isDev(name))
        devImports.set(ref.file, [...(devImports.get(ref.file) ?? []), name])
    }
  }
  const problems: string[] = []
  const starts = [...new Set(refs.map((ref) => ref.file))].filter(
    (file) => SERVICE_LAYERS.has(file.split('/')[0]!) && isProduct(file) && !devImportAllowed(file),
  )
  for (const start of starts) {
    // breadth first: the shortest chain of static imports to each file loaded with `start`
    const via = new Map<string, string[]>([[start, [start]]])
    const queue = [start]
    for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
      for (const name of devImports.get(file) ?? []) {
        problems.push(`${via.get(file)!.join(' -> ')} imports the devDependency ${name} statically`)
      }
      for (const target of localTargets.get(file) ?? []) {
        if (via.has(target)) continue
        via.set(target, [...via.get(file)!, target])
        queue.push(target)
      }
    }
  }
  return problems
}

/**
 * Dev dependencies nothing imports and no package.json script runs, with where they are used. Each reason
 * names the file that uses it: the test checks that file mentions the package or its command.
 */
const DEV_USED_ELSEWHERE: Record<string, { file: string; why: string }> = {
  '@foundry-rs/anvil': {
    file: 'devnet/anvil.ts',
    why: 'its binary is resolved from its platform package @foundry-rs/anvil-<platform>-<arch>, a computed name',
  },
}

/** What a package installs as commands (its package.json `bin`). */
function binsOf(pkg: string): string[] {
  const manifest = JSON.parse(
    fs.readFileSync(path.join(ROOT, 'node_modules', pkg, 'package.json'), 'utf8'),
  ) as {
    name: string
    bin?: string | Record<string, string>
  }
  if (manifest.bin === undefined) return []
  return typeof manifest.bin === 'string' ? [manifest.name.split('/').pop()!] : Object.keys(manifest.bin)
}

/** The commands package.json scripts run (each word at the start of a command, after `npx`). */
function scriptCommands(scripts: Record<string, string>): Set<string> {
  const commands = new Set<string>()
  for (const script of Object.values(scripts)) {
    for (const command of script.split(/&&|\|\||;|\|/)) {
      const words = command.trim().split(/\s+/)
      commands.add(words[0] === 'npx' ? words[1]! : words[0]!)
    }
  }
  return commands
}

/** The `compilerOptions.types` of tsconfig.json (JSON with comments allowed). */
function tsconfigTypes(): string[] {
  const { config } = ts.readConfigFile(path.join(ROOT, 'tsconfig.json'), ts.sys.readFile)
  return (config?.compilerOptions?.types as string[] | undefined) ?? []
}

/** The package `@types/x` describes (`@types/scope__name` -> `@scope/name`). */
function typedPackage(typesPackage: string): string {
  const name = typesPackage.slice('@types/'.length)
  return name.includes('__') ? `@${name.replace('__', '/')}` : name
}

/** The findings of the checks, one line each (empty: package.json and the code agree). */
function dependencyProblems(
  refs: ImportRef[],
  pkg: {
    scripts: Record<string, string>
    dependencies: Record<string, string>
    devDependencies: Record<string, string>
  },
  options: {
    bins: (name: string) => string[]
    typesInTsconfig: string[]
    usedElsewhere: Record<string, { file: string; why: string }>
    mentions: (file: string, words: string[]) => boolean
  },
): string[] {
  const problems: string[] = []
  const deps = new Set(Object.keys(pkg.dependencies))
  const devDeps = new Set(Object.keys(pkg.devDependencies))
  const withPackage = refs.flatMap((ref) => {
    const name = ref.kind === 'command' ? undefined : packageOf(ref.spec)
    return name === undefined ? [] : [{ ...ref, name }]
  })

  for (const ref of withPackage) {
    if (!deps.has(ref.name) && !devDeps.has(ref.name))
      problems.push(`${ref.file} imports undeclared ${ref.name}`)
  }

  const runtimeInProduct = new Set(
    withPackage.filter((ref) => ref.kind !== 'type' && isProduct(ref.file)).map((ref) => ref.name),
  )
  for (const name of deps) {
    if (!runtimeInProduct.has(name))
      problems.push(`dependency ${name} is not imported by product code (a devDependency, or unused?)`)
  }

  const imported = new Set(withPackage.map((ref) => ref.name))
  const commands = scriptCommands(pkg.scripts)
  for (const ref of refs) if (ref.kind === 'command') commands.add(ref.spec)
  for (const name of devDeps) {
    if (imported.has(name)) continue
    if (options.bins(name).some((bin) => commands.has(bin))) continue
    if (name.startsWith('@types/')) {
      const typed = typedPackage(name)
      if (imported.has(typed) || options.typesInTsconfig.includes(typed)) continue
    }
    const elsewhere = options.usedElsewhere[name]
    if (elsewhere && options.mentions(elsewhere.file, [name, ...options.bins(name)])) continue
    problems.push(
      `devDependency ${name} is used by nothing (no import, command run, types of an import, allowlist)`,
    )
  }

  problems.push(...staticDevImports(refs, (name) => devDeps.has(name) && !deps.has(name)))
  return problems
}

const mentions = (file: string, words: string[]) => {
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8')
  return words.some((word) => text.includes(word))
}

describe('dependencies', () => {
  const files = sourceFiles(ROOT)
  const refs = files.flatMap((file) => importsOf(file, fs.readFileSync(path.join(ROOT, file), 'utf8')))

  test('behavior: package.json and the imports agree (declared, used, no static dev import in the service)', () => {
    expect(files).toContain('bin/lsreport.mjs')
    expect(files).toContain('vitest.config.ts')
    expect(refs.length).toBeGreaterThan(1_000)
    expect(
      dependencyProblems(refs, PACKAGE, {
        bins: binsOf,
        typesInTsconfig: tsconfigTypes(),
        usedElsewhere: DEV_USED_ELSEWHERE,
        mentions,
      }),
    ).toEqual([])
  })

  test('behavior: every allowlisted dev dependency is declared and still needs the allowlist', () => {
    for (const [name, { file }] of Object.entries(DEV_USED_ELSEWHERE)) {
      expect(PACKAGE.devDependencies[name], name).toBeDefined()
      expect(mentions(file, [name, ...binsOf(name)]), `${file} mentions ${name}`).toBe(true)
      // not imported nor run by a script: else the entry is not needed
      expect(refs.some((ref) => packageOf(ref.spec) === name)).toBe(false)
      expect(binsOf(name).some((bin) => scriptCommands(PACKAGE.scripts).has(bin))).toBe(false)
    }
  })

  test('behavior: the parser reads every form of import, and planted mistakes are each reported', () => {
    const text = [
      "import a from 'static-pkg'",
      "import type { B } from 'type-pkg'",
      "import { type C, d } from 'mixed-pkg/sub'",
      "export { e } from '@scope/exported/deep'",
      "export type { F } from 'type-export-pkg'",
      "import fs from 'node:fs'",
      "import path from 'path'",
      "import { g } from './local.ts'",
      "const h = await import('dynamic-pkg')",
      "const i = require('required-pkg')",
      "const j = import.meta.resolve('resolved-pkg')",
      "type K = typeof import('import-type-pkg')",
      "// import nope from 'in-a-comment'",
      'const text = "import nope from \'in-a-string\'"',
      "await run('npx', ['lint-cli', 'lint'])",
      "execFileSync('npx other-cli --check')",
      "spawn(path.join(ROOT, 'node_modules', '.bin', 'third-cli'), [])",
      "await execFile('node_modules/.bin/fourth-cli', ['x'])",
      "fetch('not-a-command')",
    ].join('\n')
    const found = importsOf('api/sample.ts', text)
      .filter((ref) => ref.kind === 'command' || packageOf(ref.spec) !== undefined)
      .map((ref) => `${ref.kind} ${ref.spec}`)
    expect(found).toEqual([
      'static static-pkg',
      'type type-pkg',
      'static mixed-pkg/sub',
      'static @scope/exported/deep',
      'type type-export-pkg',
      'dynamic dynamic-pkg',
      'dynamic required-pkg',
      'dynamic resolved-pkg',
      'type import-type-pkg',
      'command lint-cli',
      'command other-cli',
      'command third-cli',
      'command fourth-cli',
    ])

    const ref = (file: string, spec: string, kind: ImportKind = 'static'): ImportRef => ({ file, spec, kind })
    const planted = dependencyProblems(
      [
        ref('api/app.ts', 'fastify'),
        ref('api/app.ts', 'undeclared-pkg'),
        ref('api/app.ts', 'types-only-dep', 'type'),
        ref('test/x.test.ts', 'test-only-dep'),
        ref('jobs/x.ts', 'dev-tool'),
        ref('jobs/x.test.ts', 'dev-tool'),
        ref('db/embedded.ts', 'dev-db'),
        ref('db/index.ts', './embedded.ts', 'dynamic'),
        ref('db/repos.ts', './embedded.ts'),
        ref('api/types.ts', 'dev-db', 'type'),
        ref('devnet/anvil.ts', 'dev-chain'),
        ref('devnet/index.ts', './anvil.ts'),
        ref('cli/setup.ts', '../devnet/index.ts'),
        ref('cli/lazy.ts', '../devnet/index.ts', 'dynamic'),
        ref('bench/api.ts', 'bench-tool'),
        ref('vitest.config.ts', 'vitest/config'),
        ref('api/db.ts', 'typed'),
        ref('test/lint.test.ts', 'lint-cli', 'command'),
      ],
      {
        scripts: { check: 'runner-cli check && npx other-cli lint' },
        dependencies: { fastify: '1', 'types-only-dep': '1', 'test-only-dep': '1', typed: '1' },
        devDependencies: {
          'dev-tool': '1',
          'dev-db': '1',
          'dev-chain': '1',
          'bench-tool': '1',
          vitest: '1',
          'runner-pkg': '1',
          'other-pkg': '1',
          'lint-pkg': '1',
          '@types/typed': '1',
          '@types/node': '1',
          '@types/orphan': '1',
          'allowlisted-pkg': '1',
          'stale-allowlisted-pkg': '1',
          'forgotten-pkg': '1',
        },
      },
      {
        bins: (name) =>
          ({ 'runner-pkg': ['runner-cli'], 'other-pkg': ['other-cli'], 'lint-pkg': ['lint-cli'] })[name] ??
          [],
        typesInTsconfig: ['node'],
        usedElsewhere: {
          'allowlisted-pkg': { file: 'config.json', why: 'configured there' },
          'stale-allowlisted-pkg': { file: 'config.json', why: 'no longer there' },
        },
        mentions: (_file, words) => words.includes('allowlisted-pkg'),
      },
    )
    expect(planted.sort()).toEqual(
      [
        'api/app.ts imports undeclared undeclared-pkg',
        'dependency test-only-dep is not imported by product code (a devDependency, or unused?)',
        'dependency types-only-dep is not imported by product code (a devDependency, or unused?)',
        'devDependency @types/orphan is used by nothing (no import, command run, types of an import, allowlist)',
        'devDependency forgotten-pkg is used by nothing (no import, command run, types of an import, allowlist)',
        'devDependency stale-allowlisted-pkg is used by nothing (no import, command run, types of an import, allowlist)',
        'jobs/x.ts imports the devDependency dev-tool statically',
        'db/repos.ts -> db/embedded.ts imports the devDependency dev-db statically',
        'cli/setup.ts -> devnet/index.ts -> devnet/anvil.ts imports the devDependency dev-chain statically',
      ].sort(),
    )
  })

  test('behavior: `npm ls --omit=dev` finds nothing missing, extraneous or invalid', async () => {
    const { stdout } = await promisify(execFile)('npm', ['ls', '--omit=dev', '--all', '--json'], {
      cwd: ROOT,
      maxBuffer: 64 * 2 ** 20,
    }).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? '{}' }))
    const tree = JSON.parse(stdout) as { problems?: string[]; dependencies?: Record<string, unknown> }
    expect(tree.problems ?? []).toEqual([])
    expect(Object.keys(tree.dependencies ?? {}).sort()).toEqual(Object.keys(PACKAGE.dependencies).sort())
  })
})
