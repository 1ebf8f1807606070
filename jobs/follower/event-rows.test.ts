import { describe, expect, test } from 'vitest'
import type { DecodedLog } from '../../chain/log-decoding.ts'
import type { PriceReads } from '../../chain/price-feeds.ts'
import { toAddress } from '../../common/address.ts'
import {
  type ChunkContext,
  eventRows,
  legacyRewards,
  logKey,
  needsPoolBefore,
  storedPrice,
} from './event-rows.ts'

const CHAIN = 31337
const TIME = new Date('2026-05-03T12:00:00Z')
const HASH_BLOCK = `0x${'b'.repeat(64)}` as const
// as the decoder hands them over: addresses already in their stored form (chain/log-decoding.ts)
const A = toAddress('0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa')
const B = toAddress('0xbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb')
const ZERO = toAddress('0x0000000000000000000000000000000000000000')
const DENY = 1n << 255n
const FEED = toAddress('0xfeedfeedfeedfeedfeedfeedfeedfeedfeedfeed')
/** A report's prices when the chain has no feeds (the reason is the chain reader's, chain/price-feeds.ts). */
const NO_PRICES: PriceReads = {
  usd: { feed: null, missing_reason: `no ETH/USD feed is configured for chain ${CHAIN}` },
  eur: { feed: null, missing_reason: `no ETH/EUR feed is configured for chain ${CHAIN}` },
}

let logIndex = 0
/** A decoded log at block 10 of transaction `tx` (one hex digit), with the next log index. */
function log(tx: string, eventName: string, args: unknown, extra: object = {}): DecodedLog {
  return {
    address: A,
    blockNumber: 10n,
    blockHash: HASH_BLOCK,
    transactionHash: `0x${tx.repeat(64)}`,
    transactionIndex: 0,
    logIndex: logIndex++,
    eventName,
    args,
    ...extra,
  } as DecodedLog
}

const reportArgs = {
  report: {
    epoch: 7n,
    validatorsBalance: 1n,
    validatorsSkimmedBalance: 2n,
    validatorsExitedBalance: 3n,
    validatorsExitingBalance: 4n,
    validatorsCount: 5,
    stoppedValidatorCountPerOperator: [0, 1],
    rebalanceDepositToRedeemMode: false,
    slashingContainmentMode: true,
  },
  trace: {
    rewards: 6n,
    pulledELFees: 7n,
    pulledRedeemManagerExceedingEthBuffer: 8n,
    pulledCoverageFunds: 9n,
  },
}

