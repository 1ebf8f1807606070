/**
 * The pure reward and fee engine of lsreport: plain data in, plain data out; no I/O, no clock, no env.
 * Amounts are bigint wei (LsETH share units); rates and presented amounts are decimal strings.
 * See engine/README.md for every formula, its inputs, units and rounding.
 */

/**
 * Version stamped on computed records (`engine_version`): bump when a formula or a rounding changes.
 * 1.2.0: balance_lseth is the balance at the end of the report transaction (its fee mint and burns included);
 * the LsETH flows are also kept in ETH at each day's rate (balance_eth, mints_eth, burns_eth and totals);
 * a_srr_7d is null until seven report dates of its window have a step.
 * 1.3.0: a report whose fee exceeds g x gross (River 1.x charging EL fees on a day the validators lost balance)
 * measures its rates and rebates on the fee-bearing rewards fees / g (fee-base.ts), not on gross rewards.
 * 1.3.1: a report whose fee is g x gross to the chain's roundings states its fee-part rates from g itself
 * (0.035, not the measured 0.034999999999999999; fee-base.ts); amounts unchanged.
 *
 * @example
 * row.engine_version = ENGINE_VERSION
 */
export const ENGINE_VERSION = '1.3.1'

export * from './account-record.ts'
export * from './dates.ts'
export * from './discount.ts'
export * from './dormant-record.ts'
export * from './errors.ts'
export * from './exit-queue.ts'
export * from './fee-base.ts'
export * from './fee-model-fields.ts'
export * from './fee-schedule.ts'
export * from './fee-split.ts'
export * from './fee-totals.ts'
export * from './fiat.ts'
export * from './field-kinds.ts'
export * from './journal.ts'
export * from './lots.ts'
export * from './operator-fees.ts'
export * from './period-presenting.ts'
export * from './periods.ts'
export * from './projections.ts'
export * from './protocol-record.ts'
export * from './range-summary.ts'
export * from './rates.ts'
export * from './reconciliation.ts'
export * from './record-fields.ts'
export * from './redemptions.ts'
export * from './rollup.ts'
export * from './rollup-days.ts'
export * from './units.ts'
export * from './wallet-record.ts'
