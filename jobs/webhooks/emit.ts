import type { Repos } from '../../db/repos/index.ts'

type Position = { block_number: string; log_index: number }

function positions(rows: Record<string, unknown>[] | undefined): Position[] {
  return (rows ?? []).map((r) => ({ block_number: String(r.block_number), log_index: Number(r.log_index) }))
}

/**
 * Called by the follower in the transaction that inserted a chunk's events: emits redeem.satisfied and
 * redeem.claimed for its SatisfiedRedeemRequest and ClaimedRedeemRequest rows (to the organization whose
 * wallet owns each redeem request), once per log. `repos`: those of that transaction (`inTransaction`).
 */
export async function emitRedeemEvents(
  repos: Repos,
  chainId: number,
  tables: ReadonlyMap<string, Record<string, unknown>[]>,
): Promise<void> {
  await repos.webhooks.emitRedeemEvents(chainId, 'satisfied', positions(tables.get('redeem_satisfactions')))
  await repos.webhooks.emitRedeemEvents(chainId, 'claimed', positions(tables.get('redeem_claims')))
}
