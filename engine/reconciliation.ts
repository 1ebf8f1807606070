import { InvalidInputError } from './errors.ts'
import { floorDiv } from './units.ts'
import type { ReportContext } from './wallet-record.ts'

/**
 * Reconciliation of a report: the holders' records against the protocol's own figures. Each wallet's amounts
 * are floored once, so a sum over N holders falls short of the exact total by less than N wei; anything else
 * means a record, a transfer or a report is wrong.
 */

/** What the holders' records of one report add up to. */
export interface HoldersTotals {
  /** Number of wallet records. */
  holders: number
  /** Σ balance_lseth: shares held just before the report. */
  shares: bigint
  /** Σ gross_rewards_eth. */
  gross_rewards: bigint
  /** Σ fees_eth. */
  fees: bigint
}

/** The protocol's side of report k, from the chain. */
export interface ProtocolTotals {
  /** Total supply just before the report transaction (every share is someone's). */
  supply_before: bigint
  /** Fee shares minted at the report (0 without a fee mint). */
  fee_shares: bigint
  /** Supply right after the fee mint (RewardsEarned.newTotalSupply; ignored without a fee mint). */
  supply_after_fee_mint: bigint
  /** trace.rewards + pulled coverage funds + pulled exceeding ETH: what the report added to U besides deposits. */
  reported_increase: bigint
}

/** Residuals of a report, in wei (share units for shares). */
export interface Reconciliation {
  holders: number
  /** Σ balances − supply before the report: exactly 0. */
  shares_residual: bigint
  /** floor(supply_before × gross step) − Σ gross: in [0, holders) (one floor per wallet). */
  gross_residual: bigint
  /**
   * Σ fees − value of the minted shares at the fee mint: within ±(holders + 2) (one floor per wallet's gross
   * and net, and the withdrawal event's burn, which pays floor(shares × rate) and so lifts the rate by < 1 wei).
   */
  fees_residual: bigint
  /**
   * Σ gross − (trace.rewards + pulled coverage + pulled exceeding ETH). Informational: deposits' rounding
   * between reports and a loss (which trace.rewards reports as 0) show here; not a failure.
   */
  rewards_residual: bigint
  /** What is out of bounds, in words (empty: the report reconciles). */
  violations: string[]
}

/**
 * Reconciles the holders' totals of a report with the protocol's figures.
 *
 * @example
 * reconcileReport(ctx, { holders: 2, shares: 100n, gross_rewards: 9n, fees: 1n }, protocol).violations // []
 */
export function reconcileReport(
  ctx: ReportContext,
  holders: HoldersTotals,
  protocol: ProtocolTotals,
): Reconciliation {
  if (!Number.isSafeInteger(holders.holders) || holders.holders < 0) {
    throw new InvalidInputError('holders must be a whole number', { details: { holders: holders.holders } })
  }
  const n = BigInt(holders.holders)
  const violations: string[] = []
  const sharesResidual = holders.shares - protocol.supply_before
  if (sharesResidual !== 0n) {
    violations.push(
      `the holders' balances sum to ${holders.shares} shares, the supply before the report is ${protocol.supply_before}`,
    )
  }
  // rounding: floor, as each wallet's gross is floored
  const exactGross = floorDiv(protocol.supply_before * ctx.gross_step.num, ctx.gross_step.den)
  const grossResidual = exactGross - holders.gross_rewards
  if (grossResidual < 0n || grossResidual > n) {
    violations.push(`the holders' gross rewards are ${grossResidual} wei off the protocol's (bound 0..${n})`)
  }
  let feesResidual = 0n
  if (protocol.fee_shares > 0n) {
    // rounding: floor, the minted shares' value at the fee mint
    const minted = floorDiv(protocol.fee_shares * ctx.underlying_at_fee_mint, protocol.supply_after_fee_mint)
    feesResidual = holders.fees - minted
    if (feesResidual < -(n + 2n) || feesResidual > n + 2n) {
      violations.push(
        `the holders' fees are ${feesResidual} wei off the minted shares' value (bound ±${n + 2n})`,
      )
    }
  } else if (holders.fees !== 0n) {
    feesResidual = holders.fees
    violations.push(`no fee was minted but the holders' fees sum to ${holders.fees} wei`)
  }
  return {
    holders: holders.holders,
    shares_residual: sharesResidual,
    gross_residual: grossResidual,
    fees_residual: feesResidual,
    rewards_residual: holders.gross_rewards - protocol.reported_increase,
    violations,
  }
}
