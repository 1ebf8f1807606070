import {
  WALLET_AMOUNT_FIELDS as RECORD_AMOUNT_FIELDS,
  CUMULATIVE_FIELDS as RECORD_CUMULATIVE_FIELDS,
} from '../fields/record-fields.ts'
import { utcDateOf } from './dates.ts'
import type { PreparedDiscount } from './discount.ts'
import { prepareDiscount } from './discount.ts'
import { FeeScheduleError, InvalidInputError } from './errors.ts'
import type { FeeBase } from './fee-base.ts'
import { reportFeeBase } from './fee-base.ts'
import type { FeeModel, FeeSchedule } from './fee-schedule.ts'
import { feeModelAt } from './fee-schedule.ts'
import type { FeePartRates, PreparedFeeSplit } from './fee-split.ts'
import { feePartRates, prepareFeeSplit } from './fee-split.ts'
import { computeEarnedAmounts } from './period-amounts.ts'
import { conversionRate, feeBpsToBigint, feeRateOfBps, underlyingFromShares } from './rates.ts'
import type { Fraction } from './units.ts'

/**
 * The wallet reward record of one oracle report: the hot path of the service (every holder, every report).
 * `prepareReport` turns the report into integer constants once; `computeWalletRecord` is then a handful of
 * bigint multiplications and floor divisions per wallet, with one floor per amount.
 */

/** What the engine needs to know about an oracle report k (integers as on chain). */
export interface ReportInput {
  /** Identifier of the report as stored (e.g. the report's epoch or transaction hash). */
  oracle_report: string
  /** Block time of the report, unix seconds. Selects the fee model and gives `date` (UTC). */
  timestamp: number
  /** U_k: total underlying (wei) after the report (at the end of the report transaction). */
  underlying: bigint
  /** S0_k: total supply before the fee mint (RewardsEarned.oldTotalSupply; = supply when nothing minted). */
  supply_pre_fee: bigint
  /** S_k: total supply after the report (after the fee mint and any burn of the report transaction). */
  supply: bigint
  /**
   * U at the fee mint (RewardsEarned.newTotalUnderlyingBalance): the pre-fee rate is this / S0. The report's
   * withdrawal event burns the RedeemManager's shares after the fee mint, moving U and S (almost exactly at
   * the post-fee rate); default `underlying` (no burn in the report transaction).
   */
  underlying_at_fee_mint?: bigint
  /** U_{k-1}: total underlying after the previous report. */
  previous_underlying: bigint
  /** S_{k-1}: total supply after the previous report. */
  previous_supply: bigint
  /** Global fee in basis points in force at the report. */
  global_fee_bps: number | bigint
  /** The fee schedule in force at the report's block time (see `selectFeeSchedule`). */
  fee_schedule: FeeSchedule
}

/** Per-report constants, computed once by `prepareReport` and shared by every wallet of the report. */
export interface ReportContext {
  readonly oracle_report: string
  readonly timestamp: number
  readonly date: string
  readonly fee_model: FeeModel
  readonly fee_schedule_id: string
  readonly underlying: bigint
  readonly supply: bigint
  /** U at the fee mint (= underlying when the report transaction burns nothing after it). */
  readonly underlying_at_fee_mint: bigint
  readonly global_fee_bps: bigint
  /** rate_k = U_k / S_k (18 dp, ROUND_DOWN). */
  readonly conversion_rate: string
  /** rate_{k-1} = U_{k-1} / S_{k-1}. */
  readonly previous_conversion_rate: string
  /** rate_pre_fee_k = U at the fee mint / S0_k. */
  readonly rate_pre_fee: string
  /** g = bps / 10000, exact. */
  readonly gross_protocol_fee_rate: string
  /**
   * rate_pre_fee_k - rate_{k-1} as an exact fraction (gross reward per share); the net step when a burn after the
   * fee mint lifted rate_k above rate_pre_fee_k.
   */
  readonly gross_step: Fraction
  /** rate_k - rate_{k-1} as an exact fraction (net reward per share). */
  readonly net_step: Fraction
  /**
   * What the report's rates and rebates are measured against (fee-base.ts): `gross` (the gross rewards) or
   * `charged` (fee > g x gross, River 1.x charging EL fees on a day the pool gained less: fees / g).
   */
  readonly fee_base: FeeBase
  /** fees / fee-bearing rewards of the report, exact: fees / gross (0 when gross <= 0) or g (`charged`). */
  readonly fee_of_base: Fraction
  readonly split: PreparedFeeSplit
  readonly rates_on_platform: FeePartRates
  readonly rates_off_platform: FeePartRates
  /** Memo of prepared discounts by target string (an invisible cache; results do not depend on it). */
  readonly discounts: Map<string, PreparedDiscount>
}

