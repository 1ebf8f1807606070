import { LRUCache } from 'lru-cache'

/** What the token check needs to know about a client now: absent (deleted), or its org and revocation. */
export interface ClientStatus {
  orgId: string
  revoked: boolean
}

/** Reads a client's status from the store (one indexed row). */
export type ClientStatusLookup = (clientId: string) => Promise<ClientStatus | undefined>

/** How long a client's status is reused before it is read again: revocation takes effect within this. */
export const CLIENT_STATUS_TTL_MS = 2_000

/**
 * A short-lived cache of client statuses (lru-cache: at most `maxEntries`, each for `ttlMs` after it was
 * read), so every authenticated request checks that its token's client still exists and is not revoked (a
 * revoked client's tokens stop working within `ttlMs`) at the cost of at most one query per client per
 * `ttlMs`. Concurrent lookups of one client share a query; a failed lookup is not kept. `now` (tests) is the
 * cache's clock in milliseconds: it must not start at 0 (lru-cache reads a start of 0 as "no ttl").
 *
 * @example
 * const status = createClientStatusCache(async (id) => ({ orgId: 'org_1', revoked: false }))
 * await status.active('cl_1', 'org_1') // true
 */
export function createClientStatusCache(
  lookup: ClientStatusLookup,
  options: { ttlMs?: number; maxEntries?: number; now?: () => number } = {},
) {
  // the status boxed: a deleted client (undefined) is kept too, and lru-cache holds no undefined value
  const cache = new LRUCache<string, { status: ClientStatus | undefined }>({
    max: options.maxEntries ?? 10_000,
    ttl: options.ttlMs ?? CLIENT_STATUS_TTL_MS,
    fetchMethod: async (clientId) => ({ status: await lookup(clientId) }),
    // the clock read on each lookup: with a resolution above 0, lru-cache keeps the time it read and arms a
    // timer to forget it a millisecond later, a timer per millisecond under load (~1 µs a request, bench:api)
    ttlResolution: 0,
    ...(options.now ? { perf: { now: options.now } } : {}),
  })

  return {
    /** True when the client exists, is not revoked and belongs to `orgId` (the token's org). */
    async active(clientId: string, orgId: string): Promise<boolean> {
      return isActive((await cache.fetch(clientId))?.status, orgId)
    },

    /** `active` from the cache alone, with no promise: undefined when the status is not held (or too old). */
    activeNow(clientId: string, orgId: string): boolean | undefined {
      const held = cache.get(clientId)
      return held && isActive(held.status, orgId)
    },
  }
}
function isActive(status: ClientStatus | undefined, orgId: string): boolean {
  return status !== undefined && !status.revoked && status.orgId === orgId
}

export type ClientStatusCache = ReturnType<typeof createClientStatusCache>
