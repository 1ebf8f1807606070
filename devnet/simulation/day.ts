/**
 * One simulated day: the setup before day 0 (funding, initial allowlisting and deposits), then each day's
 * first block (keeper, claims, onboarding and offboarding, the deny and fee-change days, users), the users'
 * later blocks, and the report block.
 */
import { encodeFunctionData } from 'viem'
import { allowlistAbi, PERMISSION } from '../../chain/abi.ts'
import { devnetOperatorsRegistryAbi, devnetRiverAbi } from '../abi.ts'
import type { TxRequest } from '../blocks.ts'
import { ETH } from '../consensus.ts'
import { RELEASES } from '../protocol-layout.ts'
import { releaseTxs } from '../protocol-release-txs.ts'
import { atLeast } from '../versions.ts'
import { mine } from './ledger.ts'
import { coverageDonationTxs } from './protocol-events.ts'
import { protocolClDepositTxs } from './protocol-keeper.ts'
import { mineReport } from './report.ts'
import type { DaySummary, SimulationContext, WalletState } from './state.ts'
import { allowTxs, call, depositTx, GAS, MINTER_PERMISSIONS } from './transactions.ts'
import { canUse, claimTxs, randomEth, userTxs } from './users.ts'

const WALLET_ETH = 100_000n * ETH

/** Before day 0: funds the wallets, allowlists the initial minters, mines their deposits and the keeper's. */
async function setup(ctx: SimulationContext): Promise<void> {
  const { builder, testClient, wallets, behavior } = ctx
  // 12 s after the latest block at each step (a big batch may have been split over several blocks)
  const next = () => builder.lastTimestamp() + 12n
  await Promise.all(
    wallets.map((w) =>
      testClient.setBalance({ address: w.address, value: w.kind === 'minter' ? WALLET_ETH : 10n * ETH }),
    ),
  )
  const initial = wallets.filter((w) => w.kind === 'minter' && w.joinDay < 0)
  await mine(
    ctx,
    allowTxs(
      ctx,
      initial.map((w) => w.address),
      initial.map(() => MINTER_PERMISSIONS),
      'initial allowlisting',
    ),
    next(),
  )
  const rng = ctx.userRng.fork('setup')
  await mine(
    ctx,
    initial.map((w) => depositTx(ctx, w, randomEth(rng, behavior.initialDepositEth))),
    next(),
  )
  const clDeposits = await protocolClDepositTxs(ctx)
  if (clDeposits.length > 0) await mine(ctx, clDeposits, next())
  ctx.setupDone = true
}

/**
 * The protocol's releases of `day` with their migration calls (protocol-releases.ts); the simulator acts through
 * the new versions once the proxies' Upgraded logs are replayed.
 */
function upgradesOfDay(ctx: SimulationContext, day: number): TxRequest[] {
  const { roles, protocol } = ctx.deployment
  const fundedKeys = BigInt(ctx.fundedKeys.reduce((a, b) => a + b, 0))
  return RELEASES.filter((release) => protocol.releaseDays[release] === day).flatMap((release) =>
    releaseTxs({ roles, protocol }, release, { fundedKeys }),
  )
}

/** Voluntary exits the registry asked for that the model has not started yet (retried daily). */
function startOwedExits(ctx: SimulationContext, day: number): void {
  ctx.requestedExits.forEach((target, operator) => {
    const owed = target - ctx.consensusModel.exitingOrExitedCount(operator)
    if (owed > 0) ctx.consensusModel.startExits(operator, owed, day)
  })
}

/**
 * Simulates the next day (after the setup, the first time) and returns its summary.
 *
 * @example
 * const summary = await runDay(ctx) // { day: 0, date: '2026-04-01', reportBlock: 12n, transactions: 40 }
 */
