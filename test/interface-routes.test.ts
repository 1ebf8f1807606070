import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { startTestApi, type TestApi } from './helpers/api.ts'

/** Every endpoint of the interface (../shared/seed/000_ff745646c6529ccc.txt), plus the discount rate history. */
const INTERFACE_ROUTES = [
  'POST /oauth/token',
  'POST /v0/platform/accounts',
  'GET /v0/platform/accounts',
  'GET /v0/platform/accounts/{idOrKey}',
  'PATCH /v0/platform/accounts/{idOrKey}/remove',
  'PATCH /v0/platform/accounts/{idOrKey}/pause',
  'PATCH /v0/platform/accounts/{idOrKey}/reactivate',
  'POST /v0/platform/accounts/{idOrKey}/discount_rate',
  'GET /v0/platform/accounts/{idOrKey}/discount_rate',
  'GET /v0/platform/wallets/{idOrAddress}',
  'GET /v0/platform/wallets',
  'POST /v0/platform/accounts/{idOrKey}/wallets',
  'GET /v0/platform/accounts/{idOrKey}/wallets',
  'PATCH /v0/platform/accounts/{idOrKey}/wallets/{idOrAddress}/remove',
  'PATCH /v0/platform/accounts/{idOrKey}/wallets/{idOrAddress}/pause',
  'PATCH /v0/platform/accounts/{idOrKey}/wallets/{idOrAddress}/reactivate',
  'PATCH /v0/depositors/{idOrKey}/wallets/{idOrAddress}/remove',
  'GET /sol/v0/allowlist/{address}',
  'POST /sol/v0/allowlist',
  'GET /eth/v1/redeems',
  'GET /eth/v1/redeems/{idx}',
  'GET /eth/v1/redeems/{idx}/projection',
  'GET /eth/v1/redeems_info',
  'GET /eth/v1/redeems_info/projection',
  'GET /eth/v1/validators/queue',
  'GET /eth/v0/redeems',
  'GET /eth/v0/redeems/{idx}',
  'GET /eth/v0/redeems/{idx}/projection',
  'GET /eth/v0/redeems_info',
  'GET /eth/v0/redeems_info/projection',
  'POST /eth/v1/rewards',
  'POST /eth/v1/rewards/accounts',
  'POST /eth/v1/rewards/wallets',
  'GET /eth/v1/rewards/accounts/{idOrKey}/summary',
  'GET /eth/v1/rewards/wallets/{idOrKey}/summary',
  'GET /eth/v1/platforms/{date}',
  'GET /eth/v1/originators/{date}',
  'GET /eth/v1/operators/{date}',
  'POST /eth/v0/rewards/accounts',
  'GET /eth/v0/rewards/accounts/{idOrKey}/summary',
  'GET /eth/v0/rewards/wallets/{idOrKey}/summary',
  'GET /eth/v0/protocol/{date}',
  'GET /eth/v0/platforms/{date}',
  'GET /eth/v0/operators/{date}',
]

describe('the interface in the served OpenAPI document', () => {
  let api: TestApi
  beforeAll(async () => {
    api = await startTestApi('pglite')
  })
  afterAll(async () => {
    await api?.close()
  })

  test('behavior: every endpoint of the interface is served and documented', async () => {
    const res = await api.app.inject({ method: 'GET', url: '/docs/json' })
    const paths = res.json().paths as Record<string, Record<string, unknown>>
    const served = Object.entries(paths).flatMap(([p, ops]) =>
      Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`),
    )
    expect(INTERFACE_ROUTES.filter((r) => !served.includes(r))).toEqual([])
  })

  test('behavior: a reporting read before any computed day is 404 IR4000 with a clear message', async () => {
    const res = await api.app.inject({ method: 'GET', url: '/eth/v0/protocol/2026-05-01' })
    expect(res.statusCode).toBe(404)
    expect(res.json()).toEqual({
      message: 'no computed report for 2026-05-01: no report has been computed yet',
      status: 'IR4000',
    })
  })
})
