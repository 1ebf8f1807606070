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
