import { describe, expect, test } from 'vitest'
import { completeDocument } from './document.ts'

/** A document as @fastify/swagger makes it, with two operations of the table. */
function generated() {
  return {
    openapi: '3.0.3',
    info: { title: 'lsreport', version: '0.1.0' },
    components: { schemas: { 'def-0': { type: 'object', title: 'ErrorBody' } } },
    paths: {
      '/health': {
        get: { responses: { 200: { description: 'Default Response', content: { 'application/json': {} } } } },
      },
      '/v0/platform/accounts': {
        post: {
          security: [{ bearer: [] }],
          requestBody: { content: { 'application/json': { schema: { type: 'object' } } } },
          responses: {
            201: { description: 'Default Response', content: { 'application/json': { schema: {} } } },
            400: { description: 'Default Response', content: { 'application/json': { schema: {} } } },
          },
        },
      },
    },
  }
}

/** The parts of a completed operation the tests read. */
interface Completed {
  operationId: string
  security: unknown
  requestBody: { content: Record<string, { example?: unknown }> }
  responses: Record<
    string,
    {
      description: string
      headers: Record<string, unknown>
      content: Record<string, { example?: unknown; schema?: unknown }>
    }
  >
}

describe('completeDocument', () => {
  test('behavior: operationIds, security, examples, headers, 429, 400 and default responses from the table', () => {
    const doc = completeDocument({ openapiObject: generated() as never }) as ReturnType<typeof generated> & {
      components: { headers: Record<string, unknown>; schemas: Record<string, unknown> }
    }
    const health = doc.paths['/health'].get as unknown as Completed
    const create = doc.paths['/v0/platform/accounts'].post as unknown as Completed
    expect([health.operationId, create.operationId]).toEqual(['getHealth', 'createAccount'])
    expect([health.security, create.security]).toEqual([[], [{ bearer: [] }]])
    expect(create.requestBody.content['application/json']?.example).toEqual({ key: 'customer-8812' })
    const ok = health.responses[200]
    expect(ok?.content['application/json']?.example).toEqual({ status: 'ok' })
    expect(ok?.description).toBe('OK')
    // /health is never rate limited: no 429, no rate limit headers; a 400 since it declared no 4xx
    expect(Object.keys(health.responses).sort()).toEqual(['200', '400', 'default'])
    expect(Object.keys(ok?.headers ?? {})).toEqual(['X-Request-Id'])
    expect(Object.keys(create.responses).sort()).toEqual(['201', '400', '429', 'default'])
    expect(Object.keys(create.responses[201]?.headers ?? {})).toContain('RateLimit-Policy')
    const tooMany = create.responses[429]
    expect(tooMany?.headers['Retry-After']).toEqual({ $ref: '#/components/headers/Retry-After' })
    expect(tooMany?.content['application/json']?.schema).toEqual({
      $ref: '#/components/schemas/ErrorBody',
    })
    expect(Object.keys(doc.components.schemas)).toEqual(['ErrorBody'])
    expect(doc.components.headers.RateLimit).toBeDefined()
  })

  test('behavior: an operation missing from the table is refused', () => {
    const doc = generated() as ReturnType<typeof generated> & { paths: Record<string, unknown> }
    doc.paths['/v9/nowhere'] = { get: { responses: {} } }
    expect(() => completeDocument({ openapiObject: doc as never })).toThrow(
      'GET /v9/nowhere has no entry in api/openapi/operations.ts',
    )
  })
})
