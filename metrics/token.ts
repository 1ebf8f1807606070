import { createHash, timingSafeEqual } from 'node:crypto'

/** sha-256, so the comparison takes the same time whatever the lengths. */
const digest = (text: string) => createHash('sha256').update(text).digest()

/**
 * The check of a scrape's `Authorization` header against METRICS_TOKEN (the API's /metrics and a worker's):
 * `missing` without a header, `invalid` for any other than `Bearer <token>` (compared in constant time), `ok`
 * otherwise; every scrape is `ok` when no token is set.
 *
 * @example
 * const check = metricsTokenCheck('s3cret-metrics-token')
 * check(undefined) // 'missing'
 * check('Bearer s3cret-metrics-token') // 'ok'
 */
export function metricsTokenCheck(
  token: string | undefined,
): (authorization: string | undefined) => 'ok' | 'missing' | 'invalid' {
  const expected = token === undefined ? undefined : digest(`Bearer ${token}`)
  return (authorization) => {
    if (!expected) return 'ok'
    if (!authorization) return 'missing'
    return timingSafeEqual(digest(authorization), expected) ? 'ok' : 'invalid'
  }
}

/** What `createGuessBudget` keeps: refusals per address in the current window. */
export interface GuessBudget {
  /** Seconds until the address may try again, when it is over its budget; undefined when it may try now. */
  overFor(address: string): number | undefined
  /** Counts one refused scrape of the address. */
  refused(address: string): void
}

/**
 * A budget of refused scrapes per address: at most `max` in each window of `windowMs` (the API's rate-limit
 * sizes, RATE_LIMIT_MAX and RATE_LIMIT_WINDOW_MS), so METRICS_TOKEN guesses on a worker's port meet 429 as they do
 * on the API's /metrics. In memory: one worker process, one count; the window starts at an address's first
 * refusal.
 *
 * @example
 * const budget = createGuessBudget({ max: 600, windowMs: 60_000 })
 * budget.refused('10.0.0.7'); budget.overFor('10.0.0.7') // undefined until the 601st refusal
 */
export function createGuessBudget(options: { max: number; windowMs: number }, now = Date.now): GuessBudget {
  const windows = new Map<string, { start: number; count: number }>()
  const current = (address: string) => {
    const w = windows.get(address)
    if (w && now() - w.start < options.windowMs) return w
    windows.delete(address)
    return undefined
  }
  return {
    overFor(address) {
      const w = current(address)
      if (!w || w.count < options.max) return undefined
      return Math.max(1, Math.ceil((w.start + options.windowMs - now()) / 1000))
    },
    refused(address) {
      const w = current(address)
      if (w) w.count++
      else {
        // forget the windows that ended: the map holds only the addresses of the last window
        for (const [key, old] of windows) if (now() - old.start >= options.windowMs) windows.delete(key)
        windows.set(address, { start: now(), count: 1 })
      }
    },
  }
}
