/**
 * A PGlite cluster made ahead (`db/pglite/template.tar.br`): initdb, then the migrations of the time. A
 * fresh embedded database starts from a copy instead of running initdb and those migrations: initdb in
 * PGlite runs a second Postgres instance in WebAssembly (~5 s of CPU, ~500 MB of memory the process keeps
 * afterwards) and the migrations take ~2 s more, against ~0.1 s and nothing kept for the copy. Migrations
 * added since are applied on top as usual.
 *
 * `npx tsx db/pglite-template.ts` rewrites the template. It is used only when it was made by the installed
 * PGlite and its migrations are, byte for byte, the first ones of `db/migrations`; otherwise the database
 * is made by initdb as before, and `pglite-template.test.ts` fails until the template is rewritten.
 */
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { brotliCompressSync, brotliDecompressSync, constants as zlib } from 'node:zlib'
import { PGlite } from '@electric-sql/pglite'
import { PGLITE_START_PARAMS, pgliteKnex } from './embedded.ts'
import { migrate } from './migrate.ts'
import { migrationSource } from './migrations/index.ts'

const here = path.dirname(fileURLToPath(import.meta.url))
export const TEMPLATE_PATH = path.join(here, 'pglite', 'template.tar.br')
export const TEMPLATE_INFO_PATH = path.join(here, 'pglite', 'template.json')

/** What made the template: the PGlite version (its catalog must match the running one) and the migrations. */
export interface TemplateInfo {
  pglite: string
  pg_version: string
  /** the migrations applied in the template, with the sha256 of their source file */
  migrations: { name: string; sha256: string }[]
}

/** The migrations of `db/migrations`, in order, with the sha256 of each source file. */
export async function currentMigrations(): Promise<TemplateInfo['migrations']> {
  const list = await migrationSource.getMigrations([])
  return list.map((migration) => {
    const name = migrationSource.getMigrationName(migration)
    const source = readFileSync(path.join(here, 'migrations', `${name}.ts`))
    return { name, sha256: createHash('sha256').update(source).digest('hex') }
  })
}

/**
 * Why the template cannot serve the installed PGlite and the current migrations, or undefined when it can.
 *
 * @example
 * await templateProblem() // 'made by PGlite 0.5.15, installed 0.5.16'
 */
export async function templateProblem(info = readTemplateInfo()): Promise<string | undefined> {
  if (!info) return 'no template'
  const installed = pgliteVersion()
  if (info.pglite !== installed) return `made by PGlite ${info.pglite}, installed ${installed}`
  const current = await currentMigrations()
  for (const [i, made] of info.migrations.entries()) {
    const now = current[i]
    if (now?.name !== made.name || now.sha256 !== made.sha256) {
      return `its migration ${made.name} is not the current ${now?.name ?? 'list'} byte for byte`
    }
  }
  return undefined
}

/** The installed PGlite's version (from its package.json). */
export function pgliteVersion(): string {
  const entry = fileURLToPath(import.meta.resolve('@electric-sql/pglite'))
  const pkg = JSON.parse(readFileSync(path.resolve(path.dirname(entry), '..', 'package.json'), 'utf8'))
  return (pkg as { version: string }).version
}

/** The template's description, or undefined when there is none. */
export function readTemplateInfo(): TemplateInfo | undefined {
  try {
    return JSON.parse(readFileSync(TEMPLATE_INFO_PATH, 'utf8')) as TemplateInfo
  } catch {
    return undefined
  }
}

/**
 * The template as a tar archive, when it was made by the installed PGlite (else undefined).
 *
 * @example
 * const tar = templateTar() // for `new PGlite({ loadDataDir: new Blob([tar]) })`
 */
export async function templateTar(): Promise<Buffer | undefined> {
  if (await templateProblem()) return undefined
  try {
    return brotliDecompressSync(readFileSync(TEMPLATE_PATH))
  } catch {
    return undefined
  }
}

/**
 * Makes `dir` (missing or empty) a copy of the template, when the template was made by the installed PGlite:
 * extracted beside it, then renamed, so a crash never leaves half a cluster. Returns false, writing
 * nothing, when there is no usable template or `dir` holds files.
 *
 * @example
 * if (!seedFromTemplate('./data/pg')) { ...PGlite runs initdb... }
 */
