/**
 * The embedded devnet's JSON-RPC endpoint: a front for anvil that never lets a read overlap the mining of a
 * block. anvil answers a read at its head block from its working state, which the mining of the next block
 * changes before that block is published: a reader that asked for block N's state while block N+1 was being
 * mined got N+1's (measured: 3 of 22,158 balance reads at random blocks up to the head, each at the head; none
 * of 34,624 reads below it). The follower reads River's pool at a report's block, often the head on a devnet
 * (CONFIRMATIONS 0), and a day then failed to reconcile by the next block's deposits.
 *
 * So chain-changing calls (`evm_*`, `anvil_*`, `hardhat_*`: mining, reverts, state edits) run alone: each
 * waits for the requests in flight to finish and holds new ones until it has answered; every other call
 * (reads, sending transactions to the pool) runs alongside the others.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { text } from 'node:stream/consumers'

/** A running gate: its URL (what the devnet publishes) and how to stop it. */
export interface RpcGate {
  url: string
  stop(): Promise<void>
}

const CHAIN_CHANGING = /^(evm|anvil|hardhat)_/

/** Whether a JSON-RPC request body (one call or a batch) changes the chain: such a request runs alone. */
export function changesChain(body: string): boolean {
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    return false // anvil answers the parse error
  }
  const calls = Array.isArray(parsed) ? parsed : [parsed]
  return calls.some((call) => {
    const method = (call as { method?: unknown } | null)?.method
    return typeof method === 'string' && CHAIN_CHANGING.test(method)
  })
}

/**
 * A readers-writer lock with the writer first: `shared` work runs alongside other shared work; `alone` work
 * waits for the shared work in flight, and shared work that arrives meanwhile waits for it.
 */
export function createReadWriteGate() {
  let readers = 0
  /** the exclusive work running or waiting to run, settled when it is done */
  let writer: Promise<void> = Promise.resolve()
  let writers = 0
  let drained: (() => void) | undefined

  return {
    async shared<T>(work: () => Promise<T>): Promise<T> {
      while (writers > 0) await writer
      readers++
      try {
        return await work()
      } finally {
        readers--
        if (readers === 0) drained?.()
      }
    },
    async alone<T>(work: () => Promise<T>): Promise<T> {
      writers++
      const previous = writer
      let release = () => {}
      writer = new Promise<void>((resolve) => {
        release = resolve
      })
      try {
        await previous
        if (readers > 0) {
          await new Promise<void>((resolve) => {
            drained = resolve
          })
          drained = undefined
        }
        return await work()
      } finally {
        writers--
        release()
      }
    },
  }
}

/**
 * Starts the gate on 127.0.0.1 (`port`, default 0: a free port) in front of `upstream` (anvil's URL). An
 * upstream that cannot be reached answers 502 with a JSON-RPC error.
 *
 * @example
 * const gate = await startRpcGate(anvil.rpcUrl)
 * const client = createPublicClient({ transport: http(gate.url) })
 */
export async function startRpcGate(upstream: string, options: { port?: number } = {}): Promise<RpcGate> {
  const gate = createReadWriteGate()
  const server = http.createServer(async (request, response) => {
    try {
      const body = await text(request)
      const forward = async () => {
        const answer = await fetch(upstream, {
          method: request.method ?? 'POST',
          headers: { 'content-type': 'application/json' },
          ...(request.method === 'GET' || request.method === 'HEAD' ? {} : { body }),
        })
        return { status: answer.status, text: await answer.text() }
      }
      const answer = changesChain(body) ? await gate.alone(forward) : await gate.shared(forward)
      response.writeHead(answer.status, { 'content-type': 'application/json' })
      response.end(answer.text)
    } catch (err) {
      response.writeHead(502, { 'content-type': 'application/json' })
      response.end(
        JSON.stringify({
          jsonrpc: '2.0',
          id: null,
          error: { code: -32603, message: `devnet node unreachable: ${(err as Error).message}` },
        }),
      )
    }
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve())
  })
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
