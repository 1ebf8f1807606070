import { parse as parseQueryString } from 'node:querystring'
import type { FastifyInstance, preValidationHookHandler } from 'fastify'
import { ApiError } from '../errors.ts'
import { parseJsonBody } from '../json-body.ts'
import { coerceBySchema, unboundedNumbers, unsafeInput } from '../schemas.ts'

/** A route whose schema takes an unbounded integer is a bug: refused when it is registered. */
function refuseUnboundedNumbers(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const schema = route.schema as Record<string, unknown> | undefined
    if (!schema) return
    const unbounded = ['params', 'querystring', 'headers', 'body'].flatMap((part) =>
      unboundedNumbers(schema[part], part),
    )
    if (unbounded.length > 0) {
      throw new Error(
        `${route.method} ${route.url}: numbers without minimum and maximum: ${unbounded.join(', ')}`,
      )
    }
  })
}

/**
 * Before validation (and before any query): strings the database cannot store are refused, anywhere (a hook
 * of every request, 404s included); then query, path and header values are coerced by the route's schema (a
 * hook of each route with a schema, run right after: reading the route's options on every request builds
 * them anew each time).
 */
function refuseUnsafeAndCoerce(app: FastifyInstance): void {
  app.addHook('preValidation', (request, _reply, done) => {
    const problem =
      unsafeInput(request.params, 'params') ??
      unsafeInput(request.query, 'querystring') ??
      unsafeInput(request.headers, 'headers') ??
      unsafeInput(request.body, 'body')
    if (problem) return done(new ApiError('IR1000', problem))
    done()
  })
  app.addHook('onRoute', (route) => {
    if (!route.schema) return
    // the route's options as Fastify keeps them: its schema is read when a request comes (a later onRoute
    // hook may replace it)
    const coerce: preValidationHookHandler = (request, _reply, done) => {
      const schema = route.schema
      if (schema) {
        coerceBySchema(request.query, schema.querystring)
        coerceBySchema(request.params, schema.params)
        coerceBySchema(request.headers, schema.headers)
      }
      done()
    }
    route.preValidation = [coerce, ...(route.preValidation === undefined ? [] : [route.preValidation].flat())]
  })
}

/**
 * JSON bodies: an empty body is no body (PATCH with a JSON content type and nothing in it); before any parse,
 * one walk of the text (api/json-body.ts) refuses a body nested deeper than 32 levels (400 IR1000) or holding
 * more than MAX_JSON_VALUES values (400 IR1006), so no body costs more than that walk and a bounded parse;
 * malformed JSON and duplicate keys are refused (IR1001). No other content type is parsed outside /oauth/token
 * (text/plain, forms, XML: 415 IR1003).
 */
function parseJsonBodiesOnly(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json')
  app.removeContentTypeParser('text/plain')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = String(body)
    if (text.trim() === '') return done(null, undefined)
    const parsed = parseJsonBody(text)
    if ('problem' in parsed) return done(new ApiError(parsed.problem.code, parsed.problem.message), undefined)
    done(null, parsed.value)
  })
}

/** At most this many fields in a form body (the token endpoint takes five: RFC 6749 clients send forms). */
export const MAX_FORM_FIELDS = 64

/**
 * The form parser of the token endpoint (@fastify/formbody's `parser`): node:querystring's (as @fastify/formbody's own parser reads a form), once one walk of the
 * text has found at most MAX_FORM_FIELDS fields; more is 400 IR1006 before any parse (a 1 MiB form of 100,000
 * fields cost its parse, the copies of its object and the checks of every key ~0.4 s of the event loop).
 *
 * @example
 * await scope.register(formbody, { bodyLimit: config.bodyLimit, parser: parseFormBody })
 */
export function parseFormBody(text: string): Record<string, unknown> {
  let fields = 1
  for (let i = text.indexOf('&'); i !== -1; i = text.indexOf('&', i + 1)) {
    if (++fields > MAX_FORM_FIELDS) {
      throw new ApiError('IR1006', `form body holds more than ${MAX_FORM_FIELDS} fields`)
    }
  }
  return parseQueryString(text)
}

/**
 * The input rules every route shares (issue 9), on the root instance before any route: unbounded integers
 * refused at startup, NUL and lone surrogates refused before validation, strict coercion of query, path and
 * header values, JSON-only bodies.
 *
 * @example
 * registerInputRules(app) // then app.post('/x', { schema }, handler)
 */
export function registerInputRules(app: FastifyInstance): void {
  refuseUnboundedNumbers(app)
  refuseUnsafeAndCoerce(app)
  parseJsonBodiesOnly(app)
}
