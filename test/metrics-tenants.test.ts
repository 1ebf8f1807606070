import { describe, expect, test } from 'vitest'
import { loadConfig } from '../common/config.ts'
import { ConfigError } from '../common/errors.ts'
import { createServiceMetrics, type SharedCollector, sourceGauge } from '../metrics/index.ts'
import { http, orgWithToken, pgliteAppsOfFile, type TestApi } from './helpers/api.ts'
import { scrape } from './helpers/prometheus.ts'

/**
 * Issue 36, item 6 (labels): /metrics names no tenant by default. Organizations, clients and webhooks exist
 * (one subscription paused, so a per-organization series would have a value), clients made requests; by
 * default no label of any series is `org_id` or `client_id` and no org or client id appears anywhere in the
 * exposition; with METRICS_TENANT_LABELS=1 the per-organization series appears.
 */

const startApi = pgliteAppsOfFile()

/** Two tenants, each with a client that made requests and a webhook; the first tenant's webhook paused. */
async function tenants(api: TestApi) {
  const made = []
  for (const name of ['Tenant A', 'Tenant B']) {
    const t = await orgWithToken(api, { name })
    const call = http(api.url, t.token)
    expect((await call('GET', '/v0/platform/accounts')).status).toBe(200)
    const hook = await call('POST', '/v1/webhooks', {
      url: 'https://93.184.215.14/hook',
      events: ['day.finalized'],
    })
    expect(hook.status).toBe(201)
    made.push({ ...t, webhookId: hook.body.id as string })
  }
  // the circuit breaker's pause (done by the delivery worker), set on the row
  await api.dbh.db('webhooks').where({ id: made[0]?.webhookId }).update({ paused_at: new Date() })
  return made
}

describe('tenant identifiers on /metrics', () => {
  test('behavior: by default no series carries org_id or client_id and no tenant id appears; METRICS_TENANT_LABELS=1 shows paused subscriptions per organization', async () => {
    const api = await startApi()
    const made = await tenants(api)
    const text = await (await fetch(`${api.url}/metrics`)).text()
    expect(text).toMatch(/^lsreport_webhook_subscriptions\{status="paused"\} 1$/m)
    expect(text).not.toMatch(/[{,](org_id|client_id)="/)
    for (const t of made) {
      expect(text).not.toContain(t.orgId)
      expect(text).not.toContain(t.clientId)
    }

    const labelled = await startApi({ METRICS_TENANT_LABELS: '1' })
    const exposition = await scrape(labelled.url)
    const [paused, active] = made
    expect(exposition.value('lsreport_webhook_paused_subscriptions', { org_id: paused!.orgId })).toBe(1)
    expect(
      exposition.value('lsreport_webhook_paused_subscriptions', { org_id: active!.orgId }),
    ).toBeUndefined()
  })

  test('behavior: a gauge labelled with a tenant is refused unless the setting is on; the setting takes 0 or 1', () => {
    const perOrg: SharedCollector = (scope) => {
      sourceGauge(
        scope,
        {
          name: 'lsreport_test_per_org',
          help: 'a per-organization figure',
          labelNames: ['org_id'],
          load: async () => 1,
        },
        (n, set) => set({ org_id: 'org_x' }, n),
      )
    }
    const db = {} as Parameters<typeof createServiceMetrics>[0]['db']
    expect(() => createServiceMetrics({ db, confirmations: 0, extra: [perOrg] })).toThrow(
      /lsreport_test_per_org: a series labelled org_id needs METRICS_TENANT_LABELS=1/,
    )
    expect(() =>
      createServiceMetrics({ db, confirmations: 0, extra: [perOrg], tenantLabels: true }),
    ).not.toThrow()

    expect(loadConfig({}).metricsTenantLabels).toBe(false)
    expect(loadConfig({ METRICS_TENANT_LABELS: '1' }).metricsTenantLabels).toBe(true)
    expect(() => loadConfig({ METRICS_TENANT_LABELS: 'yes' })).toThrow(ConfigError)
  })
})
