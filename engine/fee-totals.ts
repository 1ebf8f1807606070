import { FEE_TOTAL_FIELDS as RECORD_FEE_TOTAL_FIELDS } from '../fields/record-fields.ts'
import { InvalidInputError } from './errors.ts'
import type { FeeBase } from './fee-base.ts'
import { feeBearingRewards } from './fee-base.ts'
import type { OperatorValidators } from './operator-fees.ts'
import { splitOperatorFees } from './operator-fees.ts'
import { formatRatio } from './units.ts'
import type { ReportContext, WalletRecord } from './wallet-record.ts'

/**
 * Fee totals for a date: protocol-wide, per platform org (the org owning the account of an on-platform
 * wallet), per originator org (the org that added the wallet) and per operator (the operator share split by
 * active validators). Summaries are mergeable (exact bigint sums), so a day computed in shards merges its
 * shard summaries in any order.
 */

/** Amount fields summed in fee totals (fields/record-fields.ts). */
export const FEE_TOTAL_FIELDS = RECORD_FEE_TOTAL_FIELDS satisfies ReadonlyArray<keyof WalletRecord>

/** A fee total amount field. */
export type FeeTotalField = (typeof FEE_TOTAL_FIELDS)[number]

/** Sums of the fee fields over a group of wallet records, and how many records. */
export type FeeTotals = Record<FeeTotalField, bigint> & { wallets: number }

/** Fee totals of a date: all wallets, by platform org, by originator org. */
export interface FeeSummary {
  all: FeeTotals
  platforms: Record<string, FeeTotals>
  originators: Record<string, FeeTotals>
}

/** One wallet record and the org that originated the wallet (null when unregistered). */
export interface FeeSummaryItem {
  record: Pick<WalletRecord, FeeTotalField | 'on_platform' | 'org_id'>
  originator_org_id: string | null
}

/**
 * Zero fee totals.
 *
 * @example
 * emptyFeeTotals().wallets // 0
 */
export function emptyFeeTotals(): FeeTotals {
  const totals = { wallets: 0 } as FeeTotals
  for (const field of FEE_TOTAL_FIELDS) totals[field] = 0n
  return totals
}

/**
 * Adds `from`'s fee fields into `into`, each field by name: the day pipeline calls it once per wallet, and a
 * loop over `FEE_TOTAL_FIELDS` with computed keys cost twice as much there (bench/README.md). Every field of
 * `FEE_TOTAL_FIELDS` is listed (fee-totals.test.ts adds each alone).
 */
function addInto(into: FeeTotals, from: Pick<WalletRecord, FeeTotalField>, wallets: number): void {
  into.balance_lseth += from.balance_lseth
  into.gross_rewards_eth += from.gross_rewards_eth
  into.rewards_eth += from.rewards_eth
  into.fees_eth += from.fees_eth
  into.dao_fees_eth += from.dao_fees_eth
  into.provider_fees_eth += from.provider_fees_eth
  into.slashing_fees_eth += from.slashing_fees_eth
  into.lc_fees_eth += from.lc_fees_eth
  into.period_lc_fees_lseth += from.period_lc_fees_lseth
  into.tech_provider_fees_eth += from.tech_provider_fees_eth
  into.period_tech_provider_fees_lseth += from.period_tech_provider_fees_lseth
  into.operator_fees_eth += from.operator_fees_eth
  into.platform_fees_eth += from.platform_fees_eth
  into.rebate_eth += from.rebate_eth
  into.rebate_lseth += from.rebate_lseth
  into.platform_fees_at_discount_rate_eth += from.platform_fees_at_discount_rate_eth
  into.wallets += wallets
}

function group(groups: Record<string, FeeTotals>, key: string): FeeTotals {
  let totals = Object.hasOwn(groups, key) ? groups[key] : undefined
  if (totals === undefined) {
    totals = emptyFeeTotals()
    groups[key] = totals
  }
  return totals
}

/**
 * Summarizes wallet records of one date. A record counts for its platform org when it is on-platform
 * (`org_id` is the org owning its account), and for its originator org when it has one.
 *
 * @example
 * summarizeFees([{ record, originator_org_id: 'org_a' }]).platforms.org_b.platform_fees_eth
 */
