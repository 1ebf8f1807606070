import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, test } from 'vitest'
import { freePort, http } from './helpers/api.ts'
import { spawnCli } from './helpers/cli.ts'

const cleanups: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const c of cleanups.reverse()) await c()
})

describe('lsreport up (embedded default)', () => {
  test('behavior: brings the API up on PGlite, writes demo credentials that obtain a working token, and reuses them on restart', async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lsreport-up-'))
    cleanups.push(() => fs.rm(dataDir, { recursive: true, force: true }))
    const port = await freePort()
    const base = `http://127.0.0.1:${port}`
    const env = { DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'info' }
    const ready = async () => (await fetch(`${base}/ready`)).status === 200
    const first = await spawnCli(['up'], env, ready, 120_000)
    cleanups.push(first.stop)
    const demoFile = path.join(dataDir, 'demo-client.json')
    const demo = JSON.parse(await fs.readFile(demoFile, 'utf8'))
    expect(first.output()).toContain(demoFile)
    expect(demo).toMatchObject({ token_url: `${base}/oauth/token`, audience: base })
    const token = await http(base)('POST', '/oauth/token', {
      grant_type: 'client_credentials',
      audience: base,
      client_id: demo.client_id,
      client_secret: demo.client_secret,
    })
    expect(token.status).toBe(200)
    const created = await http(base, token.body.access_token)('POST', '/v0/platform/accounts', {
      key: 'demo-user',
    })
    expect(created.status).toBe(201)
    await first.stop()

    const second = await spawnCli(['up'], env, ready, 120_000)
    cleanups.push(second.stop)
    const again = JSON.parse(await fs.readFile(demoFile, 'utf8'))
    expect(again.client_id).toBe(demo.client_id)
    const token2 = await http(base)('POST', '/oauth/token', {
      grant_type: 'client_credentials',
      audience: base,
      client_id: again.client_id,
      client_secret: again.client_secret,
    })
    const list = await http(base, token2.body.access_token)('GET', '/v0/platform/accounts')
    expect(list.body.map((a: { key: string }) => a.key)).toEqual(['demo-user'])
  })
})
