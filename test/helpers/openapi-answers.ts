import SwaggerParser from '@apidevtools/swagger-parser'
import { Ajv, type ValidateFunction } from 'ajv'
import addFormatsModule from 'ajv-formats'
import type { FastifyInstance, InjectOptions } from 'fastify'

/**
 * Holds answers of the API to the OpenAPI document it serves: the body of a JSON answer to the schema the
 * document declares for its (method, path, status) (the status, else its `NXX`, else `default`), and the
 * answer's headers to the headers declared there (a required one must be there; any one there must match its
 * schema). A 2xx answer may carry no API header the document leaves out (X-*, RateLimit*, ETag, Link,
 * Deprecation, Retry-After, Content-Disposition). Every answer of an app started by `startTestApi` goes
 * through it: over HTTP with the shared client (`http` in ./api.ts), in process with `app.inject(options)`.
 */

/** An answer as the HTTP client saw it. */
export interface Answer {
  method: string
  /** The request's path and query. */
  url: string
  status: number
  headers: Headers
  /** The body as text ('' when none). */
  text: string
}

/** The problems of an answer: [] when it is as the document says. */
export type AnswerChecker = (answer: Answer) => string[]

interface SchemaHeader {
  required?: boolean
  schema: object
}
interface Media {
  schema?: object
}
interface Response {
  headers?: Record<string, SchemaHeader>
  content?: Record<string, Media>
}
interface Operation {
  responses: Record<string, Response>
}
type PathItem = Record<string, Operation>

/** Headers only the API sets (not HTTP's own): a 2xx answer must not carry one its document leaves out. */
const API_HEADER = /^(x-|ratelimit)/
const API_HEADERS = new Set(['etag', 'link', 'deprecation', 'retry-after', 'content-disposition'])
/** X- headers of HTTP itself (the browser security headers @fastify/helmet sets), not the API's. */
const HTTP_X_HEADERS = new Set([
  'x-content-type-options',
  'x-dns-prefetch-control',
  'x-download-options',
  'x-frame-options',
  'x-permitted-cross-domain-policies',
  'x-xss-protection',
])

// ajv-formats is a CommonJS module: its function is the default export's default under Node's ESM loader
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ??
  addFormatsModule) as typeof addFormatsModule

/**
 * An ajv for the schemas of an OpenAPI 3.0 document: OpenAPI's own keywords (`nullable`, `example`, ...)
 * allowed, the formats it uses checked; `coerceTypes` for header values (always strings on the wire).
 *
 * @example
 * openapiAjv().compile({ type: 'string', nullable: true })(null) // true
 */
export function openapiAjv({ coerceTypes = false } = {}): Ajv {
  const ajv = new Ajv({ strict: false, allErrors: true, coerceTypes })
  addFormats(ajv)
  return ajv
}

