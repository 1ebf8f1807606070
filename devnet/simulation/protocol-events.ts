/**
 * The days of a history on the protocol's own bytecode where money is decided differently from an ordinary
 * day (devnet/README.md "Events of the history"): coverage donations River pulls at the next report, an
 * execution-layer fee spike above the report's bound (the rest waits for later reports), a second loss day
 * in the 1.x era (River mints a fee on the EL fees although the validators lost), and a report the contract
 * refuses (out of bounds) before the members' accepted one.
 */
import { encodeFunctionData, parseAbi } from 'viem'
import { PERMISSION, riverAbi } from '../../chain/abi.ts'
import type { TxRequest } from '../blocks.ts'
import { ETH } from '../consensus.ts'
import { REPORT_BOUNDS } from '../protocol-releases.ts'
import type { SimulationContext } from './state.ts'
import { allowTxs, call, GAS } from './transactions.ts'

const coverageFundAbi = parseAbi(['function donate() payable'])
const SECONDS_PER_YEAR = 365n * 86_400n
const BASIS_POINTS = 10_000n

/** The event days of a protocol history, by the release days (a `current` history: fixed days). */
export interface ProtocolEventDays {
  /** days the admin donates to the CoverageFund (pulled at that day's report, up to the bound) */
  coverageDonations: number[]
  /** the day the EL fees are four times the report's bound */
  elFeeSpike: number
  /** a loss day in the 1.x era (besides the history's `lossDay`) */
  lossDay1x: number
  /** the day a report out of bounds is refused before the accepted one */
  refusedReport: number
}

/**
 * The event days of a protocol history: in a versioned one, a donation two days after 0.5.0 (a legacy pull)
 * and three days after 1.2.1, the spike five days after 1.2.1, the 1.x loss day eight days after and the
 * refused report two days after; in a current one, days 5 / 25, 15, 18 and 8.
 *
 * @example
 * protocolEventDays({ '0.5.0': 7, '1.0.0': 20, '1.0.1': 25, '1.1.0': 30, '1.2.1': 35 }).elFeeSpike // 40
 */
export function protocolEventDays(releaseDays: Record<string, number>): ProtocolEventDays {
  const v05 = releaseDays['0.5.0'] ?? -1
  const v12 = releaseDays['1.2.1'] ?? -1
  if (v12 < 0) return { coverageDonations: [5, 25], elFeeSpike: 15, lossDay1x: 18, refusedReport: 8 }
  return {
    coverageDonations: [v05 + 2, v12 + 3],
    elFeeSpike: v12 + 5,
    lossDay1x: v12 + 8,
    refusedReport: v12 + 2,
  }
}

/** The event days of the simulation's deployment. */
export function eventDaysOf(ctx: SimulationContext): ProtocolEventDays {
  return protocolEventDays(ctx.deployment.protocol.releaseDays)
}

/**
 * The admin's coverage donation of `day`, if any: DONATE permission for the admin (through the firewall, as
 * the simulator's allowlisting) then `donate()` of 5 ETH plus the day's index in gwei.
 */
export function coverageDonationTxs(ctx: SimulationContext, day: number): TxRequest[] {
  const days = eventDaysOf(ctx)
  const coverageFund = ctx.deployment.contracts.coverageFund
  if (!days.coverageDonations.includes(day)) return []
  const { admin } = ctx.deployment.roles
  return [
    ...allowTxs(ctx, [admin], [PERMISSION.DONATE], 'coverage donor'),
    call(
      admin,
      coverageFund,
      encodeFunctionData({ abi: coverageFundAbi, functionName: 'donate' }),
      GAS.admin,
      `coverage donation of day ${day}`,
      5n * ETH + BigInt(day) * 10n ** 9n,
    ),
  ]
}

/**
 * The extra EL fees of `day`: on the spike day, four times what a day's report may book (the annual APR
 * bound of the pool for a day), so most of it waits in the ELFeeRecipient for later reports.
 */
export async function elFeeSpike(ctx: SimulationContext, day: number): Promise<bigint> {
  if (eventDaysOf(ctx).elFeeSpike !== day) return 0n
  // the pool read only on the spike day
  const totalUnderlying = await ctx.publicClient.readContract({
    address: ctx.deployment.contracts.river,
    abi: riverAbi,
    functionName: 'totalUnderlyingSupply',
  })
  return (
    (4n * totalUnderlying * REPORT_BOUNDS.annualAprUpperBound * 86_400n) / (BASIS_POINTS * SECONDS_PER_YEAR)
  )
}

/** Whether `day` is a loss day: the history's own, or the protocol history's 1.x one. */
export const isLossDay = (ctx: SimulationContext, day: number): boolean =>
  day === ctx.lossDay || eventDaysOf(ctx).lossDay1x === day

/** Whether the members' first report of `day` is one the contract refuses. */
export const isRefusedReportDay = (ctx: SimulationContext, day: number): boolean =>
  eventDaysOf(ctx).refusedReport === day