export async function runDay(ctx: SimulationContext): Promise<DaySummary> {
  if (!ctx.setupDone) await setup(ctx)
  const { timeline, wallets, behavior, denyDay, feeChange, counts, publicClient } = ctx
  const { contracts, roles } = ctx.deployment
  const day = ctx.nextDay
  const date = timeline.dateOf(day)
  const times = timeline.activityTimes(day)
  const rng = ctx.userRng.fork(`day-${day}`)
  const transactionsBefore = counts.transactions

  // first block: the day's upgrades, keeper, claims, onboarding, admin, then users; later blocks: users
  const txsA: TxRequest[] = []
  // the day's releases first, in a block of their own a minute before: the day's reads see the new versions
  const upgrades = upgradesOfDay(ctx, day)
  if (upgrades.length > 0) await mine(ctx, upgrades, (times[0] as bigint) - 60n)
  const [clDeposits, exitDemand, claims] = await Promise.all([
    protocolClDepositTxs(ctx),
    atLeast(ctx.versions.operatorsRegistry, '1.0.0')
      ? publicClient.readContract({
          address: contracts.operatorsRegistry,
          abi: devnetOperatorsRegistryAbi,
          functionName: 'getCurrentValidatorExitsDemand',
        })
      : 0n,
    claimTxs(ctx, rng),
  ])
  txsA.push(...clDeposits, ...coverageDonationTxs(ctx, day))
  if (exitDemand > 0n) {
    txsA.push(
      call(
        roles.keeper,
        contracts.operatorsRegistry,
        encodeFunctionData({
          abi: devnetOperatorsRegistryAbi,
          functionName: 'requestValidatorExits',
          args: [exitDemand],
        }),
        GAS.exitsBase + GAS.exitsPerValidator * exitDemand,
        `keeper requests ${exitDemand} exits`,
      ),
    )
  }
  txsA.push(...claims)
  const joining = wallets.filter((w) => w.kind === 'minter' && w.joinDay === day && !w.denied)
  if (joining.length > 0) {
    txsA.push(
      ...allowTxs(
        ctx,
        joining.map((w) => w.address),
        joining.map(() => MINTER_PERMISSIONS),
        'onboarding',
      ),
    )
  }
  const offboarded = wallets.filter(
    (w) => w.kind === 'minter' && canUse(w, MINTER_PERMISSIONS) && rng.chance(behavior.offboard),
  )
  if (offboarded.length > 0) {
    txsA.push(
      ...allowTxs(
        ctx,
        offboarded.map((w) => w.address),
        offboarded.map(() => 0n),
        'offboarding',
      ),
    )
  }
  let deniedToday: WalletState | undefined
  if (day === denyDay) {
    const candidates = wallets.filter((w) => w.kind === 'minter' && !w.denied && w.shares > 0n)
    const target = candidates.length > 0 ? rng.pick(candidates) : undefined
    deniedToday = target
    ctx.deniedWallet = target
    if (target) txsA.push(...denyTxs(ctx, target, true))
  }
  const undenied = day === ctx.undenyDay ? ctx.deniedWallet : undefined
  if (undenied?.denied) txsA.push(...denyTxs(ctx, undenied, false))
  if (feeChange && day === feeChange.day) {
    txsA.push(
      call(
        roles.admin,
        contracts.river,
        encodeFunctionData({
          abi: devnetRiverAbi,
          functionName: 'setGlobalFee',
          args: [BigInt(feeChange.fee)],
        }),
        GAS.admin,
        `fee change to ${feeChange.fee} bps`,
      ),
    )
  }
  // wallets losing their permissions in this block act from the next day on
  const changing = new Set<WalletState>(offboarded)
  if (deniedToday) changing.add(deniedToday)
  if (undenied) changing.add(undenied)
  txsA.push(...userTxs(ctx, rng, day, times.length, changing))
  await mine(ctx, txsA, times[0] as bigint)
  startOwedExits(ctx, day)
  for (const timestamp of times.slice(1)) {
    await mine(ctx, userTxs(ctx, rng, day, times.length, changing), timestamp)
  }

  // report block
  const report = await mineReport(ctx, day, date)
  return {
    day,
    date,
    reportBlock: report.blockNumber,
    transactions: counts.transactions - transactionsBefore,
  }
}

/**
 * Denies a wallet, or lifts its denial and allowlists it again as a minter. From Allowlist 1.2.1 on the denier
 * (dev account #3) calls setDenyPermissions (DENY, or 0 to lift), then the simulator's allowlisting restores the
 * permissions; before, the allower's `allow` (through the firewall) stores DENY or the new permissions itself.
 */
function denyTxs(ctx: SimulationContext, wallet: WalletState, deny: boolean): TxRequest[] {
  const { contracts, roles } = ctx.deployment
  const value = deny ? PERMISSION.DENY : MINTER_PERMISSIONS
  if (!atLeast(ctx.versions.allowlist, '1.2.1')) {
    return allowTxs(ctx, [wallet.address], [value], `${deny ? 'deny' : 'undeny'} wallet ${wallet.index}`)
  }
  const txs = [
    call(
      roles.denier,
      contracts.allowlist,
      encodeFunctionData({
        abi: allowlistAbi,
        functionName: 'setDenyPermissions',
        args: [[wallet.address], [deny ? PERMISSION.DENY : 0n]],
      }),
      GAS.admin,
      `${deny ? 'deny' : 'undeny'} wallet ${wallet.index}`,
    ),
  ]
  if (!deny)
    txs.push(...allowTxs(ctx, [wallet.address], [MINTER_PERMISSIONS], `allow wallet ${wallet.index} again`))
  return txs
}
