import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { ACCESS_LOG_MAX_URL } from '../api/request-log.ts'
import { createLogger } from '../common/logger.ts'
import { postHalfABodyAndClose } from './helpers/abort.ts'
import { orgWithToken, startTestApi, type TestApi } from './helpers/api.ts'

// The API's access log (api/request-log.ts): one line per request when it ends, at the service's default level.
describe('request log', () => {
  let api: TestApi | undefined
  let dir: string | undefined
  afterEach(async () => {
    await api?.close()
    if (dir) await fs.rm(dir, { recursive: true, force: true })
    api = undefined
    dir = undefined
  })

  async function logLines(level: string, send: (url: string, api: TestApi) => Promise<void>) {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lsreport-log-'))
    const file = path.join(dir, 'api.log')
    api = await startTestApi('pglite', {}, { logger: createLogger({ level, destination: file }) })
    await send(api.url, api)
    await api.close()
    api = undefined
    const text = await fs.readFile(file, 'utf8').catch(() => '')
    return text
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>)
  }

  it('writes one line per request when it is answered, with its request id, route and status', async () => {
    let caller = { clientId: '', orgId: '' }
    const lines = await logLines('info', async (url, api) => {
      const { token, clientId, orgId } = await orgWithToken(api)
      caller = { clientId, orgId }
      await fetch(`${url}/v0/platform/accounts`, {
        headers: { 'x-request-id': 'accounts-1', authorization: `Bearer ${token}` },
      })
      await fetch(`${url}/health`, { headers: { 'x-request-id': 'health-1' } })
      await fetch(`${url}/no/such/route?x=1`, { headers: { 'x-request-id': 'missing-1' } })
      await fetch(`${url}/no/such/route?q=${'a'.repeat(10_000)}`, { headers: { 'x-request-id': 'long-1' } })
      await fetch(`${url}/v0/platform/accounts`, {
        method: 'POST',
        headers: { 'x-request-id': 'unauthorized-1', 'content-type': 'application/json' },
        body: '{',
      })
    })
    const answered = lines.filter((l) => l.msg === 'request answered' && l.url !== '/oauth/token')
    expect(answered.map((l) => [l.request_id, l.method, l.url, l.route, l.status_code])).toEqual([
      ['accounts-1', 'GET', '/v0/platform/accounts', '/v0/platform/accounts', 200],
      ['health-1', 'GET', '/health', '/health', 200],
      ['missing-1', 'GET', '/no/such/route?x=1', 'unmatched', 404],
      ['long-1', 'GET', `/no/such/route?q=${'a'.repeat(ACCESS_LOG_MAX_URL - 17)}`, 'unmatched', 404],
      ['unauthorized-1', 'POST', '/v0/platform/accounts', '/v0/platform/accounts', 401],
    ])
    // who asked, once the token was verified
    expect(answered[0]).toMatchObject({ client_id: caller.clientId, org_id: caller.orgId })
    expect(answered.slice(1).map((l) => l.client_id ?? null)).toEqual([null, null, null, null])
    // a long URL is cut, and says so
    expect(answered.map((l) => l.url_truncated ?? false)).toEqual([false, false, false, true, false])
    for (const line of answered) {
      expect(line.level).toBe(30)
      expect(typeof line.response_ms).toBe('number')
      expect(line.response_ms as number).toBeGreaterThanOrEqual(0)
    }
    // Fastify's own two lines per request are off
    expect(lines.filter((l) => l.msg === 'incoming request' || l.msg === 'request completed')).toEqual([])
  })

  it('writes the request id once in each line of a request: its error line and its access line', async () => {
    const lines = await logLines('info', async (url, api) => {
      const { token } = await orgWithToken(api)
      // the route's table gone: its query fails, a 500 with its "request failed" line
      await api.dbh.db.raw('alter table accounts rename to accounts_gone')
      await fetch(`${url}/v0/platform/accounts`, {
        headers: { 'x-request-id': 'failed-1', authorization: `Bearer ${token}` },
      })
    })
    const failed = lines.filter((l) => l.request_id === 'failed-1')
    expect(failed.map((l) => [l.msg, l.level, l.status_code])).toEqual([
      ['request failed', 50, undefined],
      ['request answered', 30, 500],
    ])
    // (JSON.parse keeps the last of two equal keys: the text holds each line's id once)
    const text = await fs.readFile(path.join(dir as string, 'api.log'), 'utf8')
    const raw = text.split('\n').filter((line) => line.includes('failed-1'))
    expect(raw.map((line) => line.split('"request_id"').length - 1)).toEqual([1, 1])
  })

  it('writes "request aborted" for a request whose client went away before it was answered', async () => {
    let clientOfToken = ''
    const lines = await logLines('info', async (url, api) => {
      const { token, clientId } = await orgWithToken(api)
      clientOfToken = clientId
      await postHalfABodyAndClose(url, '/v0/platform/accounts', {
        'x-request-id': 'gone-1',
        authorization: `Bearer ${token}`,
      })
      await new Promise((resolve) => setTimeout(resolve, 200))
    })
    const gone = lines.filter((l) => l.request_id === 'gone-1')
    expect(gone.map((l) => [l.msg, l.level, l.method, l.url, l.route, l.client_id])).toEqual([
      ['request aborted', 30, 'POST', '/v0/platform/accounts', '/v0/platform/accounts', clientOfToken],
    ])
  })

  it('never writes the values of secret query parameters (access_token, client_secret, ...): they read [redacted]', async () => {
    const lines = await logLines('info', async (url, api) => {
      const { token } = await orgWithToken(api)
      const get = (target: string, headers: Record<string, string> = {}) =>
        fetch(`${url}${target}`, { headers: { authorization: `Bearer ${token}`, ...headers } })
      await fetch(`${url}/health?access_token=SECRET-A1&x=1`, { headers: { 'x-request-id': 'health-q' } })
      await fetch(`${url}/v0/platform/accounts?client_secret=SECRET-B2`)
      await get('/v0/platform/accounts?limit=1&Token=SECRET-C3&password=SECRET-D4')
      await get('/no/such/route?api_key=SECRET-E5&refresh_token=SECRET-F6&code=SECRET-G7')
      await get('/health?%61ccess_token=SECRET-H8&secret=SECRET-I9')
      await get(`/health?q=${'a'.repeat(ACCESS_LOG_MAX_URL - 20)}&access_token=SECRET-J10`)
      await fetch(`${url}/oauth/token?client_secret=SECRET-K11`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"grant_type":"client_credentials"}',
      })
      // a failing request writes an error line and its access line
      await api.dbh.db.raw('alter table accounts rename to accounts_gone')
      await get('/v0/platform/accounts?access_token=SECRET-L12', { 'x-request-id': 'failed-q' })
      await postHalfABodyAndClose(url, '/v0/platform/accounts?access_token=SECRET-M13', {
        'x-request-id': 'gone-q',
      })
      await new Promise((resolve) => setTimeout(resolve, 200))
    })
    const text = await fs.readFile(path.join(dir as string, 'api.log'), 'utf8')
    expect(text).not.toContain('SECRET-')
    const url = (id: string) => lines.find((l) => l.request_id === id && l.url !== undefined)?.url
    expect(url('health-q')).toBe('/health?access_token=[redacted]&x=1')
    expect(url('failed-q')).toBe('/v0/platform/accounts?access_token=[redacted]')
    expect(url('gone-q')).toBe('/v0/platform/accounts?access_token=[redacted]')
    // every line but the long URL's (cut before its redacted token) shows where a secret was
    expect(lines.filter((l) => String(l.url).includes('[redacted]')).length).toBe(8)
  })

  it('writes nothing per request below info', async () => {
    const lines = await logLines('warn', async (url) => {
      for (let i = 0; i < 5; i++) await fetch(`${url}/health`)
    })
    expect(lines).toEqual([])
  })
})
