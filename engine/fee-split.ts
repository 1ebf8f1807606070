import { InvalidInputError } from './errors.ts'
import type { FeeModel, FeeSchedule } from './fee-schedule.ts'
import { parseFeeSchedule } from './fee-schedule.ts'
import type { Fraction } from './units.ts'
import { formatRatio, parseUnits18, WEI_PER_ETH } from './units.ts'

/**
 * Splits a wallet's fee (wei) between its recipients by the fee schedule in force. Every part is
 * floor(fee * share); the platform part exists only for on-platform wallets (otherwise it stays with dao / lc);
 * dao (v0) or lc (V3) receives the rest, so the parts sum exactly to the fee.
 */

/** A schedule turned into integer shares (units of 1e-18) for the hot path. */
export interface PreparedFeeSplit {
  schedule_id: string
  model: FeeModel
  dao: bigint
  provider: bigint
  slashing: bigint
  lc: bigint
  tech_provider: bigint
  operators: bigint
  platform: bigint
}

/** The parts of one fee in wei. Parts that do not exist in the model in force are 0. */
export interface FeeParts {
  dao_fees_eth: bigint
  provider_fees_eth: bigint
  slashing_fees_eth: bigint
  lc_fees_eth: bigint
  tech_provider_fees_eth: bigint
  operator_fees_eth: bigint
  platform_fees_eth: bigint
}

/**
 * Each part as a fraction of the fee-bearing rewards (fee-base.ts: the gross rewards, or fees / g on a report
 * where River charged more than the pool gained), decimal strings, 18 dp ROUND_DOWN.
 */
export interface FeePartRates {
  period_dao_fees_rate: string
  period_provider_fees_rate: string
  period_slashing_fees_rate: string
  period_lc_fees_rate: string
  period_tech_provider_fees_rate: string
  period_operator_fees_rate: string
  period_platform_fees_rate: string
}

/**
 * Validates a schedule and converts its shares to integers of 1e-18 for `splitFee`.
 *
 * @example
 * prepareFeeSplit(schedule).operators // 250000000000000000n for a share of '0.25'
 */
export function prepareFeeSplit(schedule: FeeSchedule): PreparedFeeSplit {
  const valid = parseFeeSchedule(schedule)
  const units = (share: string): bigint => parseUnits18(share)
  if (valid.model === 'v0') {
    const s = valid.shares
    return {
      schedule_id: valid.id,
      model: 'v0',
      dao: units(s.dao),
      provider: units(s.provider),
      slashing: units(s.slashing_coverage),
      lc: 0n,
      tech_provider: 0n,
      operators: units(s.operators),
      platform: units(s.platform),
    }
  }
  const s = valid.shares
  return {
    schedule_id: valid.id,
    model: 'v3',
    dao: 0n,
    provider: 0n,
    slashing: 0n,
    lc: units(s.lc),
    tech_provider: units(s.tech_provider),
    operators: units(s.operators),
    platform: units(s.platform),
  }
}

/**
 * Splits `feesEth` (wei, >= 0). Every part is floor(fee * share) (rounding: floor); the platform part is 0
 * off-platform; dao (v0) / lc (V3) takes the remainder, so the parts always sum exactly to `feesEth`.
 *
 * @example
 * splitFee(prepareFeeSplit(v3Schedule), 1000n, true)
 * // { lc_fees_eth: 400n, tech_provider_fees_eth: 100n, operator_fees_eth: 250n, platform_fees_eth: 250n, ...0n }
 */
export function splitFee(prepared: PreparedFeeSplit, feesEth: bigint, onPlatform: boolean): FeeParts {
  if (feesEth < 0n) {
    throw new InvalidInputError('fees must not be negative', { details: { fees_eth: String(feesEth) } })
  }
  // rounding: floor for every part (operands non-negative, truncation is the floor)
  const operators = (feesEth * prepared.operators) / WEI_PER_ETH
  const platform = onPlatform ? (feesEth * prepared.platform) / WEI_PER_ETH : 0n
  if (prepared.model === 'v0') {
    const provider = (feesEth * prepared.provider) / WEI_PER_ETH
    const slashing = (feesEth * prepared.slashing) / WEI_PER_ETH
    return {
      // dao: its own floored part + every part's rounding remainder + the platform share when off-platform
      dao_fees_eth: feesEth - provider - slashing - operators - platform,
      provider_fees_eth: provider,
      slashing_fees_eth: slashing,
      lc_fees_eth: 0n,
      tech_provider_fees_eth: 0n,
      operator_fees_eth: operators,
      platform_fees_eth: platform,
    }
  }
  const tech = (feesEth * prepared.tech_provider) / WEI_PER_ETH
  return {
    dao_fees_eth: 0n,
    provider_fees_eth: 0n,
    slashing_fees_eth: 0n,
    // lc: its own part + the rounding remainders + the platform share when off-platform
    lc_fees_eth: feesEth - tech - operators - platform,
    tech_provider_fees_eth: tech,
    operator_fees_eth: operators,
    platform_fees_eth: platform,
  }
}

/**
 * Each part as a fraction of the fee-bearing rewards: share x (fee / base), where `feeOfBase` is the report's
 * exact ratio of the fee to its fee-bearing rewards (fee / gross, or g on a `charged` report: fee-base.ts).
 * The platform share counts for dao / lc off-platform. These rates are report constants; a wallet's wei parts
 * equal rate x base up to the floor of each part (and the remainders given to dao / lc).
 *
 * @example
 * feePartRates(prepareFeeSplit(v3Schedule), { num: 1n, den: 10n }, true).period_lc_fees_rate // '0.04'
 */
export function feePartRates(
  prepared: PreparedFeeSplit,
  feeOfBase: Fraction,
  onPlatform: boolean,
): FeePartRates {
  const rate = (share: bigint): string =>
    // rounding: ROUND_DOWN at 18 dp
    feeOfBase.num <= 0n ? '0' : formatRatio(share * feeOfBase.num, WEI_PER_ETH * feeOfBase.den)
  const redirected = onPlatform ? 0n : prepared.platform
  return {
    period_dao_fees_rate: rate(prepared.model === 'v0' ? prepared.dao + redirected : 0n),
    period_provider_fees_rate: rate(prepared.provider),
    period_slashing_fees_rate: rate(prepared.slashing),
    period_lc_fees_rate: rate(prepared.model === 'v3' ? prepared.lc + redirected : 0n),
    period_tech_provider_fees_rate: rate(prepared.tech_provider),
    period_operator_fees_rate: rate(prepared.operators),
    period_platform_fees_rate: rate(onPlatform ? prepared.platform : 0n),
  }
}
