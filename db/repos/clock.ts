import type { Knex } from 'knex'
import type { Queryable } from '../index.ts'

/**
 * The chain's "now": the time of the head block the follower last saw (`chain_heads`), or the database's
 * clock before the follower has seen any. Off-chain registrations (a wallet, its removal from the
 * On-Platform list, a target fee rate) are stamped with it and count for the reports mined after it, on
 * mainnet (where both clocks agree) and on the devnet (whose simulated time runs apart from ours) alike.
 *
 * @example
 * await tx('discount_rates').insert({ ..., effective_from: chainClock(tx) })
 */
export function chainClock(db: Queryable): Knex.Raw {
  return db.raw('coalesce((select max(time) from chain_heads), now())')
}
