/**
 * A JSON-RPC proxy on 127.0.0.1 in front of a local node (anvil), with programmable faults, for tests that
 * prove the chain layer loses nothing and duplicates nothing when the RPC misbehaves: dropped connections
 * (before or after the node ran the call), HTTP 500/429 answers, -32005 "query returned more than 10000
 * results" for wide `eth_getLogs` ranges, and latency. Random faults draw from a seeded generator, a fixed
 * number of draws per request, so a sequential client sees the same faults on every run.
 *
 * @example
 * const proxy = await startRpcProxy({ upstream: anvil.rpcUrl, seed: 7, faults: { dropRate: 0.2 } })
 * const client = createChainClient({ rpcUrl: proxy.url })
 * // ... proxy.stats.dropped > 0
 * await proxy.stop()
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { text } from 'node:stream/consumers'
import { createRng } from '../../devnet/rng.ts'

/** One JSON-RPC call as the proxy sees it. */
export interface RpcCall {
  id?: unknown
  method: string
  params?: unknown
}

export interface RpcProxyFaults {
  /** Fraction in [0, 1] of requests whose connection is destroyed before they reach the node. */
  dropRate?: number
  /** The next N requests are dropped that way (counted down before the random draw). */
  dropNext?: number
  /** Fraction of requests run by the node whose answer is then lost (connection destroyed). */
  dropResponseRate?: number
  /** The next N requests are run by the node and their answer lost. */
  dropResponseNext?: number
  /** Fraction of requests answered with `httpErrorStatus` without reaching the node. */
  httpErrorRate?: number
  /** The next N requests are answered with `httpErrorStatus`. */
  httpErrorNext?: number
  /** Status of the injected HTTP errors. Default 500. */
  httpErrorStatus?: number
  /** `eth_getLogs` over more blocks than this is answered `{code: -32005, message: 'query returned more than 10000 results'}`. */
  maxLogsRange?: bigint | number
  /** `eth_getLogs` whose answer holds more logs than this is answered with the same -32005 error. */
  maxLogsResults?: number
  /** Delay added before forwarding: fixed, or computed per request from its first call. */
  latencyMs?: number | ((call: RpcCall) => number)
  /** Methods the drop, HTTP error and latency faults apply to. Default: every method. */
  methods?: readonly string[]
  /** `eth_getLogs` answers lose their logs' `blockTimestamp`, as from a node before execution-apis#639. */
  stripLogTimestamps?: boolean
  /**
   * Calls answered as a node answers a call that reverted without a reason (`{code: 3, message: 'execution
   * reverted', data: '0x'}`), without reaching the node: those for which it returns true.
   */
  revert?: (call: RpcCall) => boolean
  /** Calls held back until the promise it returns settles (undefined: forwarded at once), then forwarded. */
  hold?: (call: RpcCall) => Promise<void> | undefined
}

export interface RpcProxyStats {
  /** HTTP requests received. */
  requests: number
  /** JSON-RPC calls received (a batch counts each element). */
  calls: number
  /** Calls per method. */
  byMethod: Record<string, number>
  /** Calls forwarded to the node. */
  forwarded: number
  /** Requests whose connection was destroyed before forwarding. */
  dropped: number
  /** Requests run by the node whose answer was destroyed. */
  droppedResponses: number
  /** Requests answered with an injected HTTP error. */
  httpErrors: number
  /** `eth_getLogs` calls answered -32005. */
  rangeErrors: number
  /** Calls answered with an injected revert. */
  reverts: number
  /** Requests delayed by `latencyMs`. */
  delayed: number
}

export interface RpcProxyOptions {
  /** The node behind the proxy; must be a loopback URL. */
  upstream: string
  /** Seed of the fault generator. Default 1. */
  seed?: number
  faults?: RpcProxyFaults
}

export interface RpcProxy {
  /** `http://127.0.0.1:<port>` once started. */
  readonly url: string
  readonly port: number
  readonly stats: RpcProxyStats
  readonly faults: RpcProxyFaults
  start(): Promise<string>
  stop(): Promise<void>
  /** Replaces the fault configuration. */
  setFaults(faults: RpcProxyFaults): void
  /** Merges into the fault configuration. */
  updateFaults(faults: RpcProxyFaults): void
  resetStats(): void
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]', '::1'])

function emptyStats(): RpcProxyStats {
  return {
    requests: 0,
    calls: 0,
    byMethod: {},
    forwarded: 0,
    dropped: 0,
    droppedResponses: 0,
    httpErrors: 0,
    rangeErrors: 0,
    reverts: 0,
    delayed: 0,
  }
}

function isCall(value: unknown): value is RpcCall {
  return typeof value === 'object' && value !== null && typeof (value as RpcCall).method === 'string'
}

const TOO_MANY_RESULTS = { code: -32005, message: 'query returned more than 10000 results' }

