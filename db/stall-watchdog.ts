import type net from 'node:net'

/** The parts of a node-postgres client the watchdog reads (its socket and whether a query is out). */
interface PgClientInternals {
  connection?: { stream?: net.Socket }
  _activeQuery?: unknown
  _queryQueue?: unknown[]
}

/** Raised (as the socket's error) when a query heard nothing from the database for the stall bound. */
export class DatabaseStallError extends Error {
  constructor(ms: number) {
    super(`the database sent nothing for ${ms} ms during a query: connection dropped`)
    this.name = 'DatabaseStallError'
  }
}

/**
 * Bounds a query on a network that silently stops forwarding (no reset, no FIN: the socket stays open and
 * TCP keepalive takes minutes): when a query is out and the socket has seen no byte either way for `ms`,
 * the socket is destroyed. node-postgres then fails the query with "Connection terminated", which the API
 * answers 503 IR5030, and knex drops the connection from its pool. An idle pooled connection is left be.
 */
export function watchForStalls(client: unknown, ms: number): void {
  const pg = client as PgClientInternals
  const stream = pg.connection?.stream
  if (!stream || typeof stream.setTimeout !== 'function') return
  stream.setTimeout(ms)
  stream.on('timeout', () => {
    const busy = pg._activeQuery != null || (pg._queryQueue?.length ?? 0) > 0
    if (busy) stream.destroy(new DatabaseStallError(ms))
  })
}
