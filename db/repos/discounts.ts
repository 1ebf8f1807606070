import type { Queryable } from '../index.ts'
import { chainClock } from './clock.ts'

/** One row of `discount_rates`: a target fee rate set for an account (history kept, latest in force). */
export interface DiscountRateRow {
  id: string
  account_id: string
  target_fee_rate: string
  created_by: string
  created_at: Date
  /** Chain time from which the rate is in force (see chainClock). */
  effective_from: Date
}

/** Per-account target fee rates; each POST adds a row (history kept). */
export function createDiscountsRepo(db: Queryable) {
  return {
    /** Adds a target fee rate for an account, in force from the chain clock now; returns the row. */
    async add(input: {
      accountId: string
      targetFeeRate: string
      createdBy: string
    }): Promise<DiscountRateRow> {
      const [row] = await db<DiscountRateRow>('discount_rates')
        .insert({
          account_id: input.accountId,
          target_fee_rate: input.targetFeeRate,
          created_by: input.createdBy,
          effective_from: chainClock(db),
        })
        .returning('*')
      return row!
    },
    /** The rate in force at chain time `at`: the latest effective before it. */
    async inForce(accountId: string, at: Date): Promise<DiscountRateRow | undefined> {
      return db<DiscountRateRow>('discount_rates')
        .where({ account_id: accountId })
        .where('effective_from', '<', at)
        .orderBy([
          { column: 'effective_from', order: 'desc' },
          { column: 'id', order: 'desc' },
        ])
        .first()
    },
    /** Every rate of the account, oldest first. */
    async history(accountId: string): Promise<DiscountRateRow[]> {
      return db<DiscountRateRow>('discount_rates').where({ account_id: accountId }).orderBy('id')
    },
  }
}
/** The discounts repository `createDiscountsRepo` returns. */
export type DiscountsRepo = ReturnType<typeof createDiscountsRepo>
