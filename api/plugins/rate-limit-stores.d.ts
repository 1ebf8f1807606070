// Types of the two stores @fastify/rate-limit counts in (its own declarations name their interface, not
// their classes): the app's rate limit hook counts in the store the plugin is given (api/plugins/rate-limit.ts).

declare module '@fastify/rate-limit/store/LocalStore.js' {
  import type { FastifyRateLimitStore } from '@fastify/rate-limit'

  /** Counts in memory (an LRU of `cache` keys, 5,000 by default). */
  const LocalStore: new (
    continueExceeding: boolean,
    exponentialBackoff: boolean,
    cache?: number,
  ) => FastifyRateLimitStore
  export default LocalStore
}

declare module '@fastify/rate-limit/store/RedisStore.js' {
  import type { FastifyRateLimitStore } from '@fastify/rate-limit'
  import type { Redis } from 'ioredis'

  /** Counts in Redis under `key` followed by the client's key (one Lua script a count). */
  const RedisStore: new (
    continueExceeding: boolean,
    exponentialBackoff: boolean,
    redis: Redis,
    key?: string,
  ) => FastifyRateLimitStore
  export default RedisStore
}