/** The cumulative fields of a wallet record (the previous record's totals feed the next record). */
export interface WalletTotals {
  total_rewards_eth: bigint
  total_mints_lseth: bigint
  total_burns_lseth: bigint
  /** Running sum of `mints_eth`: each day's minted shares valued at that day's rate. */
  total_mints_eth: bigint
  /** Running sum of `burns_eth`. */
  total_burns_eth: bigint
  total_fees_eth: bigint
  total_lc_fees_lseth: bigint
  total_tech_provider_fees_lseth: bigint
  total_platform_fees_eth: bigint
  total_operator_fees_eth: bigint
  total_lc_fees_eth: bigint
  total_tech_provider_fees_eth: bigint
  total_dao_fees_eth: bigint
  total_provider_fees_eth: bigint
  total_slashing_fees_eth: bigint
  total_platform_fees_at_discount_rate_eth: bigint
  total_gross_fees_eth: bigint
  total_gross_rewards_eth: bigint
  total_rebate_eth: bigint
  total_rebate_lseth: bigint
}

/** One wallet at one report. Only `address`, `shares`, `mints`, `burns` and `previous` are required. */
export interface WalletInput {
  address: string
  /**
   * The earning shares: the wallet's LsETH right before the report transaction. They earn the report's
   * rewards (shares the report mints earn nothing that report; shares it burns earned it).
   */
  shares: bigint
  /**
   * Net LsETH the report transaction itself moved to (+) or from (-) the wallet: the fee mint to the
   * collector, the RedeemManager's shares burned by the withdrawal event. Default 0n.
   * `balance_lseth` = shares + report_delta: the balance at the end of the report transaction.
   */
  report_delta?: bigint
  /** Shares minted to the wallet (from 0x0) after the previous report transaction, up to this one included. */
  mints: bigint
  /** Shares burned or redeemed from the wallet after the previous report transaction, up to this one included. */
  burns: bigint
  /** The previous record's totals (any object with the `total_*` fields), or null for the first record. */
  previous: WalletTotals | null
  /** Account holding the wallet at the report's block time, if registered. */
  account_id?: string | null
  /** Org owning that account (the platform org), if registered. */
  org_id?: string | null
  /** On the On-Platform list at the report's block time. Requires `org_id`. */
  on_platform?: boolean
  /** The account's target fee rate in force at the report (latest created before the block time), if any. */
  target_fee_rate?: string | null
}

/**
 * The superset wallet record: every field of the v1 record and of the v0 additional fields, plus a few
 * extras (ETH values of the lc / tech provider parts, the rates of every part, the model and target in force).
 * Amounts are bigint wei (LsETH share units for `_lseth`), rates decimal strings.
 */
export interface WalletRecord extends WalletTotals, FeePartRates {
  oracle_report: string
  address: string
  account_id: string | null
  org_id: string | null
  date: string
  fee_model: FeeModel
  fee_schedule_id: string
  on_platform: boolean
  target_fee_rate: string | null
  balance_lseth: bigint
  /** `balance_lseth` valued at the report's rate, floor(balance x U / S). */
  balance_eth: bigint
  rewards_eth: bigint
  conversion_rate: string
  previous_conversion_rate: string
  mints_lseth: bigint
  burns_lseth: bigint
  /** `mints_lseth` valued at the report's rate, floor(mints x U / S): the ETH flow of the day. */
  mints_eth: bigint
  /** `burns_lseth` valued at the report's rate, floor. */
  burns_eth: bigint
  fees_eth: bigint
  period_lc_fees_lseth: bigint
  period_tech_provider_fees_lseth: bigint
  platform_fees_eth: bigint
  operator_fees_eth: bigint
  lc_fees_eth: bigint
  tech_provider_fees_eth: bigint
  dao_fees_eth: bigint
  provider_fees_eth: bigint
  slashing_fees_eth: bigint
  platform_fees_at_discount_rate_eth: bigint
  gross_protocol_fee_rate: string
  discount_rate: string
  gross_fees_eth: bigint
  gross_rewards_eth: bigint
  rebate_eth: bigint
  rebate_lseth: bigint
}

/** Pairs (period field, cumulative field): total = previous total + period value (fields/record-fields.ts). */
export const CUMULATIVE_FIELDS = RECORD_CUMULATIVE_FIELDS satisfies ReadonlyArray<
  readonly [keyof WalletRecord, keyof WalletTotals]
