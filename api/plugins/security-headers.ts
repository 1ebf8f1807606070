import helmet from '@fastify/helmet'
import type { FastifyInstance } from 'fastify'

/** Where the Swagger UI lives (api/plugins/docs.ts): its pages get the policy a browser page needs. */
export const DOCS_PREFIX = '/docs'

/**
 * The Content-Security-Policy of every answer but /docs: an API answer is data, never a page, so nothing
 * may load from it, nothing may frame it (the OWASP REST recommendation).
 */
export const API_CSP = {
  'default-src': ["'none'"],
  'base-uri': ["'none'"],
  'form-action': ["'none'"],
  'frame-ancestors': ["'none'"],
}

/**
 * The one inline style of the Swagger UI: the `<style>` of its logo's SVG (swagger-ui-standalone-preset.js,
 * `.logo_small_svg__cls-2{fill:#fff}.logo_small_svg__cls-3{fill:#85ea2d}`), allowed by its SHA-256. Should
 * a new Swagger UI change it, test/security-headers.test.ts sees the browser report the violation.
 */
const SWAGGER_LOGO_STYLE = "'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='"

/**
 * The Content-Security-Policy of the Swagger UI pages under /docs: its scripts, styles and fonts from this
 * server only (the page has no inline script; its one inline style is allowed by hash), its logo and icons from data: URLs, "Try it out"
 * calls to this server and to the base URL the OpenAPI document names (BASE_URL, when the API is browsed at
 * another address, e.g. behind a proxy). No `upgrade-insecure-requests`: a service reached over plain HTTP
 * (a local start) would break its own page.
 *
 * @example
 * docsCsp('https://reports.example')['connect-src'] // ["'self'", 'https://reports.example']
 */
export function docsCsp(baseUrl: string): Record<string, string[]> {
  return {
    'default-src': ["'self'"],
    'base-uri': ["'self'"],
    'connect-src': ["'self'", new URL(baseUrl).origin],
    'font-src': ["'self'", 'data:'],
    'form-action': ["'self'"],
    'frame-ancestors': ["'none'"],
    'img-src': ["'self'", 'data:'],
    'object-src': ["'none'"],
    'script-src': ["'self'"],
    'script-src-attr': ["'none'"],
    'style-src': ["'self'", SWAGGER_LOGO_STYLE],
  }
}

/**
 * Security headers on every answer (@fastify/helmet, set in an onRequest hook: JSON answers, errors, 404s,
 * 429s and /metrics alike): helmet's defaults (HSTS, X-Content-Type-Options nosniff, Referrer-Policy
 * no-referrer, Cross-Origin-Opener/Resource-Policy same-origin, ...) with X-Frame-Options DENY, `API_CSP`,
 * and `docsCsp` on the Swagger UI routes. Register it first: it must see the /docs routes being added.
 * What is answered before any hook runs has none: Node's own 431, 408 and malformed-HTTP answers and
 * Fastify's bad-URL answers (api/plugins/error-handlers.ts).
 *
 * @example
 * await registerSecurityHeaders(app, { baseUrl: 'https://reports.example' })
 */
export async function registerSecurityHeaders(
  app: FastifyInstance,
  { baseUrl }: { baseUrl: string },
): Promise<void> {
  const docs = { contentSecurityPolicy: { useDefaults: false, directives: docsCsp(baseUrl) } }
  // before helmet's own onRoute hook, which reads the route's `helmet` option
  app.addHook('onRoute', (route) => {
    if (route.url === DOCS_PREFIX || route.url.startsWith(`${DOCS_PREFIX}/`)) route.helmet = docs
  })
  await app.register(helmet, {
    global: true,
    contentSecurityPolicy: { useDefaults: false, directives: API_CSP },
    xFrameOptions: { action: 'deny' },
  })
}
