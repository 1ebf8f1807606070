/** The longest wait between two attempts of a delivery. */
export const MAX_RETRY_DELAY_MS = 60 * 60 * 1000

/**
 * Exponential backoff: the wait after attempt `attempt` (1-based) failed, `base * 2^(attempt-1)`, at most
 * one hour.
 *
 * @example
 * retryDelayMs(1, 10_000) // 10_000
 * retryDelayMs(4, 10_000) // 80_000
 */
export function retryDelayMs(attempt: number, baseMs: number): number {
  return Math.min(MAX_RETRY_DELAY_MS, baseMs * 2 ** Math.max(0, Math.min(attempt - 1, 30)))
}
