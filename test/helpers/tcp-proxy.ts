/**
 * A TCP proxy on 127.0.0.1 in front of a server (Postgres in the tests), which a test can cut: every open
 * connection is destroyed and new ones are accepted then closed at once (the peer sees ECONNRESET or
 * "Connection terminated"), until `restore()`; or stall: bytes stop flowing both ways on open and new
 * connections while every socket stays open (a network that silently drops), until `restore()`. For tests
 * that prove a process survives a database outage.
 *
 * @example
 * const proxy = await startTcpProxy({ host: '127.0.0.1', port: 5432 })
 * // DATABASE_URL=postgres://postgres@127.0.0.1:${proxy.port}/db
 * proxy.cut(); ...; proxy.restore()
 * await proxy.stop()
 */
import net from 'node:net'

export interface TcpProxy {
  /** The port the proxy listens on (127.0.0.1). */
  port: number
  /** Destroys every open connection and closes new ones at once, until `restore()`. */
  cut(): void
  /** Stops forwarding bytes on every connection, open or new, without closing any, until `restore()`. */
  stall(): void
  /** Forwards again: new connections after a cut, and the held bytes after a stall. */
  restore(): void
  /** Connections accepted so far (forwarded or refused). */
  readonly accepted: number
  /** Open forwarded connections. */
  readonly open: number
  stop(): Promise<void>
}

/** Starts a TCP proxy to `upstream` on a free loopback port. */
export async function startTcpProxy(upstream: { host: string; port: number }): Promise<TcpProxy> {
  const pairs = new Set<[net.Socket, net.Socket]>()
  let down = false
  let stalled = false
  let accepted = 0
  const flow = (pair: [net.Socket, net.Socket], on: boolean) => {
    const [client, upstreamSocket] = pair
    if (on) {
      client.pipe(upstreamSocket)
      upstreamSocket.pipe(client)
    } else {
      client.unpipe(upstreamSocket).pause()
      upstreamSocket.unpipe(client).pause()
    }
  }
  const server = net.createServer((client) => {
    accepted++
    if (down) {
      client.destroy()
      return
    }
    const server = net.connect(upstream.port, upstream.host)
    const pair: [net.Socket, net.Socket] = [client, server]
    pairs.add(pair)
    const close = () => {
      pairs.delete(pair)
      client.destroy()
      server.destroy()
    }
    client.on('error', close).on('close', close)
    server.on('error', close).on('close', close)
    flow(pair, !stalled)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as net.AddressInfo
  const cutAll = () => {
    for (const [client, upstreamSocket] of pairs) {
      client.resetAndDestroy()
      upstreamSocket.destroy()
    }
    pairs.clear()
  }
  return {
    port,
    cut() {
      down = true
      cutAll()
    },
    stall() {
      stalled = true
      for (const pair of pairs) flow(pair, false)
    },
    restore() {
      down = false
      if (stalled) for (const pair of pairs) flow(pair, true)
      stalled = false
    },
    get accepted() {
      return accepted
    },
    get open() {
      return pairs.size
    },
    async stop() {
      down = true
      cutAll()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
