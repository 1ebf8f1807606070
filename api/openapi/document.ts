import { STATUS_CODES } from 'node:http'
import type { SwaggerTransformObject } from '@fastify/swagger'
import type { FastifyInstance } from 'fastify'
import { UNLIMITED_ROUTES } from '../plugins/rate-limit.ts'
import { ErrorBodySchema } from '../schemas.ts'
import EXAMPLES from './examples.json' with { type: 'json' }
import { HEADERS, type HeaderName, OPTIONAL_RATE_LIMIT_HEADERS, RATE_LIMIT_HEADERS } from './headers.ts'
import { OPERATIONS, operationKey } from './operations.ts'

/**
 * Completes the OpenAPI document @fastify/swagger builds from the route schemas (its `transformObject`), from
 * the table of api/openapi/operations.ts: every operation gets its operationId, `security: []` when public,
 * example request bodies and 2xx answers (api/openapi/examples.json: real answers, see
 * test/openapi-walk.test.ts), the headers its answers carry (`components.headers`), a 429 with the rate
 * limit's headers when rate limited, a 400 when it declares no 4xx, and a `default` error response.
 * Only the document changes: no route's validation or serialization does.
 */

type Json = Record<string, unknown>
interface Media {
  schema?: Json
  example?: unknown
}
interface Response {
  description: string
  content?: Record<string, Media>
  headers?: Record<string, { $ref: string }>
}
interface Operation {
  operationId?: string
  security?: unknown[]
  requestBody?: { content: Record<string, Media> }
  responses?: Record<string, Response>
}
interface Document {
  info: Json
  paths: Record<string, Record<string, Operation>>
  components?: { schemas?: Record<string, Json>; headers?: Json } & Json
}

/**
 * Example 2xx answers by operation key, then status (`"200"`, a JSON answer) or status and media type
 * (`"200 text/csv"`); written by test/openapi-walk.test.ts.
 */
const ANSWER_EXAMPLES = EXAMPLES as Record<string, Record<string, unknown>>

const ERROR_BODY_REF = { $ref: '#/components/schemas/ErrorBody' }

/** The methods of an OpenAPI path item (its other keys are parameters, summary, ...). */
const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'])

/** What an error status means, for responses the route schema left as "Default Response". */
const ERROR_DESCRIPTIONS: Record<string, string> = {
  400: 'Invalid request (the message names the field; catalog codes in docs/decisions.md)',
  401: 'Missing, invalid or expired bearer token',
  403: 'The token lacks the scope this operation needs',
  404: 'Not found',
  429: 'Too many requests: retry after Retry-After seconds',
  503: 'Not available yet: retry later',
}

/** References to header components: `names`, each under its component `<name><suffix>`. */
function headerRefs(names: readonly HeaderName[], suffix = ''): Record<string, { $ref: string }> {
  return Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}${suffix}` }]))
}

function errorResponse(description: string, headers: Record<string, { $ref: string }>): Response {
  return {
    description,
    headers: { ...headerRefs(['X-Request-Id']), ...headers },
    content: { 'application/json': { schema: { ...ERROR_BODY_REF } } },
  }
}

/**
 * Hoisted schemas with a title (`def-0` for the ErrorBody schema the app adds) named by their title, so the
 * document reads `#/components/schemas/ErrorBody`.
 */
function nameHoistedSchemas(doc: Document): void {
  const schemas = doc.components?.schemas
  if (!schemas) return
  const renamed = new Map<string, string>()
  for (const [name, schema] of Object.entries(schemas)) {
    const title = schema.title
    if (/^def-\d+$/.test(name) && typeof title === 'string' && !(title in schemas)) {
      schemas[title] = schema
      delete schemas[name]
      renamed.set(`#/components/schemas/${name}`, `#/components/schemas/${title}`)
    }
  }
  if (renamed.size === 0) return
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) for (const item of node) visit(item)
    else if (node !== null && typeof node === 'object') {
      const record = node as Json
      if (typeof record.$ref === 'string' && renamed.has(record.$ref)) record.$ref = renamed.get(record.$ref)
      for (const value of Object.values(record)) visit(value)
    }
  }
  visit(doc.paths)
  visit(doc.components)
}

