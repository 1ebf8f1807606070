import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { Readable } from 'node:stream'
import Fastify from 'fastify'
import { describe, expect, test } from 'vitest'
import { createLogger } from '../common/logger.ts'
import { AccessLog } from './request-log.ts'

describe('AccessLog', () => {
  test('behavior: an answer whose body breaks after its headers is logged once, at error, with its error', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lsreport-access-log-'))
    const file = path.join(dir, 'api.log')
    const app = Fastify({
      loggerInstance: createLogger({ level: 'info', destination: file }),
      logController: new AccessLog(),
    })
    // a body stream that breaks after its first chunk: the headers are out, the response cannot finish
    app.get('/broken', (_request, reply) => {
      const body = new Readable({
        read() {
          this.push('first chunk\n')
          setImmediate(() => this.destroy(new Error('the source went away')))
        },
      })
      return reply.type('text/plain').send(body)
    })
    try {
      const url = await app.listen({ host: '127.0.0.1', port: 0 })
      await fetch(`${url}/broken`, { headers: { 'x-request-id': 'ignored' } })
        .then((res) => res.text())
        .catch(() => undefined)
      // the response's end is logged when the server sees it: wait for the line
      let lines: Record<string, unknown>[] = []
      for (let i = 0; i < 100 && !lines.some((l) => l.msg === 'response failed'); i++) {
        await new Promise((resolve) => setTimeout(resolve, 20))
        lines = (await fs.readFile(file, 'utf8'))
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line) as Record<string, unknown>)
      }
      const requestLines = lines.filter((l) => l.request_id !== undefined)
      expect(requestLines).toHaveLength(1)
      expect(requestLines[0]).toMatchObject({
        level: 50,
        msg: 'response failed',
        method: 'GET',
        url: '/broken',
        route: '/broken',
        status_code: 200,
        err: { message: 'the source went away' },
      })
    } finally {
      await app.close()
      await fs.rm(dir, { recursive: true, force: true })
    }
  })
})
