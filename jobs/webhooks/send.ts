import http from 'node:http'
import https from 'node:https'
import type { LookupFunction } from 'node:net'
import type { ResolvedTarget } from '../../platform/webhooks/url-guard.ts'

/** What one attempt got: the receiver's HTTP status, or the error that prevented an answer. */
export type SendResult = { statusCode: number } | { error: string }

const MAX_RESPONSE_BYTES = 64 * 1024

/**
 * POSTs `body` to a checked target: the connection goes to the address that was checked (no second DNS
 * lookup), redirects are not followed (a 3xx counts as a failure), the whole attempt is bounded by
 * `timeoutMs` and the TCP connection by `connectTimeoutMs` (a host that drops the SYN fails fast), and at
 * most 64 KiB of the answer is read.
 */
export function sendWebhook(
  target: ResolvedTarget,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
  connectTimeoutMs: number = timeoutMs,
): Promise<SendResult> {
  const pinned: LookupFunction = (_host, options, callback) => {
    if ((options as { all?: boolean }).all)
      callback(null, [{ address: target.address, family: target.family }])
    else callback(null, target.address, target.family)
  }
  const request = target.url.protocol === 'https:' ? https.request : http.request
  return new Promise((resolve) => {
    let settled = false
    const done = (result: SendResult) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resolve(result)
    }
    const req = request(
      target.url,
      {
        method: 'POST',
        lookup: pinned,
        headers: {
          ...headers,
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body)),
          'user-agent': 'lsreport-webhooks/1',
        },
      },
      (res) => {
        let read = 0
        res.on('data', (chunk: Buffer) => {
          read += chunk.length
          if (read > MAX_RESPONSE_BYTES) res.destroy()
        })
        res.on('close', () => done({ statusCode: res.statusCode ?? 0 }))
        res.on('error', () => done({ statusCode: res.statusCode ?? 0 }))
      },
    )
    const timer = setTimeout(() => {
      req.destroy(new Error(`no answer within ${timeoutMs} ms`))
    }, timeoutMs)
    req.on('socket', (socket) => {
      // a kept-alive socket is already connected
      if (!socket.connecting || connectTimeoutMs >= timeoutMs) return
      const connectTimer = setTimeout(() => {
        req.destroy(new Error(`no connection within ${connectTimeoutMs} ms`))
      }, connectTimeoutMs)
      const clear = () => clearTimeout(connectTimer)
      socket.once('connect', clear)
      socket.once('close', clear)
    })
    req.on('error', (err) => done({ error: err.message }))
    req.end(body)
  })
}
