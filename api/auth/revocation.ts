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
 * A short-lived cache of client statuses, so every authenticated request checks that its token's client
 * still exists and is not revoked (a revoked client's tokens stop working within `ttlMs`) at the cost of
 * at most one query per client per `ttlMs`. Concurrent lookups of one client share a query.
 *
 * @example
 * const status = createClientStatusCache(async (id) => ({ orgId: 'org_1', revoked: false }))
 * await status.active('cl_1', 'org_1') // true
 */
export function createClientStatusCache(
  lookup: ClientStatusLookup,
  options: { ttlMs?: number; maxEntries?: number; now?: () => number } = {},
) {
  const ttlMs = options.ttlMs ?? CLIENT_STATUS_TTL_MS
  const maxEntries = options.maxEntries ?? 10_000
  const now = options.now ?? Date.now
  const cache = new Map<string, { status: ClientStatus | undefined; at: number }>()
  const inFlight = new Map<string, Promise<ClientStatus | undefined>>()

  async function status(clientId: string): Promise<ClientStatus | undefined> {
    const hit = cache.get(clientId)
    if (hit && now() - hit.at < ttlMs) return hit.status
    let pending = inFlight.get(clientId)
    if (!pending) {
      const at = now()
      pending = lookup(clientId)
        .then((s) => {
          cache.delete(clientId)
          if (cache.size >= maxEntries) cache.delete(cache.keys().next().value as string)
          cache.set(clientId, { status: s, at })
          return s
        })
        .finally(() => inFlight.delete(clientId))
      inFlight.set(clientId, pending)
    }
    return pending
  }

  return {
    /** True when the client exists, is not revoked and belongs to `orgId` (the token's org). */
    async active(clientId: string, orgId: string): Promise<boolean> {
      return isActive(await status(clientId), orgId)
    },

    /** `active` from the cache alone, with no promise: undefined when the status is not held (or too old). */
    activeNow(clientId: string, orgId: string): boolean | undefined {
      const hit = cache.get(clientId)
      return hit && now() - hit.at < ttlMs ? isActive(hit.status, orgId) : undefined
    },
  }
}
function isActive(status: ClientStatus | undefined, orgId: string): boolean {
  return status !== undefined && !status.revoked && status.orgId === orgId
}

export type ClientStatusCache = ReturnType<typeof createClientStatusCache>
