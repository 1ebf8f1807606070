import http from 'node:http'
import type { AddressInfo } from 'node:net'

/** One request the receiver got: its path, the three Standard Webhooks headers and the raw body. */
export interface ReceivedWebhook {
  path: string
  headers: { 'webhook-id': string; 'webhook-timestamp': string; 'webhook-signature': string }
  body: string
  /** The status the receiver answered (0: it never answered). */
  answered: number
}

/** What to do with a request: answer a status, or never answer ('hang', the connection stays open). */
export type ReceiverBehavior = (request: { path: string; count: number }) => number | 'hang'

export interface WebhookReceiver {
  /** Base URL, http://127.0.0.1:<port> (add a path per subscriber). */
  url: string
  received: ReceivedWebhook[]
  /** The event ids answered with a 2xx, once each (what a receiver that dedupes by webhook-id keeps). */
  deliveredIds(path?: string): Set<string>
  /** Changes how the next requests are answered (default: 200). */
  behave(behavior: ReceiverBehavior): void
  /** Stops listening (requests fail to connect) until `start()` listens again on the same port. */
  stop(): Promise<void>
  start(): Promise<void>
  close(): Promise<void>
}

/** A local webhook receiver that records every request and answers as told (200 by default). */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = []
  let behavior: ReceiverBehavior = () => 200
  let count = 0
  const hanging = new Set<http.ServerResponse>()
  const handler: http.RequestListener = (req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      count += 1
      const path = req.url ?? '/'
      const outcome = behavior({ path, count })
      received.push({
        path,
        headers: {
          'webhook-id': String(req.headers['webhook-id']),
          'webhook-timestamp': String(req.headers['webhook-timestamp']),
          'webhook-signature': String(req.headers['webhook-signature']),
        },
        body: Buffer.concat(chunks).toString('utf8'),
        answered: outcome === 'hang' ? 0 : outcome,
      })
      if (outcome === 'hang') {
        hanging.add(res)
        return
      }
      res.writeHead(outcome, { 'content-type': 'text/plain' }).end('ok')
    })
  }
  let server = http.createServer(handler)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  const stop = async () => {
    for (const res of hanging) res.destroy()
    hanging.clear()
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    deliveredIds(path) {
      return new Set(
        received
          .filter((r) => r.answered >= 200 && r.answered < 300 && (path === undefined || r.path === path))
          .map((r) => r.headers['webhook-id']),
      )
    },
    behave(next) {
      behavior = next
    },
    stop,
    async start() {
      server = http.createServer(handler)
      await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
    },
    close: stop,
  }
}

/** Polls `fn` every `everyMs` until it returns a value other than undefined/false (then returns it). */
export async function until<T>(
  what: string,
  fn: () => Promise<T | undefined | false>,
  timeoutMs = 60_000,
  everyMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await fn()
    if (value !== undefined && value !== false) return value as T
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, everyMs))
  }
}