/**
 * Applies one operation's entry of OPERATIONS (see the module comment). An error response whose schema is
 * the ErrorBody (`errorBody`: its JSON text) refers to it.
 */
function completeOperation(key: string, path: string, op: Operation, errorBody: string): void {
  const entry = OPERATIONS[key]
  if (!entry) throw new Error(`${key} has no entry in api/openapi/operations.ts`)
  const rateLimited = !UNLIMITED_ROUTES.has(path)
  op.operationId = entry.operationId
  op.security ??= []
  if (entry.requestExample !== undefined && op.requestBody) {
    for (const media of Object.values(op.requestBody.content)) media.example = entry.requestExample
  }
  op.responses ??= {}
  const responses: Record<string, Response> = op.responses
  for (const [status, { description, schema }] of Object.entries(entry.responses ?? {})) {
    responses[status] = { description, content: { 'application/json': { schema } } }
  }
  for (const [status, response] of Object.entries(responses)) {
    const ok = /^2\d\d$/.test(status)
    if (response.description === 'Default Response') {
      response.description = (ok ? STATUS_CODES[status] : ERROR_DESCRIPTIONS[status]) ?? response.description
    }
    const names: HeaderName[] = ['X-Request-Id']
    if (ok) names.push(...(rateLimited ? RATE_LIMIT_HEADERS : []), ...(entry.headers ?? []))
    response.headers = { ...response.headers, ...headerRefs(names) }
    for (const [type, media] of Object.entries(response.content ?? {})) {
      const example = ANSWER_EXAMPLES[key]?.[type === 'application/json' ? status : `${status} ${type}`]
      if (ok && example !== undefined) media.example = example
    }
    const json = response.content?.['application/json']
    if (!ok && json && JSON.stringify(json.schema) === errorBody) json.schema = { ...ERROR_BODY_REF }
  }
  if (rateLimited) {
    responses[429] = errorResponse(ERROR_DESCRIPTIONS[429] as string, {
      ...headerRefs(RATE_LIMIT_HEADERS, '.optional'),
      ...headerRefs(['Retry-After']),
    })
  }
  if (!Object.keys(responses).some((status) => status.startsWith('4'))) {
    responses[400] = errorResponse(
      'Invalid request (e.g. a NUL byte or a lone surrogate in the query string)',
      {},
    )
  }
  responses.default = errorResponse('Any other error, in the catalog shape (docs/decisions.md)', {})
}

/**
 * @fastify/swagger's `transformObject`: completes the generated document in place (module comment). Throws
 * when an operation has no entry in api/openapi/operations.ts.
 *
 * @example
 * await app.register(swagger, { openapi, transformObject: completeDocument })
 */
export function completeDocument(
  generated: Parameters<SwaggerTransformObject>[0],
): ReturnType<SwaggerTransformObject> {
  if (!('openapiObject' in generated)) return generated.swaggerObject
  const doc = generated.openapiObject as unknown as Document
  nameHoistedSchemas(doc)
  const { $id: _id, ...errorBody } = ErrorBodySchema as unknown as Json
  const schemas = doc.components?.schemas ?? {}
  schemas.ErrorBody ??= errorBody
  const { title: _title, ...untitled } = schemas.ErrorBody
  doc.info.license ??= { name: 'MIT', url: 'https://opensource.org/license/mit' }
  const headers = structuredClone({ ...HEADERS, ...OPTIONAL_RATE_LIMIT_HEADERS })
  doc.components = { ...doc.components, schemas, headers }
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (METHODS.has(method))
        completeOperation(operationKey(method, path), path, op, JSON.stringify(untitled))
    }
  }
  return generated.openapiObject
}

/**
 * Refuses, when it is registered, a documented route without an entry in api/openapi/operations.ts (its
 * operationId and examples would be missing from the document). Call it before the routes are registered.
 *
 * @example
 * requireOperationDocs(app)
 * app.get('/v9/new', { schema }, handler) // throws: GET /v9/new has no entry in api/openapi/operations.ts
 */
export function requireOperationDocs(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    if (route.method === 'HEAD' || route.schema?.hide === true) return
    for (const method of [route.method].flat()) {
      const key = operationKey(method, route.url)
      if (!OPERATIONS[key]) throw new Error(`${key} has no entry in api/openapi/operations.ts`)
    }
  })
}
