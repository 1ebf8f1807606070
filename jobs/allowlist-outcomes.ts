import type { Logger } from '../common/logger.ts'
import type { Db } from '../db/index.ts'
import { ALLOWLIST_CHANGE_REASON_PREFIX, type AllowlistChangeRow, createRepos } from '../db/repos/index.ts'

/** The longest a change whose write reverted waits before its next try. */
export const MAX_RETRY_DELAY_MS = 60_000

/**
 * How long a change waits before its next try after `attempts` tries that reverted: 2 s, doubling, at most
 * MAX_RETRY_DELAY_MS (a pass runs every 2 s; a change the chain refuses for a while is tried about once a minute).
 *
 * @example
 * retryDelayMs(1) // 2000
 * retryDelayMs(9) // 60000
 */
export function retryDelayMs(attempts: number): number {
  return Math.min(2_000 * 2 ** Math.max(0, attempts - 1), MAX_RETRY_DELAY_MS)
}

/** What a writer's pass did with its changes. */
export interface WriterResult {
  sent: { txHash: string; addresses: number }[]
  /** Changes that failed for good: the revert is one no retry can change (the zero address, a denied address). */
  failed: { address: string; reason: string }[]
  /** Changes whose write reverted for a reason a retry may cure: pending, tried again after a delay. */
  retrying: { address: string; reason: string }[]
  /** Another writer was running (in this process or another): this pass did nothing. */
  busy: boolean
}

/**
 * What the allowlist writer records when a change does or does not land, so that a change that cannot land is
 * never silent: the change's state, a note on its wallet (`status_reason`, beginning with "allowlist change ("),
 * a `wallet.allowlist_change_failed` webhook event and a log line; the metrics read the changes' states. When a
 * change lands, the wallet's note goes.
 */
export function createAllowlistOutcomes(db: Db, logger: Logger) {
  const repos = createRepos(db)

  /**
   * Notes `text(row)` on each row's wallet and emits the event (once per change and finality); `rows` carry the
   * attempts made so far, this one included.
   */
  async function note(
    rows: AllowlistChangeRow[],
    reason: string,
    final: boolean,
    text: (row: AllowlistChangeRow) => string,
  ) {
    for (const row of rows) {
      const wallet = await repos.wallets.update(row.wallet_id, { status_reason: text(row) })
      await repos.webhooks.emitAllowlistChangeFailed(wallet, row, reason, final)
    }
  }

  return {
    /** The changes failed for good with `reason`: marked failed, noted on their wallets. */
    async failed(rows: AllowlistChangeRow[], reason: string, result: WriterResult): Promise<void> {
      await repos.allowlistChanges.mark(
        rows.map((r) => r.id),
        { state: 'failed', error: reason, attempts: (rows[0]?.attempts ?? 0) + 1 },
      )
      await note(
        rows.map((r) => ({ ...r, attempts: r.attempts + 1 })),
        reason,
        true,
        (row) => `${ALLOWLIST_CHANGE_REASON_PREFIX}${row.reason}) reverted: ${reason}`,
      )
      for (const row of rows) result.failed.push({ address: row.address, reason })
      logger.warn({ addresses: rows.map((r) => r.address), reason }, 'allowlist change failed for good')
    },

    /**
     * Pending changes whose simulation reverted with `reason`, which a retry may cure: they stay pending, one
     * attempt more, and wait `retryDelayMs` before the next try; noted on their wallets.
     */
    async deferred(rows: AllowlistChangeRow[], reason: string, result: WriterResult): Promise<void> {
      for (const row of rows) {
        const attempts = row.attempts + 1
        const delayMs = retryDelayMs(attempts)
        await repos.allowlistChanges.defer([row.id], { error: reason, delayMs, attempts })
        await note([{ ...row, attempts }], reason, false, (r) => retryingText(r, reason, attempts, delayMs))
        result.retrying.push({ address: row.address, reason })
      }
      logger.warn(
        { addresses: rows.map((r) => r.address), reason },
        'allowlist change reverted; retried later',
      )
    },

    /**
     * Submitted changes (their attempts count the transaction) whose mined transaction reverted: pending again (superseded where a newer change of the
     * address exists), retried after a delay; noted on their wallets. The next simulation says why.
     */
    async reverted(rows: AllowlistChangeRow[], txHash: string, result: WriterResult): Promise<void> {
      const reason = `transaction ${txHash} reverted`
      const attempts = Math.max(...rows.map((r) => r.attempts))
      const delayMs = retryDelayMs(attempts)
      const settled = await repos.allowlistChanges.requeue(
        rows.map((r) => r.id),
        { error: reason, delayMs },
      )
      await note(rows, reason, false, (r) => retryingText(r, reason, attempts, delayMs))
      for (const row of rows) result.retrying.push({ address: row.address, reason })
      logger.warn(
        { tx_hash: txHash, ...settled },
        'allowlist transaction reverted; its changes retried later',
      )
    },

    /**
     * The writer's key cannot write the Allowlist (`message` says why): the changes stay pending, noted on their
     * wallets, with the event (not final: a role can be granted again).
     */
    async waiting(rows: AllowlistChangeRow[], message: string): Promise<void> {
      await note(
        rows,
        message,
        false,
        (row) => `${ALLOWLIST_CHANGE_REASON_PREFIX}${row.reason}) waiting: ${message}`,
      )
    },

    /** The changes landed (a successful transaction): confirmed, and their wallets' writer notes cleared. */
    async landed(rows: AllowlistChangeRow[]): Promise<void> {
      await repos.allowlistChanges.confirmSubmitted(rows.map((r) => r.id))
      await repos.wallets.clearReasonWithPrefix(
        rows.map((r) => r.wallet_id),
        ALLOWLIST_CHANGE_REASON_PREFIX,
      )
    },
  }
}

/** The wallet note of a change retried later. */
function retryingText(row: AllowlistChangeRow, reason: string, attempts: number, delayMs: number): string {
  return (
    `${ALLOWLIST_CHANGE_REASON_PREFIX}${row.reason}) reverted: ${reason}; ` +
    `retried in ${delayMs / 1000} s (attempt ${attempts})`
  )
}

/** The outcome recorder `createAllowlistOutcomes` returns. */
export type AllowlistOutcomes = ReturnType<typeof createAllowlistOutcomes>
