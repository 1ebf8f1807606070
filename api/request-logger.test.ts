import type { FastifyBaseLogger } from 'fastify'
import { pino } from 'pino'
import { describe, expect, test } from 'vitest'
import { RequestLogger } from './request-logger.ts'

/** A pino logger like the service's (base fields, ISO time) writing into `lines`, with a fixed clock. */
function memoryLogger(lines: string[]): FastifyBaseLogger {
  return pino(
    { level: 'info', base: { service: 'lsreport' }, timestamp: () => ',"time":"2026-11-27T00:00:00.000Z"' },
    { write: (line: string) => lines.push(line) },
  ).child({ component: 'api' }) as unknown as FastifyBaseLogger
}

describe('RequestLogger', () => {
  test('behavior: a line through it carries the bindings; through `unbound` with the id among its fields, the same bytes', () => {
    const lines: string[] = []
    const parent = memoryLogger(lines)
    const viaChild = parent.child({ request_id: 'req-1' })
    viaChild.info({ method: 'GET', status_code: 200 }, 'request answered')
    viaChild.error({ err: new Error('boom') }, 'request failed')

    const log = new RequestLogger(parent, { request_id: 'req-1' }, {})
    log.unbound().info({ request_id: 'req-1', method: 'GET', status_code: 200 }, 'request answered')
    log.error({ err: new Error('boom') }, 'request failed')

    expect(lines).toHaveLength(4)
    expect(lines[2]).toBe(lines[0])
    // (the stack differs by its line numbers)
    const withoutStack = (line: string) => ({
      ...JSON.parse(line),
      err: { ...JSON.parse(line).err, stack: '' },
    })
    expect(withoutStack(lines[3] as string)).toEqual(withoutStack(lines[1] as string))
    expect(JSON.parse(lines[3] as string)).toMatchObject({ level: 50, request_id: 'req-1', component: 'api' })
  })

  test('behavior: no pino child is made until a line is written through it', () => {
    const lines: string[] = []
    const parent = memoryLogger(lines)
    let children = 0
    const counting = Object.create(parent, {
      child: {
        value: (...args: Parameters<FastifyBaseLogger['child']>) => {
          children++
          return parent.child(...args)
        },
      },
    }) as FastifyBaseLogger
    const log = new RequestLogger(counting, { request_id: 'req-2' }, {})
    expect(log.level).toBe('info')
    expect(log.unbound()).toBe(counting)
    expect(children).toBe(0)
    log.debug('not written at info')
    log.warn('written')
    log.info('written too')
    expect(children).toBe(1)
    expect(lines.map((l) => [JSON.parse(l).request_id, JSON.parse(l).msg])).toEqual([
      ['req-2', 'written'],
      ['req-2', 'written too'],
    ])
  })

  test("behavior: a route's level applies to its lines, the access line's included", () => {
    const lines: string[] = []
    const log = new RequestLogger(memoryLogger(lines), { request_id: 'req-3' }, { level: 'warn' })
    expect(log.level).toBe('warn')
    log.info('dropped')
    log.unbound().info({ request_id: 'req-3' }, 'dropped too')
    log.unbound().warn({ request_id: 'req-3' }, 'kept')
    expect(lines.map((l) => JSON.parse(l).msg)).toEqual(['kept'])
  })
})