>

/** Every bigint field of a wallet record (balance, period amounts and totals; fields/record-fields.ts). */
export const WALLET_AMOUNT_FIELDS = RECORD_AMOUNT_FIELDS satisfies ReadonlyArray<keyof WalletRecord>

/** An amount field name of the wallet record. */
export type WalletAmountField = (typeof WALLET_AMOUNT_FIELDS)[number]

const ZERO_TOTALS: WalletTotals = Object.freeze({
  total_rewards_eth: 0n,
  total_mints_lseth: 0n,
  total_burns_lseth: 0n,
  total_mints_eth: 0n,
  total_burns_eth: 0n,
  total_fees_eth: 0n,
  total_lc_fees_lseth: 0n,
  total_tech_provider_fees_lseth: 0n,
  total_platform_fees_eth: 0n,
  total_operator_fees_eth: 0n,
  total_lc_fees_eth: 0n,
  total_tech_provider_fees_eth: 0n,
  total_dao_fees_eth: 0n,
  total_provider_fees_eth: 0n,
  total_slashing_fees_eth: 0n,
  total_platform_fees_at_discount_rate_eth: 0n,
  total_gross_fees_eth: 0n,
  total_gross_rewards_eth: 0n,
  total_rebate_eth: 0n,
  total_rebate_lseth: 0n,
})

function checkAmount(value: bigint, field: string, min: bigint): void {
  if (typeof value !== 'bigint' || value < min) {
    throw new InvalidInputError(`${field} must be a bigint >= ${min}`, {
      details: { field, value: String(value) },
    })
  }
}

/**
 * Validates a report and computes its per-report constants once: rates, the exact per-share gross and net
 * steps, the fee base and fee-to-base ratio (fee-base.ts), the prepared fee split and the part rates.
 *
 * @example
 * const ctx = prepareReport({ oracle_report: '1', timestamp: 1777593600, underlying: 1001n * E, supply_pre_fee: 1000n * E,
 *   supply: 1000n * E + 99910080927165551n, previous_underlying: 1000n * E, previous_supply: 1000n * E,
 *   global_fee_bps: 1000, fee_schedule: v3Schedule })
 * ctx.rate_pre_fee // '1.001'
 */
export function prepareReport(report: ReportInput): ReportContext {
  const U = report.underlying
  const S0 = report.supply_pre_fee
  const S = report.supply
  const Up = report.previous_underlying
  const Sp = report.previous_supply
  checkAmount(U, 'underlying', 0n)
  checkAmount(S0, 'supply_pre_fee', 1n)
  checkAmount(S, 'supply', 1n)
  checkAmount(Up, 'previous_underlying', 0n)
  checkAmount(Sp, 'previous_supply', 1n)
  const Um = report.underlying_at_fee_mint ?? U
  checkAmount(Um, 'underlying_at_fee_mint', 0n)
  // fees = shares x (Um/S0 - U/S). The report itself cannot raise the rate above the pre-fee rate, but the
  // withdrawal event's burn after the fee mint pays floor(shares x rate) and so lifts the rate by less than 1 wei
  // over all shares (U S0 - Um S < S0); when a tiny fee mint diluted less than that, the lift is a gain, not a fee
  const lift = U * S0 - Um * S
  if (lift >= S0 || (lift > 0n && report.underlying_at_fee_mint === undefined)) {
    throw new InvalidInputError('the rate after the report is above the rate before the fee mint', {
      details: {
        supply: String(S),
        supply_pre_fee: String(S0),
        underlying: String(U),
        underlying_at_fee_mint: String(Um),
      },
    })
  }
  const bps = feeBpsToBigint(report.global_fee_bps)
  const date = utcDateOf(report.timestamp)
  const model = feeModelAt(report.timestamp)
  if (report.fee_schedule.model !== model) {
    throw new FeeScheduleError(`report at ${date} needs a ${model} fee schedule`, {
      code: 'FEE_SCHEDULE_MISSING',
      details: { timestamp: report.timestamp, schedule: report.fee_schedule.id },
    })
  }
  const split = prepareFeeSplit(report.fee_schedule)
  // exact per-share steps: Um/S0 - Up/Sp (pre-fee) and U_k/S - Up/Sp (post-report)
  const netStep = { num: U * Sp - Up * S, den: S * Sp }
  // with a burn's lift above the pre-fee rate, gross is the net step and the fee is 0
  const grossStep = lift > 0n ? netStep : { num: Um * Sp - Up * S0, den: S0 * Sp }
  // fee step = Um/S0 - U/S = (Um S - U S0) / (S0 S); with a lift (or no mint) the fee is 0
  const feeStep = { num: lift < 0n ? -lift : 0n, den: S0 * S }
  // the base of the rates and rebates: gross, or fees / g when River charged more than the pool gained; the
  // ratio fee / base is g when the fee is g x gross to the chain's roundings (the pool at the mint: Um / S0)
  const base = reportFeeBase(grossStep, feeStep, bps, { underlying: Um, supply: S0 })
  return {
    oracle_report: report.oracle_report,
    timestamp: report.timestamp,
    date,
    fee_model: model,
    fee_schedule_id: split.schedule_id,
    underlying: U,
    supply: S,
    underlying_at_fee_mint: Um,
    global_fee_bps: bps,
    conversion_rate: conversionRate(U, S),
    previous_conversion_rate: conversionRate(Up, Sp),
    rate_pre_fee: conversionRate(Um, S0),
    gross_protocol_fee_rate: feeRateOfBps(bps),
    gross_step: grossStep,
    net_step: netStep,
    fee_base: base.fee_base,
    fee_of_base: base.fee_of_base,
    split,
    rates_on_platform: feePartRates(split, base.fee_of_base, true),
    rates_off_platform: feePartRates(split, base.fee_of_base, false),
    discounts: new Map(),
  }
}

