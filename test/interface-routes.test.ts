import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { startTestApi, type TestApi } from './helpers/api.ts'
import { INTERFACE_ROUTES } from './helpers/interface-routes.ts'

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