export function summarizeFees(items: Iterable<FeeSummaryItem>): FeeSummary {
  const summary = emptyFeeSummary()
  for (const { record, originator_org_id: originator } of items) {
    addToFeeSummary(summary, record, record.on_platform, record.org_id, originator)
  }
  return summary
}

/**
 * An empty fee summary, to add records to one at a time (`addToFeeSummary`).
 *
 * @example
 * const summary = emptyFeeSummary()
 */
export function emptyFeeSummary(): FeeSummary {
  return { all: emptyFeeTotals(), platforms: {}, originators: {} }
}

/**
 * Adds one wallet's amounts to a summary in place, as `summarizeFees` counts a record: in `all`, in its
 * platform org's group when on-platform, in its originator org's group when it has one. A caller streaming
 * records adds each as it goes rather than keeping them.
 *
 * @example
 * addToFeeSummary(summary, record, record.on_platform, record.org_id, 'org_a')
 */
export function addToFeeSummary(
  summary: FeeSummary,
  amounts: Pick<WalletRecord, FeeTotalField>,
  onPlatform: boolean,
  orgId: string | null,
  originator: string | null,
): void {
  addInto(summary.all, amounts, 1)
  if (onPlatform && orgId !== null) addInto(group(summary.platforms, orgId), amounts, 1)
  if (originator !== null) addInto(group(summary.originators, originator), amounts, 1)
}

/**
 * Merges summaries (e.g. of the shards of a day). Exact and independent of order.
 *
 * @example
 * mergeFeeSummaries(summarizeFees(shard1), summarizeFees(shard2)) // equals summarizeFees([...shard1, ...shard2])
 */
export function mergeFeeSummaries(...summaries: readonly FeeSummary[]): FeeSummary {
  const merged: FeeSummary = { all: emptyFeeTotals(), platforms: {}, originators: {} }
  for (const summary of summaries) {
    addInto(merged.all, summary.all, summary.all.wallets)
    for (const [key, totals] of Object.entries(summary.platforms)) {
      addInto(group(merged.platforms, key), totals, totals.wallets)
    }
    for (const [key, totals] of Object.entries(summary.originators)) {
      addInto(group(merged.originators, key), totals, totals.wallets)
    }
  }
  return merged
}

/** A fee summary with every amount as a decimal string of wei (JSON-safe, e.g. a BullMQ child's return value). */
export interface EncodedFeeSummary {
  all: Record<string, string | number>
  platforms: Record<string, Record<string, string | number>>
  originators: Record<string, Record<string, string | number>>
}

function encodeTotals(totals: FeeTotals): Record<string, string | number> {
  const out: Record<string, string | number> = { wallets: totals.wallets }
  for (const field of FEE_TOTAL_FIELDS) out[field] = totals[field].toString()
  return out
}

function decodeTotals(value: Record<string, string | number> | undefined): FeeTotals {
  if (value === undefined || typeof value.wallets !== 'number') {
    throw new InvalidInputError('encoded fee totals are malformed', { details: {} })
  }
  const totals = emptyFeeTotals()
  totals.wallets = value.wallets
  for (const field of FEE_TOTAL_FIELDS) {
    const amount = value[field]
    if (typeof amount !== 'string' || !/^-?\d+$/.test(amount)) {
      throw new InvalidInputError('encoded fee totals are malformed', { details: { field } })
    }
    totals[field] = BigInt(amount)
  }
  return totals
}

/**
 * Encodes a summary for JSON (bigint wei as decimal strings).
 *
 * @example
 * JSON.stringify(encodeFeeSummary(summary))
 */
export function encodeFeeSummary(summary: FeeSummary): EncodedFeeSummary {
  const map = (groups: Record<string, FeeTotals>) =>
    Object.fromEntries(Object.entries(groups).map(([key, totals]) => [key, encodeTotals(totals)]))
  return {
    all: encodeTotals(summary.all),
    platforms: map(summary.platforms),
    originators: map(summary.originators),
  }
}

/**
 * Decodes `encodeFeeSummary` output, validating every amount.
 *
 * @example
 * decodeFeeSummary(JSON.parse(json)).all.fees_eth // bigint
 */