export async function seedFromTemplate(dir: string): Promise<boolean> {
  if (existsSync(dir) && readdirSync(dir).length > 0) return false
  const tar = await templateTar()
  if (!tar) return false
  const staging = `${dir}.seeding-${process.pid}`
  rmSync(staging, { recursive: true, force: true })
  extractTar(tar, staging)
  rmSync(dir, { recursive: true, force: true })
  renameSync(staging, dir)
  return true
}

/**
 * Extracts a ustar archive of directories and regular files (what PGlite's `dumpDataDir` writes) into
 * `dir`, keeping the modes.
 */
export function extractTar(tar: Buffer, dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const text = (start: number, length: number) => {
    const field = tar.subarray(start, start + length)
    const end = field.indexOf(0)
    return field.subarray(0, end === -1 ? length : end).toString('utf8')
  }
  const octal = (start: number, length: number) => Number.parseInt(text(start, length).trim() || '0', 8)
  let offset = 0
  while (offset + 512 <= tar.length) {
    if (tar[offset] === 0) break // end of archive: zero blocks
    const name = text(offset + 0, 100)
    const mode = octal(offset + 100, 8) & 0o777
    const size = octal(offset + 124, 12)
    const type = String.fromCharCode(tar[offset + 156] ?? 0)
    const prefix = text(offset + 345, 155)
    const relative = path.posix.normalize(`${prefix ? `${prefix}/` : ''}${name}`).replace(/^\/+/, '')
    if (relative.split('/').includes('..')) throw new Error(`tar entry outside the directory: ${relative}`)
    const target = path.join(dir, relative)
    offset += 512
    if (type === '5') {
      mkdirSync(target, { recursive: true, mode: mode || 0o700 })
    } else if (type === '0' || type === '\0') {
      mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 })
      writeFileSync(target, tar.subarray(offset, offset + size), { mode: mode || 0o600 })
    } else {
      throw new Error(`unexpected tar entry type ${JSON.stringify(type)} for ${relative}`)
    }
    offset += Math.ceil(size / 512) * 512
  }
}

/** Makes a cluster with the installed PGlite, applies the migrations, writes the template and its description. */
export async function writeTemplate(): Promise<TemplateInfo> {
  const pg = new PGlite({ startParams: PGLITE_START_PARAMS })
  await pg.waitReady
  const db = pgliteKnex(pg)
  const applied = await migrate(db)
  await db.destroy()
  const version = await pg.query<{ server_version: string }>('show server_version')
  await pg.exec('checkpoint')
  const dump = await pg.dumpDataDir('none')
  await pg.close()
  const tar = Buffer.from(await dump.arrayBuffer())
  const compressed = brotliCompressSync(tar, {
    params: {
      [zlib.BROTLI_PARAM_QUALITY]: 11,
      // a window large enough to see the three near-identical databases (template0, template1, postgres)
      [zlib.BROTLI_PARAM_LGWIN]: 24,
      [zlib.BROTLI_PARAM_SIZE_HINT]: tar.length,
    },
  })
  const migrations = (await currentMigrations()).filter((m) => applied.includes(m.name))
  const info: TemplateInfo = {
    pglite: pgliteVersion(),
    pg_version: version.rows[0]?.server_version ?? '',
    migrations,
  }
  mkdirSync(path.dirname(TEMPLATE_PATH), { recursive: true })
  writeFileSync(TEMPLATE_PATH, compressed)
  writeFileSync(TEMPLATE_INFO_PATH, `${JSON.stringify(info, null, 2)}\n`)
  return info
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const started = performance.now()
  void writeTemplate().then((info) => {
    console.log(
      `wrote ${path.relative(process.cwd(), TEMPLATE_PATH)} (PGlite ${info.pglite}, Postgres ${info.pg_version}, ` +
        `migrations ${info.migrations.map((m) => m.name).join(' ')}) in ${Math.round(performance.now() - started)} ms`,
    )
  })
}
