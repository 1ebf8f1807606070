import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { API_CSP, DOCS_PREFIX, docsCsp } from '../api/plugins/security-headers.ts'
import { orgWithToken, startTestApi, type TestApi } from './helpers/api.ts'
import { findChromium, openPage, tryItOut } from './helpers/browser.ts'
import { IN_CI } from './helpers/services.ts'

const chromium = findChromium()
if (!chromium && IN_CI) {
  throw new Error('chromium not found (CHROMIUM_PATH, /usr/bin/chromium): apt-get install -y chromium')
}
if (!chromium) console.warn('chromium not found: the /docs CSP browser test is skipped (it fails under CI)')

let api: TestApi
let token: string
/** The base URL the OpenAPI document names (BASE_URL): the /docs policy lets the page call it. */
let baseUrl: string
beforeAll(async () => {
  api = await startTestApi('pglite')
  ;({ token } = await orgWithToken(api, { scopes: 'read:platform write:platform' }))
  const doc = (await (await fetch(`${api.url}${DOCS_PREFIX}/json`)).json()) as { servers: { url: string }[] }
  baseUrl = doc.servers[0]!.url
})
afterAll(async () => {
  await api?.close()
})

/** A Content-Security-Policy header as directive -> sources. */
function parseCsp(header: string | null): Record<string, string[]> {
  const policy: Record<string, string[]> = {}
  for (const directive of (header ?? '').split(';')) {
    const [name, ...sources] = directive.trim().split(/\s+/)
    if (name) policy[name] = sources
  }
  return policy
}

/** The headers every answer carries (helmet's defaults as configured in api/plugins/security-headers.ts). */
function expectSecurityHeaders(res: Response, csp: Record<string, string[]>): void {
  expect(parseCsp(res.headers.get('content-security-policy'))).toEqual(csp)
  expect(res.headers.get('x-frame-options')).toBe('DENY')
  expect(res.headers.get('x-content-type-options')).toBe('nosniff')
  expect(res.headers.get('strict-transport-security')).toMatch(/^max-age=\d{8,}; includeSubDomains$/)
  expect(res.headers.get('referrer-policy')).toBe('no-referrer')
  expect(res.headers.get('cross-origin-opener-policy')).toBe('same-origin')
  expect(res.headers.get('cross-origin-resource-policy')).toBe('same-origin')
  expect(res.headers.get('x-permitted-cross-domain-policies')).toBe('none')
  expect(res.headers.get('x-powered-by')).toBeNull()
}

describe('security headers over HTTP', () => {
  test('behavior: JSON answers carry them with a policy that loads nothing and allows no framing', async () => {
    const health = await fetch(`${api.url}/health`)
    expect(health.status).toBe(200)
    expect(health.headers.get('content-type')).toMatch(/^application\/json/)
    expectSecurityHeaders(health, API_CSP)
    const accounts = await fetch(`${api.url}/v0/platform/accounts`, {
      headers: { authorization: `Bearer ${token}` },
    })
    expect(accounts.status).toBe(200)
    expectSecurityHeaders(accounts, API_CSP)
    // the request id hook still runs alongside
    expect(accounts.headers.get('x-request-id')).toBeTruthy()
  })

  test('behavior: error answers (404, 401, 400, 415) carry them too, with their catalog body', async () => {
    const answers = [
      [await fetch(`${api.url}/no/such/route`), 404, 'IR1004'],
      [await fetch(`${api.url}/v0/platform/accounts`), 401, 'IR2000'],
      [
        await fetch(`${api.url}/v0/platform/accounts`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: '{"key":',
        }),
        400,
        'IR1001',
      ],
      [
        await fetch(`${api.url}/v0/platform/accounts`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'text/plain' },
          body: 'key',
        }),
        415,
        'IR1003',
      ],
    ] as const
    for (const [res, http, code] of answers) {
      expect(res.status).toBe(http)
      expect(((await res.json()) as { status: string }).status).toBe(code)
      expectSecurityHeaders(res, API_CSP)
    }
  })

  test('behavior: /docs, its assets and its document carry the Swagger UI policy', async () => {
    const page = await fetch(`${api.url}${DOCS_PREFIX}`)
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toMatch(/^text\/html/)
    expectSecurityHeaders(page, docsCsp(baseUrl))
    for (const asset of [
      'static/swagger-ui.css',
      'static/swagger-ui-bundle.js',
      'static/swagger-initializer.js',
      'json',
    ]) {
      const res = await fetch(`${api.url}${DOCS_PREFIX}/${asset}`)
      expect(res.status, asset).toBe(200)
      expectSecurityHeaders(res, docsCsp(baseUrl))
    }
    // the page itself has no inline script or style (the Swagger UI adds one style: allowed by its hash)
    const html = await page.text()
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>|<style\b|\sstyle=/i)
  })
})

describe.skipIf(!chromium)('/docs under its policy in a real browser (headless Chromium)', () => {
  test('behavior: the page renders and "Try it out" works with no violation; a call elsewhere is blocked', async () => {
    const page = await openPage(chromium!)
    try {
      await page.addInitScript(
        "window.__violations = []; document.addEventListener('securitypolicyviolation', (e) => " +
          "window.__violations.push(e.violatedDirective + ' ' + e.blockedURI))",
      )
      await page.navigate(`${api.url}${DOCS_PREFIX}`)
      await page.waitFor("document.querySelector('.swagger-ui .btn.authorize')", 'the Swagger UI')
      // its stylesheets were applied (a blocked one has no rules in the page)
      const sheets = await page.evaluate<number[]>(
        "[...document.styleSheets].filter((s) => s.href && s.href.includes('/static/')).map((s) => s.cssRules.length)",
      )
      expect(sheets.length).toBeGreaterThanOrEqual(2)
      for (const rules of sheets) expect(rules).toBeGreaterThan(0)
      // the logo (a data: URL) was drawn
      await page.waitFor("document.querySelector('.topbar img')?.naturalWidth > 0", 'the logo')

      // GET /health: open it, "Try it out", "Execute" (a call from the page: connect-src)
      const { status } = await tryItOut(page, '/health')
      expect(status).toBe('200')
      expect(await page.evaluate<string[]>('window.__violations')).toEqual([])

      // the policy is in force: a call to another origin is refused by the browser, and reported
      const elsewhere = 'http://127.0.0.1:9/elsewhere'
      const refused = await page.evaluate<boolean>(`fetch('${elsewhere}').then(() => false, () => true)`)
      expect(refused).toBe(true)
      await page.waitFor('window.__violations.length > 0', 'the violation report')
      expect(await page.evaluate<string[]>('window.__violations')).toEqual([`connect-src ${elsewhere}`])
    } finally {
      await page.close()
    }
  })
})