const NO_DISCOUNT: PreparedDiscount = Object.freeze({
  target_fee_rate: null,
  discount_rate: '0',
  discount: Object.freeze({ num: 0n, den: 1n }),
})

function discountFor(ctx: ReportContext, target: string): PreparedDiscount {
  let prepared = ctx.discounts.get(target)
  if (prepared === undefined) {
    prepared = prepareDiscount(ctx.global_fee_bps, target)
    ctx.discounts.set(target, prepared)
  }
  return prepared
}

/**
 * The wallet record of one wallet at one report. Per wallet, on the earning shares (held right before the
 * report transaction): gross = floor(shares x gross_step), net (rewards_eth) = floor(shares x net_step),
 * fees = gross - net; the fee split, rebate (on the fee-bearing rewards: gross, or fees / g on a `charged`
 * report) and LsETH conversions follow, and every `total_*` = previous
 * total + period value. `balance_lseth` = shares + report_delta: the balance at the end of the report
 * transaction (the collector's fee mint included).
 *
 * @example
 * computeWalletRecord(ctx, { address: '0xab…', shares: 100n * E, mints: 0n, burns: 0n, previous: null })
 * // { balance_lseth: 100000000000000000000n, gross_rewards_eth: 100000000000000000n, rewards_eth: 90009000900090009n, ... }
 */
