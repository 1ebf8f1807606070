// The CLI's conventions as a shell script sees them: --version, exit 2 on usage errors, one JSON object per
// line on stdout with --json, a record for a person without it.
import { execFile } from 'node:child_process'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { ENGINE_VERSION } from '../engine/index.ts'
import packageJson from '../package.json' with { type: 'json' }
import { cli, cliFails, cliText } from './helpers/cli.ts'
import { createTestDatabase, postgresAvailable } from './helpers/services.ts'

const BIN = path.resolve(import.meta.dirname, '../bin/lsreport.mjs')
const run = promisify(execFile)

let dataDir: string
let env: Record<string, string>

beforeAll(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lsreport-cli-'))
  env = { DATA_DIR: dataDir, LOG_LEVEL: 'warn' }
})
afterAll(() => fs.rm(dataDir, { recursive: true, force: true }))

describe('lsreport CLI conventions', () => {
  test('behavior: --version and -V print the package and engine versions and exit 0', async () => {
    for (const flag of ['--version', '-V']) {
      const { stdout } = await run(process.execPath, [BIN, flag])
      expect(stdout.trim()).toBe(`${packageJson.version} (engine ${ENGINE_VERSION})`)
    }
  })

  test('behavior: usage errors exit 2 with a message; help exits 0', async () => {
    const cases: [string[], RegExp][] = [
      [['no-such-command'], /unknown command 'no-such-command'/],
      [['migrate', '--no-such-option'], /unknown option '--no-such-option'/],
      [['orgs', 'create'], /required option '--name <name>' not specified/],
      [['orgs', 'create', '--name', '  '], /--name <name>.*must not be empty/],
      [
        ['clients', 'create', '--org', 'org_x', '--scopes', 'read:everything'],
        /unknown scope\(s\): read:everything/,
      ],
      [
        ['backfill', '--from', '2026-04-02', '--to', '2026-04-01'],
        /--from 2026-04-02 is after --to 2026-04-01/,
      ],
      [['sync', '--interval', 'soon'], /expected a whole number/],
    ]
    for (const [args, message] of cases) {
      const failed = await cliFails(args, env)
      expect({ args, code: failed.code }).toEqual({ args, code: 2 })
      expect(failed.stderr).toMatch(message)
    }
    const { stdout } = await run(process.execPath, [BIN, 'orgs', '--help'])
    expect(stdout).toContain('Usage: lsreport orgs')
  })

  test('behavior: admin commands print a record for a person, one JSON line with --json', async () => {
    const stdout = await cliText(['orgs', 'create', '--name', 'Human Readable'], env)
    const [heading, ...fields] = stdout.trimEnd().split('\n')
    expect(heading).toBe('organization created')
    expect(fields.find((l) => l.trim().startsWith('name:'))).toMatch(/name:\s+Human Readable$/)
    expect(fields.find((l) => l.trim().startsWith('id:'))).toMatch(/id:\s+org_/)

    const json = await cliText(['orgs', 'create', '--name', 'Machine', '--json'], env)
    expect(json.endsWith('\n')).toBe(true)
    expect(json.trimEnd().split('\n')).toHaveLength(1)
    expect(JSON.parse(json)).toMatchObject({ name: 'Machine', id: expect.stringMatching(/^org_/) })

    const org = await cli<{ id: string }>(['orgs', 'create', '--name', 'Clients', '--json'], env)
    const client = await cli<{ client_id: string }>(
      ['clients', 'create', '--org', org.id, '--scopes', 'read:platform', '--json'],
      env,
    )
    const secret = await cliText(['clients', 'add-secret', client.client_id], env)
    expect(secret).toMatch(
      /^secret added \(shown this once\)\n\s+client_id:\s+\S+\n\s+client_secret:\s+\S+\n$/,
    )
  })

  test('behavior: migrate on a fresh Postgres database lists what it applied, then nothing', async () => {
    expect(await postgresAvailable()).toBe(true)
    const database = await createTestDatabase()
    try {
      const pg = { ...env, DATABASE_URL: database.url }
      const first = await cli<{ backend: string; applied: string[] }>(['migrate'], pg)
      expect(first.backend).toBe('postgres')
      expect(first.applied[0]).toMatch(/^001_/)
      expect(first.applied.length).toBeGreaterThanOrEqual(15)
      expect((await cli<{ applied: string[] }>(['migrate'], pg)).applied).toEqual([])
    } finally {
      await database.drop()
    }
  })
})