/** Paths of a document as patterns, fewest parameters first (a literal segment wins over a parameter). */
function pathPatterns(paths: Record<string, PathItem>): { path: string; pattern: RegExp; item: PathItem }[] {
  return Object.entries(paths)
    .map(([path, item]) => ({
      path,
      item,
      params: (path.match(/\{/g) ?? []).length,
      pattern: new RegExp(
        `^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+')}$`,
      ),
    }))
    .sort((a, b) => a.params - b.params)
}

/**
 * A checker of answers against `document` (the served document: it is copied, then dereferenced).
 *
 * @example
 * const check = await answerChecker((await http(api.url)('GET', '/docs/json')).body)
 * check({ method: 'GET', url: '/health', status: 200, headers, text }) // []
 */
export async function answerChecker(document: unknown): Promise<AnswerChecker> {
  const doc = (await SwaggerParser.dereference(structuredClone(document) as never)) as unknown as {
    paths: Record<string, PathItem>
  }
  const patterns = pathPatterns(doc.paths)
  const bodies = openapiAjv()
  const headerValues = openapiAjv({ coerceTypes: true })
  const compiled = new WeakMap<object, ValidateFunction>()
  const compile = (ajv: Ajv, schema: object): ValidateFunction => {
    let validate = compiled.get(schema)
    if (!validate) {
      validate = ajv.compile(schema)
      compiled.set(schema, validate)
    }
    return validate
  }

  return ({ method, url, status, headers, text }) => {
    const path = url.split('?')[0] as string
    const found = patterns.find((p) => p.pattern.test(path) && p.item[method.toLowerCase()])
    // an undocumented route (the document's own, /metrics, an unknown path): nothing to hold it to
    if (!found) return []
    const operation = found.item[method.toLowerCase()] as Operation
    const label = `${method} ${found.path} answered ${status}`
    const response =
      operation.responses[String(status)] ??
      operation.responses[`${String(status)[0]}XX`] ??
      operation.responses.default
    if (!response) return [`${label}: the document declares no such response`]
    const problems: string[] = []

    const declared = new Map(Object.entries(response.headers ?? {}).map(([n, h]) => [n.toLowerCase(), h]))
    for (const [name, header] of declared) {
      const value = headers.get(name)
      if (value === null) {
        if (header.required) problems.push(`${label}: the required header ${name} is missing`)
        continue
      }
      const validate = compile(headerValues, { type: 'object', properties: { value: header.schema } })
      if (!validate({ value })) {
        problems.push(`${label}: header ${name}: ${JSON.stringify(value)} ${validate.errors?.[0]?.message}`)
      }
    }
    if (status >= 200 && status < 300) {
      for (const name of headers.keys()) {
        const api = (API_HEADER.test(name) && !HTTP_X_HEADERS.has(name)) || API_HEADERS.has(name)
        if (api && !declared.has(name)) {
          problems.push(`${label}: header ${name} is sent but not declared`)
        }
      }
    }

    if (text === '' || method === 'HEAD') return problems
    const type = (headers.get('content-type') ?? '').split(';')[0]?.trim() ?? ''
    const media = response.content?.[type]
    if (!media) {
      problems.push(`${label}: a ${type || 'untyped'} body, which the document does not declare`)
      return problems
    }
    if (type !== 'application/json' || !media.schema) return problems
    const validate = compile(bodies, media.schema)
    if (!validate(JSON.parse(text))) {
      for (const e of (validate.errors ?? []).slice(0, 5)) {
        problems.push(`${label}: body${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`)
      }
    }
    return problems
  }
}

/** The document of each app the tests started, by base URL: read (and its checker built) when first needed. */
const documents = new Map<string, { read: () => unknown; checker?: Promise<AnswerChecker> }>()

/**
 * Holds the answers of `app`, listening at `base`, to its own OpenAPI document (read in process, no request):
 * those the shared client `http(base)` gets (`checkAnswer`) and those of `app.inject(options)`, which throws
 * like the client does. (`app.inject()` without options, the chained form, is left as it is.)
 *
 * @example
 * holdAnswersToDocument(app, url)
 */
export function holdAnswersToDocument(app: FastifyInstance, base: string): void {
  documents.set(base, { read: () => app.swagger() })
  const inject = app.inject.bind(app) as (options: InjectOptions) => ReturnType<FastifyInstance['inject']>
  const checked = async (options: InjectOptions) => {
    const res = await inject(options)
    const headers = new Headers()
    for (const [name, value] of Object.entries(res.headers)) {
      if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : String(value))
    }
    const url = typeof options.url === 'string' ? options.url : (options.path as string | undefined)
    const method = options.method ?? 'GET'
    await checkAnswer(base, { method, url: url ?? '/', status: res.statusCode, headers, text: res.body })
    return res
  }
  app.inject = ((options?: InjectOptions | string, callback?: unknown) => {
    if (options === undefined || callback !== undefined)
      return (inject as (...args: unknown[]) => unknown)(options, callback)
    return checked(typeof options === 'string' ? { url: options } : options)
  }) as FastifyInstance['inject']
}

/**
 * Throws when an answer of the app at `base` is not what its document says (`answerChecker`); an answer of
 * a server that was not registered passes unchecked.
 *
 * @example
 * await checkAnswer(api.url, { method: 'GET', url: '/health', status: 200, headers, text })
 */
export async function checkAnswer(base: string, answer: Answer): Promise<void> {
  const entry = documents.get(base)
  if (!entry) return
  entry.checker ??= answerChecker(entry.read())
  const problems = (await entry.checker)(answer)
  if (problems.length > 0) {
    throw new Error(`the answer is not what the OpenAPI document says:\n${problems.join('\n')}`)
  }
}
