import type { EventTable } from '../../db/repos/chain.ts'

/**
 * The row of an event stored as it was emitted (one row, columns straight from its arguments): LsETH
 * transfers, deposits, RewardsEarned, fee changes and the RedeemManager's events. Undefined for any other
 * event (reports and Allowlist changes need chain reads: event-rows.ts). `key` holds the log's position
 * columns; `a` its decoded arguments.
 *
 * @example
 * plainEventRow('SetGlobalFee', key, { fee: 1500n }) // { table: 'global_fee_changes', row: { ...key, fee_bps: 1500 } }
 */
export function plainEventRow(
  eventName: string,
  key: Record<string, unknown>,
  // biome-ignore lint/suspicious/noExplicitAny: decoded args are validated by the fetcher against the ABI
  a: any,
): { table: EventTable; row: Record<string, unknown> } | undefined {
  switch (eventName) {
    case 'Transfer':
      return {
        table: 'lseth_transfers',
        row: {
          ...key,
          from_address: a.from,
          to_address: a.to,
          value: a.value,
        },
      }
    case 'UserDeposit':
      return {
        table: 'user_deposits',
        row: {
          ...key,
          depositor: a.depositor,
          recipient: a.recipient,
          amount: a.amount,
        },
      }
    case 'RewardsEarned':
      return {
        table: 'rewards_earned',
        row: {
          ...key,
          collector: a.collector,
          old_total_underlying_balance: a.oldTotalUnderlyingBalance,
          old_total_supply: a.oldTotalSupply,
          new_total_underlying_balance: a.newTotalUnderlyingBalance,
          new_total_supply: a.newTotalSupply,
        },
      }
    case 'SetGlobalFee':
      return { table: 'global_fee_changes', row: { ...key, fee_bps: Number(a.fee) } }
    case 'RequestedRedeem':
      return {
        table: 'redeem_requests',
        row: {
          ...key,
          request_id: Number(a.id),
          recipient: a.recipient,
          height: a.height,
          amount: a.amount,
          max_redeemable_eth: a.maxRedeemableEth,
        },
      }
    case 'ReportedWithdrawal':
      return {
        table: 'withdrawal_events',
        row: {
          ...key,
          withdrawal_event_id: Number(a.id),
          height: a.height,
          amount: a.amount,
          eth_amount: a.ethAmount,
        },
      }
    case 'SatisfiedRedeemRequest':
      return {
        table: 'redeem_satisfactions',
        row: {
          ...key,
          request_id: Number(a.redeemRequestId),
          withdrawal_event_id: Number(a.withdrawalEventId),
          lseth_amount_satisfied: a.lsEthAmountSatisfied,
          eth_amount_satisfied: a.ethAmountSatisfied,
          lseth_amount_remaining: a.lsEthAmountRemaining,
          eth_amount_exceeding: a.ethAmountExceeding,
        },
      }
    case 'ClaimedRedeemRequest':
      return {
        table: 'redeem_claims',
        row: {
          ...key,
          request_id: Number(a.redeemRequestId),
          recipient: a.recipient,
          eth_amount: a.ethAmount,
          lseth_amount: a.lsEthAmount,
          remaining_lseth_amount: a.remainingLsEthAmount,
        },
      }
    default:
      return undefined
  }
}