/** Creates a proxy (not yet listening). Only loopback upstreams are accepted; it listens on 127.0.0.1. */
export function createRpcProxy(options: RpcProxyOptions): RpcProxy {
  const upstream = new URL(options.upstream)
  if (!LOOPBACK_HOSTS.has(upstream.hostname)) {
    throw new Error(`rpc proxy: upstream must be a loopback address, got ${upstream.hostname}`)
  }
  const random = createRng(options.seed ?? 1).next
  let faults: RpcProxyFaults = { ...options.faults }
  let stats = emptyStats()
  let port = 0

  async function forward(body: string): Promise<unknown> {
    const response = await fetch(upstream, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    })
    return response.json()
  }

  async function blockNumberOf(tag: unknown): Promise<bigint> {
    if (typeof tag === 'string' && /^0x[0-9a-fA-F]+$/.test(tag)) return BigInt(tag)
    if (tag === 'earliest') return 0n
    const answer = (await forward(JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'eth_blockNumber' }))) as {
      result: string
    }
    return BigInt(answer.result)
  }

  /** Answers one call: an injected -32005, or the node's answer (checked against maxLogsResults). */
  async function answer(call: RpcCall): Promise<unknown> {
    const error = (e: { code: number; message: string }) => {
      stats.rangeErrors++
      return { jsonrpc: '2.0', id: call.id ?? null, error: e }
    }
    if (faults.revert?.(call)) {
      stats.reverts++
      return {
        jsonrpc: '2.0',
        id: call.id ?? null,
        error: { code: 3, message: 'execution reverted', data: '0x' },
      }
    }
    await faults.hold?.(call)
    if (call.method === 'eth_getLogs' && faults.maxLogsRange !== undefined) {
      const filter = (Array.isArray(call.params) ? call.params[0] : undefined) as
        | { fromBlock?: unknown; toBlock?: unknown; blockHash?: unknown }
        | undefined
      if (filter && filter.blockHash === undefined) {
        const from = await blockNumberOf(filter.fromBlock ?? 'latest')
        const to = await blockNumberOf(filter.toBlock ?? 'latest')
        if (to - from + 1n > BigInt(faults.maxLogsRange)) return error(TOO_MANY_RESULTS)
      }
    }
    stats.forwarded++
    const result = (await forward(JSON.stringify(call))) as { result?: unknown }
    if (call.method === 'eth_getLogs' && faults.stripLogTimestamps && Array.isArray(result.result)) {
      for (const log of result.result as Record<string, unknown>[]) delete log.blockTimestamp
    }
    if (
      call.method === 'eth_getLogs' &&
      faults.maxLogsResults !== undefined &&
      Array.isArray(result.result) &&
      result.result.length > faults.maxLogsResults
    ) {
      return error(TOO_MANY_RESULTS)
    }
    return result
  }

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const body = await text(req)
    stats.requests++
    // Three draws per request whatever the configuration, so the fault sequence depends on the seed only.
    const drawDrop = random()
    const drawHttp = random()
    const drawDropResponse = random()
    let parsed: unknown
    try {
      parsed = JSON.parse(body)
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'parse error' } }))
      return
    }
    const calls = (Array.isArray(parsed) ? parsed : [parsed]).filter(isCall)
    stats.calls += calls.length
    for (const call of calls) stats.byMethod[call.method] = (stats.byMethod[call.method] ?? 0) + 1
    const faultable = faults.methods === undefined || calls.some((c) => faults.methods?.includes(c.method))

    if (faultable && ((faults.dropNext ?? 0) > 0 || drawDrop < (faults.dropRate ?? 0))) {
      if ((faults.dropNext ?? 0) > 0) faults.dropNext = (faults.dropNext ?? 1) - 1
      stats.dropped++
      req.socket.destroy()
      return
    }
    if (faultable && ((faults.httpErrorNext ?? 0) > 0 || drawHttp < (faults.httpErrorRate ?? 0))) {
      if ((faults.httpErrorNext ?? 0) > 0) faults.httpErrorNext = (faults.httpErrorNext ?? 1) - 1
      stats.httpErrors++
      const status = faults.httpErrorStatus ?? 500
      res.writeHead(status, { 'content-type': 'text/plain' })
      res.end(status === 429 ? 'Too Many Requests' : 'Internal Server Error (injected)')
      return
    }
    const first = calls[0]
    if (faultable && faults.latencyMs !== undefined && first) {
      const delay = typeof faults.latencyMs === 'function' ? faults.latencyMs(first) : faults.latencyMs
      if (delay > 0) {
        stats.delayed++
        await new Promise((resolve) => setTimeout(resolve, delay))
      }
    }
    if (req.socket.destroyed) return // the client gave up while we waited
    const answers = Array.isArray(parsed)
      ? await Promise.all(calls.map(answer))
      : await answer(parsed as RpcCall)
    if (
      faultable &&
      ((faults.dropResponseNext ?? 0) > 0 || drawDropResponse < (faults.dropResponseRate ?? 0))
    ) {
      if ((faults.dropResponseNext ?? 0) > 0) faults.dropResponseNext = (faults.dropResponseNext ?? 1) - 1
      stats.droppedResponses++
      req.socket.destroy()
      return
    }
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify(answers))
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (res.headersSent || req.socket.destroyed) return
      res.writeHead(502, { 'content-type': 'text/plain' })
      res.end(`rpc proxy: upstream failed: ${error instanceof Error ? error.message : String(error)}`)
    })
  })

  return {
    get url() {
      return `http://127.0.0.1:${port}`
    },
    get port() {
      return port
    },
    get stats() {
      return stats
    },
    get faults() {
      return faults
    },
    start() {
      return new Promise((resolve, reject) => {
        server.once('error', reject)
        server.listen(0, '127.0.0.1', () => {
          server.off('error', reject)
          port = (server.address() as AddressInfo).port
          resolve(`http://127.0.0.1:${port}`)
        })
      })
    },
    stop() {
      return new Promise((resolve) => {
        if (!server.listening) return resolve()
        server.close(() => resolve())
        server.closeAllConnections()
      })
    },
    setFaults(next) {
      faults = { ...next }
    },
    updateFaults(next) {
      faults = { ...faults, ...next }
    },
    resetStats() {
      stats = emptyStats()
    },
  }
}

/** Creates and starts a proxy. */
export async function startRpcProxy(options: RpcProxyOptions): Promise<RpcProxy> {
  const proxy = createRpcProxy(options)
  await proxy.start()
  return proxy
}