describe('eventRows', () => {
  test('behavior: maps every stored event kind to its row, with the addresses as the decoder gives them and the chain reads', () => {
    logIndex = 0
    const logs = [
      log('1', 'Transfer', { from: A, to: B, value: 5n }),
      log('1', 'UserDeposit', { depositor: A, recipient: B, amount: 9n }),
      log('2', 'RewardsEarned', {
        collector: B,
        oldTotalUnderlyingBalance: 100n,
        oldTotalSupply: 90n,
        newTotalUnderlyingBalance: 110n,
        newTotalSupply: 91n,
      }),
      log('2', 'ProcessedConsensusLayerReport', reportArgs),
      log('3', 'SetGlobalFee', { fee: 1000n }),
      log('4', 'RequestedRedeem', { id: 3n, recipient: A, height: 10n, amount: 11n, maxRedeemableEth: 12n }),
      log('4', 'ReportedWithdrawal', { id: 2n, height: 0n, amount: 11n, ethAmount: 12n }),
      log('4', 'SatisfiedRedeemRequest', {
        redeemRequestId: 3n,
        withdrawalEventId: 2n,
        lsEthAmountSatisfied: 11n,
        ethAmountSatisfied: 12n,
        lsEthAmountRemaining: 0n,
        ethAmountExceeding: 0n,
      }),
      log('5', 'ClaimedRedeemRequest', {
        redeemRequestId: 3n,
        recipient: A,
        ethAmount: 12n,
        lsEthAmount: 11n,
        remainingLsEthAmount: 0n,
      }),
      log('6', 'SetAllowlistPermissions', { accounts: [A, B], permissions: [3n, 0n] }),
      log('7', 'PulledELFees', { amount: 1n }),
    ]
    const report = logs[3]!
    const context: ChunkContext = {
      blocks: new Map([[10n, { hash: HASH_BLOCK, time: TIME }]]),
      reportReads: new Map([
        [
          logKey(report),
          {
            totalUnderlyingSupply: 110n,
            totalSupply: 91n,
            globalFee: 1000n,
            operators: [{ operator_index: 0, funded: 4 }],
            prices: {
              usd: { feed: FEED, round_id: 42n, answer: 312_345_678_901n, decimals: 8, price_time: TIME },
              eur: { feed: FEED, missing_reason: 'the feed reverted at block 10: No data present' },
            },
            endOfPreviousBlock: { totalUnderlyingSupply: 100n, totalSupply: 90n },
          },
        ],
      ]),
      legacyAccounts: new Map(),
      storedPermissions: new Map([[logKey(logs[9]!), [3n, 0n]]]),
    }
    const out = eventRows(CHAIN, logs, context)
    const key = (i: number) => ({
      chain_id: CHAIN,
      block_number: 10n,
      log_index: i,
      tx_index: 0,
      block_hash: HASH_BLOCK,
      tx_hash: logs[i]!.transactionHash,
      block_time: TIME,
    })
    const a = A
    const b = B
    expect(Object.fromEntries(out.tables)).toEqual({
      lseth_transfers: [{ ...key(0), from_address: a, to_address: b, value: 5n }],
      user_deposits: [{ ...key(1), depositor: a, recipient: b, amount: 9n }],
      rewards_earned: [
        {
          ...key(2),
          collector: b,
          old_total_underlying_balance: 100n,
          old_total_supply: 90n,
          new_total_underlying_balance: 110n,
          new_total_supply: 91n,
        },
      ],
      report_operators: [{ chain_id: CHAIN, block_number: 10n, log_index: 3, operator_index: 0, funded: 4 }],
      oracle_reports: [
        {
          ...key(3),
          report_date: '2026-05-03',
          epoch: 7n,
          validators_balance: 1n,
          validators_skimmed_balance: 2n,
          validators_exited_balance: 3n,
          validators_exiting_balance: 4n,
          validators_count: 5,
          stopped_validator_count_per_operator: [0, 1],
          rebalance_deposit_to_redeem_mode: false,
          slashing_containment_mode: true,
          trace_rewards: 6n,
          trace_pulled_el_fees: 7n,
          trace_pulled_redeem_manager_exceeding_eth: 8n,
          trace_pulled_coverage_funds: 9n,
          total_underlying_supply: 110n,
          total_supply: 91n,
          fee_shares: 1n, // the RewardsEarned of the same transaction: 91 - 90
          global_fee_bps: 1000,
          report_shape: 'v1',
          pool_before_underlying: 100n,
          pool_before_supply: 90n,
        },
      ],
      global_fee_changes: [{ ...key(4), fee_bps: 1000 }],
      redeem_requests: [
        { ...key(5), request_id: 3, recipient: a, height: 10n, amount: 11n, max_redeemable_eth: 12n },
      ],
      withdrawal_events: [{ ...key(6), withdrawal_event_id: 2, height: 0n, amount: 11n, eth_amount: 12n }],
      redeem_satisfactions: [
        {
          ...key(7),
          request_id: 3,
          withdrawal_event_id: 2,
          lseth_amount_satisfied: 11n,
          eth_amount_satisfied: 12n,
          lseth_amount_remaining: 0n,
          eth_amount_exceeding: 0n,
        },
      ],
      redeem_claims: [
        {
          ...key(8),
          request_id: 3,
          recipient: a,
          eth_amount: 12n,
          lseth_amount: 11n,
          remaining_lseth_amount: 0n,
        },
      ],
      allowlist_permissions: [
        { ...key(9), position: 0, address: a, permissions: 3n },
        { ...key(9), position: 1, address: b, permissions: 0n },
      ],
    })
    expect(out.permissions).toEqual([
      { address: a, permissions: 3n, txHash: logs[9]!.transactionHash },
      { address: b, permissions: 0n, txHash: logs[9]!.transactionHash },
    ])
    expect(out.reports).toEqual(['2026-05-03'])
    expect(out.skippedLegacy).toEqual([])
    // one price row per currency, keyed as the report: an answer as read, a missing price with its reason
    expect(out.prices).toEqual([
      {
        chain_id: CHAIN,
        block_number: 10n,
        log_index: 3,
        currency: 'usd',
        feed: FEED,
        round_id: 42n,
        answer: 312_345_678_901n,
        decimals: 8,
        price_time: TIME,
      },
      {
        chain_id: CHAIN,
        block_number: 10n,
        log_index: 3,
        currency: 'eur',
        feed: FEED,
        missing_reason: 'the feed reverted at block 10: No data present',
      },
    ])
  })

  test('behavior: a report before River 1.0.0 (ConsensusLayerDataUpdate) is a legacy row: epoch from roundId, the figures it lacks null, rewards from its RewardsEarned', () => {
    logIndex = 0
    const at = (tx: string, index: number, eventName: string, args: unknown) =>
      log(tx, eventName, args, { transactionIndex: index })
    const logs = [
      // a deposit before the report in its block: the pool before the report includes it
      at('1', 0, 'UserDeposit', { depositor: A, recipient: B, amount: 10n }),
      at('1', 0, 'Transfer', { from: ZERO, to: B, value: 9n }),
      at('2', 1, 'PulledELFees', { amount: 3n }),
      at('2', 1, 'Transfer', { from: ZERO, to: B, value: 1n }),
      at('2', 1, 'RewardsEarned', {
        collector: B,
        oldTotalUnderlyingBalance: 110n,
        oldTotalSupply: 99n,
        newTotalUnderlyingBalance: 117n,
        newTotalSupply: 100n,
      }),
      at('2', 1, 'ConsensusLayerDataUpdate', {
        validatorCount: 3n,
        validatorTotalBalance: 96n,
        roundId: `0x${158_000n.toString(16).padStart(64, '0')}`,
      }),
    ]
    const report = logs[5]!
    const reads = {
      totalUnderlyingSupply: 117n,
      totalSupply: 100n,
      globalFee: 1500n,
      operators: [],
      prices: NO_PRICES,
      endOfPreviousBlock: { totalUnderlyingSupply: 100n, totalSupply: 90n },
    }
    const out = eventRows(CHAIN, logs, {
      blocks: new Map([[10n, { hash: HASH_BLOCK, time: TIME }]]),
      reportReads: new Map([[logKey(report), reads]]),
      legacyAccounts: new Map(),
      storedPermissions: new Map(),
    })
    expect(out.reports).toEqual(['2026-05-03'])
    expect(out.tables.get('oracle_reports')).toEqual([
      expect.objectContaining({
        epoch: 158_000n,
        validators_balance: 96n,
        validators_count: 3,
        validators_skimmed_balance: null,
        validators_exited_balance: null,
        validators_exiting_balance: null,
        stopped_validator_count_per_operator: null,
        rebalance_deposit_to_redeem_mode: null,
        slashing_containment_mode: null,
        trace_rewards: 7n, // RewardsEarned: 117 - 110
        trace_pulled_el_fees: 3n,
        trace_pulled_redeem_manager_exceeding_eth: 0n,
        trace_pulled_coverage_funds: 0n,
        total_underlying_supply: 117n,
        total_supply: 100n,
        fee_shares: 1n,
        global_fee_bps: 1500,
        report_shape: 'legacy',
        // the previous block's pool plus the deposit before the report in its block
        pool_before_underlying: 110n,
        pool_before_supply: 99n,
      }),
    ])
  })

  test('behavior: a legacy report without a fee mint takes its rewards from the pool it moved, less coverage funds; a loss earns 0', () => {
    const pool = (totalUnderlyingSupply: bigint) => ({ totalUnderlyingSupply })
    const at = { transactionHash: `0x${'1'.repeat(64)}` as const, logIndex: 0 }
    expect(legacyRewards(pool(112n), pool(100n), 2n, at)).toBe(10n)
    expect(legacyRewards(pool(96n), pool(100n), 0n, at)).toBe(0n)
    expect(legacyRewards(pool(102n), pool(100n), 2n, at)).toBe(0n)
    expect(() => legacyRewards(pool(102n), undefined, 0n, at)).toThrow(/no pool before the legacy report/)
    logIndex = 0
    const report = log('1', 'ConsensusLayerDataUpdate', {
      validatorCount: 3n,
      validatorTotalBalance: 90n,
      roundId: `0x${'0'.repeat(63)}7`,
    })
    const coverage = log('1', 'PulledCoverageFunds', { amount: 2n })
    const out = eventRows(CHAIN, [coverage, report], {
      blocks: new Map([[10n, { hash: HASH_BLOCK, time: TIME }]]),
      reportReads: new Map([
        [
          logKey(report),
          {
            totalUnderlyingSupply: 112n,
            totalSupply: 100n,
            globalFee: 0n,
            operators: [],
            prices: NO_PRICES,
            endOfPreviousBlock: { totalUnderlyingSupply: 100n, totalSupply: 100n },
          },
        ],
      ]),
      legacyAccounts: new Map(),
      storedPermissions: new Map(),
    })
    expect(out.tables.get('oracle_reports')?.[0]).toMatchObject({
      epoch: 7n,
      trace_rewards: 10n,
      trace_pulled_coverage_funds: 2n,
      fee_shares: 0n,
    })
  })

  test("behavior: the pool before a report is read for the chain's first report and for a legacy report without a fee mint only; without it the row has null", () => {
    logIndex = 0
    const legacy = log('1', 'ConsensusLayerDataUpdate', {
      validatorCount: 1n,
      validatorTotalBalance: 1n,
      roundId: `0x${'0'.repeat(63)}1`,
    })
    const minted = log('1', 'RewardsEarned', {
      collector: B,
      oldTotalUnderlyingBalance: 1n,
      oldTotalSupply: 1n,
      newTotalUnderlyingBalance: 2n,
      newTotalSupply: 2n,
    })
    const v1 = log('2', 'ProcessedConsensusLayerReport', reportArgs)
    expect(needsPoolBefore(legacy, [legacy], { firstOfChain: false })).toBe(true)
    expect(needsPoolBefore(legacy, [minted, legacy], { firstOfChain: false })).toBe(false)
    expect(needsPoolBefore(v1, [v1], { firstOfChain: false })).toBe(false)
    expect(needsPoolBefore(v1, [v1], { firstOfChain: true })).toBe(true)
    const out = eventRows(CHAIN, [v1], {
      blocks: new Map([[10n, { hash: HASH_BLOCK, time: TIME }]]),
      reportReads: new Map([
        [
          logKey(v1),
          { totalUnderlyingSupply: 1n, totalSupply: 1n, globalFee: 0n, operators: [], prices: NO_PRICES },
        ],
      ]),
      legacyAccounts: new Map(),
      storedPermissions: new Map(),
    })
    expect(out.tables.get('oracle_reports')?.[0]).toMatchObject({
      pool_before_underlying: null,
      pool_before_supply: null,
    })
  })

  test('behavior: a legacy Allowlist log takes its recovered accounts, or is skipped when none were', () => {
    logIndex = 0
    const legacy = (tx: string) =>
      log(
        tx,
        'SetAllowlistPermissions',
        { accountsHash: `0x${'c'.repeat(64)}`, permissions: [1n] },
        {
          legacyIndexed: true,
        },
      )
    const recovered = legacy('1')
    const lost = legacy('2')
    const out = eventRows(CHAIN, [recovered, lost], {
      blocks: new Map([[10n, { hash: HASH_BLOCK, time: TIME }]]),
      reportReads: new Map(),
      legacyAccounts: new Map([
        [logKey(recovered), [A]],
        [logKey(lost), undefined],
      ]),
      storedPermissions: new Map(),
    })
    expect(out.permissions).toEqual([{ address: A, permissions: 1n, txHash: recovered.transactionHash }])
    expect(out.tables.get('allowlist_permissions')).toHaveLength(1)
    expect(out.skippedLegacy).toEqual([lost])
  })

  test('behavior: an Allowlist entry is stored as the chain stored it, not as the event carries it (a lifted deny stores 0)', () => {
    logIndex = 0
    const lift = log('1', 'SetAllowlistPermissions', { accounts: [A, B], permissions: [5n, DENY | 1n] })
    const out = eventRows(CHAIN, [lift], {
      blocks: new Map([[10n, { hash: HASH_BLOCK, time: TIME }]]),
      reportReads: new Map(),
      legacyAccounts: new Map(),
      storedPermissions: new Map([[logKey(lift), [0n, DENY]]]),
    })
    expect(out.permissions).toEqual([
      { address: A, permissions: 0n, txHash: lift.transactionHash },
      { address: B, permissions: DENY, txHash: lift.transactionHash },
    ])
    expect(out.tables.get('allowlist_permissions')?.map((r) => r.permissions)).toEqual([0n, DENY])
    expect(() =>
      eventRows(CHAIN, [lift], {
        blocks: new Map([[10n, { hash: HASH_BLOCK, time: TIME }]]),
        reportReads: new Map(),
        legacyAccounts: new Map(),
        storedPermissions: new Map(),
      }),
    ).toThrow(/no stored permissions/)
  })

  test('behavior: a log without its chain reads is an error, not a row with missing figures', () => {
    logIndex = 0
    const report = log('1', 'ProcessedConsensusLayerReport', reportArgs)
    const blocks = new Map([[10n, { hash: HASH_BLOCK, time: TIME }]])
    expect(() =>
      eventRows(CHAIN, [report], {
        blocks,
        reportReads: new Map(),
        legacyAccounts: new Map(),
        storedPermissions: new Map(),
      }),
    ).toThrow(/no report reads/)
    expect(() =>
      eventRows(CHAIN, [report], {
        blocks: new Map(),
        reportReads: new Map(),
        legacyAccounts: new Map(),
        storedPermissions: new Map(),
      }),
    ).toThrow(/no block facts/)
  })
})

