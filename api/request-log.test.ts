import fs from 'node:fs/promises'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { Readable } from 'node:stream'
import Fastify, { type FastifyBaseLogger } from 'fastify'
import { describe, expect, test } from 'vitest'
import { createLogger } from '../common/logger.ts'
import { AccessLog, logAbortedRequests } from './request-log.ts'

/** The JSON lines of a log file. */
async function linesIn(file: string): Promise<Record<string, unknown>[]> {
  return (await fs.readFile(file, 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>)
}

/** The JSON lines of a log file once one has the message `msg` (or after 2 s). */
async function linesOnceLogged(file: string, msg: string): Promise<Record<string, unknown>[]> {
  let lines = await linesIn(file)
  for (let i = 0; i < 100 && !lines.some((l) => l.msg === msg); i++) {
    await new Promise((resolve) => setTimeout(resolve, 20))
    lines = await linesIn(file)
  }
  return lines
}

/** A bare Fastify app with the access log, writing `info` to a file of its own. */
async function appLoggingToFile() {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lsreport-access-log-'))
  const file = path.join(dir, 'api.log')
  const app = Fastify({
    loggerInstance: createLogger({ level: 'info', destination: file }) as FastifyBaseLogger,
    logController: new AccessLog(),
  })
  return { dir, file, app }
}

describe('AccessLog', () => {
  test('behavior: an answer whose body breaks after its headers is logged once, at error, with its error', async () => {
    const { dir, file, app } = await appLoggingToFile()
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
      const lines = await linesOnceLogged(file, 'response failed')
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

  test('behavior: a client that goes away in the middle of a streamed answer gets one "request aborted" line', async () => {
    const { dir, file, app } = await appLoggingToFile()
    logAbortedRequests(app)
    // a chunk every 50 ms for 2 s
    app.get('/slow', (_request, reply) => {
      let chunks = 0
      const body = new Readable({
        read() {
          setTimeout(() => this.push(chunks++ < 40 ? 'chunk\n' : null), 50)
        },
      })
      return reply.type('text/plain').send(body)
    })
    try {
      const url = await app.listen({ host: '127.0.0.1', port: 0 })
      // a raw client: reads the first chunk, then closes the connection
      await new Promise<void>((resolve, reject) => {
        const socket = net.connect(Number(new URL(url).port), '127.0.0.1', () => {
          socket.write('GET /slow HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
        })
        socket.once('data', () => {
          socket.destroy()
          resolve()
        })
        socket.on('error', reject)
      })
      await linesOnceLogged(file, 'request aborted')
      await new Promise((resolve) => setTimeout(resolve, 200)) // room for a second line, which must not come
      const requestLines = (await linesIn(file)).filter((l) => l.request_id !== undefined)
      expect(requestLines.map((l) => [l.msg, l.level, l.method, l.url, l.route])).toEqual([
        ['request aborted', 30, 'GET', '/slow', '/slow'],
      ])
    } finally {
      await app.close()
      await fs.rm(dir, { recursive: true, force: true })
    }
  })
})
