import { randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, test } from 'vitest'
import { clientToken, freePort, http } from './helpers/api.ts'
import { cli, cliOrgClient, spawnCli, TEST_SIGNING_KEY_SECRET } from './helpers/cli.ts'
import { createTestDatabase, postgresAvailable, REDIS_URL, redisAvailable } from './helpers/services.ts'

const ready = (await postgresAvailable()) && (await redisAvailable())
const cleanups: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const c of cleanups.reverse()) await c()
})

describe('production topology: lsreport devnet + worker (BullMQ on Redis) + api on Postgres', () => {
  test.runIf(ready)(
    'behavior: a wallet created through the API is allowlisted by the worker, and `lsreport sync` reports the ingested days',
    async () => {
      const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lsreport-prod-'))
      cleanups.push(() => fs.rm(dataDir, { recursive: true, force: true }))
      const devnetFile = path.join(dataDir, 'devnet.json')
      const devnet = await spawnCli(
        ['devnet', '--days', '5', '--wallets', '20', '--day-interval', '0'],
        { DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
        async () => (await fs.stat(devnetFile).catch(() => undefined)) !== undefined,
      )
      cleanups.push(devnet.stop)
      const info = JSON.parse(await fs.readFile(devnetFile, 'utf8'))

      const database = await createTestDatabase()
      cleanups.push(database.drop)
      const port = await freePort()
      const base = `http://127.0.0.1:${port}`
      const env = {
        DATA_DIR: dataDir,
        DATABASE_URL: database.url,
        SIGNING_KEY_SECRET: TEST_SIGNING_KEY_SECRET,
        REDIS_URL,
        QUEUE_PREFIX: `t${randomBytes(4).toString('hex')}`,
        RPC_URL: info.rpc_url,
        CHAIN: 'devnet',
        PORT: String(port),
        LOG_LEVEL: 'warn',
      }
      expect(await cli<{ backend: string }>(['migrate'], env)).toMatchObject({ backend: 'postgres' })
      const synced = await cli<{ reports: string[] }>(['sync'], env)
      expect(synced.reports).toHaveLength(5)
      const { client } = await cliOrgClient(env, 'Prod Org')
      const worker = await spawnCli(['worker'], env, async () => true)
      cleanups.push(worker.stop)
      const api = await spawnCli(['api'], env, async () => (await fetch(`${base}/ready`)).status === 200)
      cleanups.push(api.stop)

      const call = http(base, await clientToken(base, client))
      await call('POST', '/v0/platform/accounts', { key: 'prod-1' })
      const address = '0x00000000000000000000000000000000000b0b00'
      expect(
        (await call('POST', '/v0/platform/accounts/prod-1/wallets', { address, type: 'ETH' })).body.status,
      ).toBe('NOT_READY')
      const deadline = Date.now() + 60_000
      let status = ''
      while (status !== 'ALLOWLISTED') {
        if (Date.now() > deadline) throw new Error(`wallet still ${status}\n${worker.output()}`)
        await new Promise((r) => setTimeout(r, 250))
        status = (await call('GET', `/v0/platform/wallets/${address}`)).body.status
      }
      expect(status).toBe('ALLOWLISTED')
    },
  )
})
