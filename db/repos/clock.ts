import type { Knex } from 'knex'
import type { Queryable } from '../index.ts'

/**
 * The chain's "now": the time of the head block the follower last saw (`chain_heads`), or the database's
 * clock before the follower has seen any. Off-chain registrations (a wallet, its removal from the
 * On-Platform list, a target fee rate) are stamped with it and count for the reports mined after it, on
 * mainnet (where both clocks agree) and on the devnet (whose simulated time runs apart from ours) alike.
 * The head rows it reads stay share-locked until the registration's transaction ends: a day computed
 * concurrently sees the registration whenever it counts for that day (a finalized day never changes).
 *
 * @example
 * await tx('discount_rates').insert({ ..., effective_from: chainClock(tx) })
 */
export function chainClock(db: Queryable): Knex.Raw {
  // FOR SHARE: the follower's next head waits for this registration to commit, so no report past the head
  // read here is ingested, nor its day computed, before the registration is visible
  return db.raw('coalesce((select max(time) from (select time from chain_heads for share) h), now())')
}
