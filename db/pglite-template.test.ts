import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { migrate, openDb } from './index.ts'
import { pgliteVersion, readTemplateInfo, seedFromTemplate, templateProblem } from './pglite-template.ts'

describe('PGlite template', () => {
  test('behavior: the committed template serves the installed PGlite and the current migrations', async () => {
    // if this fails (a PGlite upgrade, an edited migration): run `npx tsx db/pglite-template.ts`, commit db/pglite/
    expect(await templateProblem()).toBeUndefined()
  })

  test('behavior: a template of another PGlite, or holding an edited migration, is not used', async () => {
    const info = readTemplateInfo()!
    expect(await templateProblem({ ...info, pglite: '0.0.1' })).toMatch(/made by PGlite 0\.0\.1/)
    const edited = { name: '001_platform', sha256: '0'.repeat(64) }
    expect(await templateProblem({ ...info, pglite: pgliteVersion(), migrations: [edited] })).toMatch(
      /001_platform is not the current/,
    )
    // a migration added after the template is applied on top: still usable
    expect(await templateProblem({ ...info, migrations: info.migrations.slice(0, -1) })).toBeUndefined()
  })

  test('behavior: a fresh data directory starts from the template, with the migrations, and reopens', async () => {
    const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'lsreport-tpl-')), 'pg')
    try {
      const first = await openDb({ pgliteDir: dir })
      expect(first.created).toBe('template')
      expect(await migrate(first.db)).toEqual([]) // the template holds every migration
      const settings = await first.db.raw('show shared_buffers')
      expect(settings.rows[0].shared_buffers).toBe('16MB')
      const schedules = await first.db('fee_schedules').count({ n: '*' })
      expect(Number(schedules[0]?.n)).toBeGreaterThan(0) // seeded by a migration
      await first.close()
      const second = await openDb({ pgliteDir: dir })
      expect(second.created).toBe('existing')
      expect(await migrate(second.db)).toEqual([])
      await second.close()
      expect(await seedFromTemplate(dir)).toBe(false) // never over an existing cluster
    } finally {
      fs.rmSync(path.dirname(dir), { recursive: true, force: true })
    }
  })
})
