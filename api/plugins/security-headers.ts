import helmet from '@fastify/helmet'
import Fastify, { type FastifyInstance, type onRequestHookHandler } from 'fastify'
import { keepAnswerHeadersFast } from './header-shapes.ts'

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

/** Registers @fastify/helmet on `app` as the service configures it: `API_CSP`, and `docsCsp` on the /docs routes. */
async function registerHelmet(app: FastifyInstance, baseUrl: string): Promise<void> {
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

/** A header set as [name, value] pairs, in the order they are set. */
type HeaderSet = readonly (readonly [string, string])[]

/**
 * The headers helmet sets on an API answer and on a /docs answer, worked out once: a throwaway Fastify instance
 * with helmet registered as the service does (`registerHelmet`) answers one request of each kind, and its
 * headers, less those the same instance without helmet answers, are the sets. helmet's headers depend on its
 * options alone here (no nonces, no directive computed per request), so they are the same on every answer.
 */
async function helmetHeaderSets(baseUrl: string): Promise<{ api: HeaderSet; docs: HeaderSet }> {
  const answerHeaders = async (withHelmet: boolean, url: string) => {
    const probe = Fastify()
    if (withHelmet) await registerHelmet(probe, baseUrl)
    probe.get('/', async () => '')
    probe.get(DOCS_PREFIX, async () => '')
    const res = await probe.inject({ method: 'GET', url })
    await probe.close()
    return res.headers
  }
  const own = new Set(Object.keys(await answerHeaders(false, '/')))
  const set = async (url: string): Promise<HeaderSet> =>
    Object.entries(await answerHeaders(true, url))
      .filter(([name]) => !own.has(name))
      .map(([name, value]) => [name, String(value)] as const)
  return { api: await set('/'), docs: await set(DOCS_PREFIX) }
}

/** Whether a route is one of the Swagger UI's (its pages get `docsCsp`). */
function isDocsRoute(url: string | undefined): boolean {
  return url !== undefined && (url === DOCS_PREFIX || url.startsWith(`${DOCS_PREFIX}/`))
}

/**
 * A callback onRequest hook setting `set` on the reply and removing the headers `removed`. On the reply's own
 * headers, not on the raw response: Node writes headers set on the raw response through its slow path (each
 * header of the answer then goes through `setHeader` and its validation once more when the head is written),
 * ~6 µs a request on the 1-address read (bench:api). Writing over a name already set keeps its place.
 */
function setHeadersHook(set: HeaderSet, removed: readonly string[] = []): onRequestHookHandler {
  const names = set.map(([name]) => name)
  const values = set.map(([, value]) => value)
  return (_request, reply, done) => {
    for (let i = 0; i < names.length; i++) reply.header(names[i] as string, values[i])
    for (const name of removed) reply.removeHeader(name)
    done()
  }
}

/**
 * Security headers on every answer (set in an onRequest hook: JSON answers, errors, 404s, 429s and /metrics
 * alike): helmet's defaults (HSTS, X-Content-Type-Options nosniff, Referrer-Policy no-referrer,
 * Cross-Origin-Opener/Resource-Policy same-origin, ...) with X-Frame-Options DENY, `API_CSP`, and `docsCsp` on
 * the Swagger UI routes (a route hook of theirs sets their policy over the API's). The headers are helmet's,
 * worked out once at startup (`helmetHeaderSets`) and set as they are on each answer: @fastify/helmet itself
 * builds helmet's middleware again on every request (CSP parsing included), measured at ~10 % of the
 * 1-address read's CPU (bench:api). Register it first. What is answered before any hook runs has none: Node's
 * own 431, 408 and malformed-HTTP answers and Fastify's bad-URL answers (api/plugins/error-handlers.ts). The
 * answers' header objects are kept in V8's fast mode (api/plugins/header-shapes.ts).
 *
 * @example
 * await registerSecurityHeaders(app, { baseUrl: 'https://reports.example' })
 */
export async function registerSecurityHeaders(
  app: FastifyInstance,
  { baseUrl }: { baseUrl: string },
): Promise<void> {
  const sets = await helmetHeaderSets(baseUrl)
  // the API's on every request first (the route is not looked at: no per-request route options), then, on
  // the Swagger UI's routes, theirs over them
  app.addHook('onRequest', setHeadersHook(sets.api))
  const docsHook = setHeadersHook(
    sets.docs.filter(([name, value]) => !hasPair(sets.api, name, value)),
    sets.api.filter(([name]) => !sets.docs.some(([n]) => n === name)).map(([name]) => name),
  )
  app.addHook('onRoute', (route) => {
    if (!isDocsRoute(route.url)) return
    route.onRequest = [docsHook, ...(route.onRequest === undefined ? [] : [route.onRequest].flat())]
  })
  // with these 12 first, an answer's headers pass the count past which V8 makes their object a dictionary
  keepAnswerHeadersFast(app)
}

/** Whether `set` has the header `name` with `value`. */
function hasPair(set: HeaderSet, name: string, value: string): boolean {
  return set.some(([n, v]) => n === name && v === value)
}