describe('storedPrice', () => {
  const ethUsd = { feed: FEED, round_id: 42n, answer: 300_000_000_000n, decimals: 8, price_time: TIME }
  const eurUsd = {
    feed: toAddress('0xb49f677943bc038e9857d61e7d053caa2c1734c1'),
    round_id: 7n,
    answer: 108_700_000n,
    decimals: 8,
    price_time: new Date('2026-05-03T09:00:00Z'),
  }

  test('behavior: ETH / EUR from its two rounds is ETH / USD / EUR / USD at 18 decimals, named by its ETH / USD round, both rounds kept', () => {
    expect(storedPrice({ eth_usd: ethUsd, eur_usd: eurUsd })).toEqual({
      feed: FEED,
      round_id: 42n,
      // 3,000 / 1.087 = 2,759.889604415823367065|317…: rounded half-even at the 18th place (down)
      answer: 2_759_889_604_415_823_367_065n,
      decimals: 18,
      price_time: TIME,
      derived_from: { eth_usd: ethUsd, eur_usd: eurUsd },
    })
  })

  test('behavior: a direct answer or a missing price is stored as read', () => {
    expect(storedPrice(ethUsd)).toBe(ethUsd)
    const missing = { feed: null, missing_reason: 'no ETH/EUR feed is configured for chain 1' }
    expect(storedPrice(missing)).toBe(missing)
  })
})
