import type { DayRow } from '../../db/repos/days.ts'
import type { NewWebhookEvent } from '../../db/repos/webhooks.ts'

/**
 * The day.finalized event of a run made visible: to every subscribed organization, once per (day, version).
 * `recomputed` is true when a visible version with other figures existed before; a recompute whose records are
 * unchanged (the same content hash and day-level records) publishes no version and emits nothing (the caller
 * checks). A recompute links the versions: the previous version
 * and content hash, the reason, and the day's restatement log (`GET /v1/reports/{date}/versions`).
 */
export function dayFinalizedEvent(
  day: Pick<DayRow, 'chain_id' | 'report_epoch' | 'visible_version' | 'content_hash' | 'block_number'>,
  run: { version: number },
  date: string,
  contentHash: string,
  wallets: number,
  reason: string,
): NewWebhookEvent {
  return {
    type: 'day.finalized',
    factKey: `day.finalized:${day.chain_id}:${day.report_epoch}:v${run.version}`,
    orgId: null,
    data: {
      chain_id: day.chain_id,
      date,
      report_epoch: String(day.report_epoch),
      block_number: String(day.block_number),
      version: run.version,
      content_hash: contentHash,
      wallets,
      recomputed: day.visible_version !== null,
      previous_version: day.visible_version,
      previous_content_hash: day.content_hash,
      // the restatement log: why this version was made, and where every version of the day is listed
      reason,
      versions_url: `/v1/reports/${date}/versions`,
    },
  }
}