export function computeWalletRecord(ctx: ReportContext, wallet: WalletInput): WalletRecord {
  const { shares, mints, burns } = wallet
  checkAmount(shares, 'shares', 0n)
  checkAmount(mints, 'mints', 0n)
  checkAmount(burns, 'burns', 0n)
  const reportDelta = wallet.report_delta ?? 0n
  if (typeof reportDelta !== 'bigint') {
    throw new InvalidInputError('report_delta must be a bigint', {
      details: { field: 'report_delta', value: String(reportDelta) },
    })
  }
  // the balance at the end of the report transaction; the rewards below are the earning shares'
  const balance = shares + reportDelta
  checkAmount(balance, 'shares + report_delta (the balance after the report)', 0n)
  const onPlatform = wallet.on_platform === true
  const U = ctx.underlying
  const S = ctx.supply
  const orgId = wallet.org_id ?? null
  if (onPlatform && orgId === null) {
    throw new InvalidInputError('an on-platform wallet needs the org owning its account', {
      details: { address: wallet.address },
    })
  }
  const target = onPlatform ? (wallet.target_fee_rate ?? null) : null
  const discount = target === null ? NO_DISCOUNT : discountFor(ctx, target)
  // rounding: floor (the shares' earnings, the balance and the LsETH conversions: computeEarnedAmounts)
  const e = computeEarnedAmounts(ctx, onPlatform, discount, shares, balance)
  // rounding: floor (the day's LsETH flows in ETH at rate_k, summed into the ETH totals)
  const mintsEth = underlyingFromShares(mints, U, S)
  const burnsEth = underlyingFromShares(burns, U, S)
  const rates = onPlatform ? ctx.rates_on_platform : ctx.rates_off_platform
  const p = wallet.previous ?? ZERO_TOTALS
  // one object literal: V8 builds it with a fixed layout (spreads or a loop of keyed stores made the engine
  // 5-10x slower, bench:engine), so each period field and its total are spelled out here
  return {
    oracle_report: ctx.oracle_report,
    address: wallet.address,
    account_id: wallet.account_id ?? null,
    org_id: orgId,
    date: ctx.date,
    fee_model: ctx.fee_model,
    fee_schedule_id: ctx.fee_schedule_id,
    on_platform: onPlatform,
    target_fee_rate: target,
    balance_lseth: e.balance_lseth,
    balance_eth: e.balance_eth,
    rewards_eth: e.rewards_eth,
    total_rewards_eth: p.total_rewards_eth + e.rewards_eth,
    conversion_rate: ctx.conversion_rate,
    previous_conversion_rate: ctx.previous_conversion_rate,
    mints_lseth: mints,
    total_mints_lseth: p.total_mints_lseth + mints,
    burns_lseth: burns,
    total_burns_lseth: p.total_burns_lseth + burns,
    mints_eth: mintsEth,
    total_mints_eth: p.total_mints_eth + mintsEth,
    burns_eth: burnsEth,
    total_burns_eth: p.total_burns_eth + burnsEth,
    fees_eth: e.fees_eth,
    total_fees_eth: p.total_fees_eth + e.fees_eth,
    period_lc_fees_lseth: e.period_lc_fees_lseth,
    total_lc_fees_lseth: p.total_lc_fees_lseth + e.period_lc_fees_lseth,
    period_tech_provider_fees_lseth: e.period_tech_provider_fees_lseth,
    total_tech_provider_fees_lseth: p.total_tech_provider_fees_lseth + e.period_tech_provider_fees_lseth,
    platform_fees_eth: e.platform_fees_eth,
    total_platform_fees_eth: p.total_platform_fees_eth + e.platform_fees_eth,
    operator_fees_eth: e.operator_fees_eth,
    total_operator_fees_eth: p.total_operator_fees_eth + e.operator_fees_eth,
    lc_fees_eth: e.lc_fees_eth,
    total_lc_fees_eth: p.total_lc_fees_eth + e.lc_fees_eth,
    tech_provider_fees_eth: e.tech_provider_fees_eth,
    total_tech_provider_fees_eth: p.total_tech_provider_fees_eth + e.tech_provider_fees_eth,
    dao_fees_eth: e.dao_fees_eth,
    total_dao_fees_eth: p.total_dao_fees_eth + e.dao_fees_eth,
    provider_fees_eth: e.provider_fees_eth,
    total_provider_fees_eth: p.total_provider_fees_eth + e.provider_fees_eth,
    slashing_fees_eth: e.slashing_fees_eth,
    total_slashing_fees_eth: p.total_slashing_fees_eth + e.slashing_fees_eth,
    platform_fees_at_discount_rate_eth: e.platform_fees_at_discount_rate_eth,
    total_platform_fees_at_discount_rate_eth:
      p.total_platform_fees_at_discount_rate_eth + e.platform_fees_at_discount_rate_eth,
    gross_protocol_fee_rate: ctx.gross_protocol_fee_rate,
    discount_rate: discount.discount_rate,
    gross_fees_eth: e.gross_fees_eth,
    total_gross_fees_eth: p.total_gross_fees_eth + e.gross_fees_eth,
    gross_rewards_eth: e.gross_rewards_eth,
    total_gross_rewards_eth: p.total_gross_rewards_eth + e.gross_rewards_eth,
    rebate_eth: e.rebate_eth,
    total_rebate_eth: p.total_rebate_eth + e.rebate_eth,
    rebate_lseth: e.rebate_lseth,
    total_rebate_lseth: p.total_rebate_lseth + e.rebate_lseth,
    period_dao_fees_rate: rates.period_dao_fees_rate,
    period_provider_fees_rate: rates.period_provider_fees_rate,
    period_slashing_fees_rate: rates.period_slashing_fees_rate,
    period_lc_fees_rate: rates.period_lc_fees_rate,
    period_tech_provider_fees_rate: rates.period_tech_provider_fees_rate,
    period_operator_fees_rate: rates.period_operator_fees_rate,
    period_platform_fees_rate: rates.period_platform_fees_rate,
  }
}

/**
 * The cumulative totals of a record, to pass as `previous` of the wallet's next record.
 *
 * @example
 * computeWalletRecord(nextCtx, { ...wallet, previous: walletTotalsOf(record) })
 */
export function walletTotalsOf(record: WalletTotals): WalletTotals {
  const totals = {} as Record<keyof WalletTotals, bigint>
  for (const [, total] of CUMULATIVE_FIELDS) totals[total] = record[total]
  return totals
}