export function decodeFeeSummary(value: EncodedFeeSummary): FeeSummary {
  const map = (groups: Record<string, Record<string, string | number>>) =>
    Object.fromEntries(Object.entries(groups).map(([key, totals]) => [key, decodeTotals(totals)]))
  return {
    all: decodeTotals(value.all),
    platforms: map(value.platforms),
    originators: map(value.originators),
  }
}

/** A group's totals with its key and each fee part as a fraction of the group's fee-bearing rewards. */
export type FeeTotalsRow = FeeTotals & {
  org_id: string
  platform_fees_rate: string
  platform_fees_at_discount_rate_rate: string
  rebate_rate: string
  operator_fees_rate: string
  lc_fees_rate: string
  tech_provider_fees_rate: string
}

/** What a day's grouped rates need of its report: its fee base and global fee (a `ReportContext` serves). */
export type FeeTotalsBase = Pick<ReportContext, 'fee_base' | 'global_fee_bps'>

const GROSS_BASE: FeeTotalsBase = { fee_base: 'gross', global_fee_bps: 0n }

/**
 * part / the fee-bearing rewards of `totals` (fee-base.ts: their gross rewards, or their fees / g on a
 * `charged` report, the sum of their wallets' bases), 18 dp ROUND_DOWN; '0' when that base is <= 0.
 */
function rateOf(totals: FeeTotals, base: FeeBase, bps: bigint): (part: bigint) => string {
  const { num, den } = feeBearingRewards(base, totals.gross_rewards_eth, totals.fees_eth, bps)
  // rounding: ROUND_DOWN at 18 dp
  return (part) => (num > 0n ? formatRatio(part * den, num) : '0')
}

/**
 * Rows of a grouping (platforms or originators), sorted by org id, with rates = part / the group's
 * fee-bearing rewards (18 dp ROUND_DOWN; '0' when they are <= 0): the gross rewards, or, with `report` of a
 * `charged` report (River 1.x charging EL fees on a day the pool gained less), the fees / g. Without `report`
 * the base is the gross rewards.
 *
 * @example
 * feeTotalsRows(summary.platforms, ctx)[0].platform_fees_rate // '0.025'
 */
export function feeTotalsRows(
  groups: Record<string, FeeTotals>,
  report: FeeTotalsBase = GROSS_BASE,
): FeeTotalsRow[] {
  return Object.keys(groups)
    .sort()
    .map((orgId) => {
      const totals = groups[orgId] as FeeTotals
      const rate = rateOf(totals, report.fee_base, report.global_fee_bps)
      return {
        org_id: orgId,
        ...totals,
        platform_fees_rate: rate(totals.platform_fees_eth),
        platform_fees_at_discount_rate_rate: rate(totals.platform_fees_at_discount_rate_eth),
        rebate_rate: rate(totals.rebate_eth),
        operator_fees_rate: rate(totals.operator_fees_eth),
        lc_fees_rate: rate(totals.lc_fees_eth),
        tech_provider_fees_rate: rate(totals.tech_provider_fees_eth),
      }
    })
}

/** One operator's fees for a date. */
export interface OperatorFeeRow {
  operator_id: string
  active_validators: bigint
  operator_fees_eth: bigint
  /** operator_fees_eth / all wallets' fee-bearing rewards (18 dp ROUND_DOWN; see `feeTotalsRows`). */
  operator_fees_rate: string
}

/**
 * The operators' fees of a date: the summed operator share of every wallet, split by active validators
 * (`splitOperatorFees`: exact sum, largest remainder); each rate is over all wallets' fee-bearing rewards
 * (`report` as in `feeTotalsRows`; without it, the gross rewards).
 *
 * @example
 * operatorFeeRows(summary.all, [{ operator_id: '0', active_validators: 120 }, { operator_id: '1', active_validators: 80 }], ctx)
 */
export function operatorFeeRows(
  all: FeeTotals,
  operators: readonly OperatorValidators[],
  report: FeeTotalsBase = GROSS_BASE,
): { operators: OperatorFeeRow[]; unallocated_eth: bigint } {
  const split = splitOperatorFees(all.operator_fees_eth, operators)
  const rate = rateOf(all, report.fee_base, report.global_fee_bps)
  return {
    operators: split.operators.map((operator) => ({
      ...operator,
      operator_fees_rate: rate(operator.operator_fees_eth),
    })),
    unallocated_eth: split.unallocated_eth,
  }
}
