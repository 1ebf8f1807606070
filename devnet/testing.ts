import {
  type Address,
  BaseError,
  ContractFunctionRevertedError,
  encodeFunctionData,
  type Hex,
  type PublicClient,
  type TestClient,
} from 'viem'
import { allowlistAbi, allowlistLegacyAbi, PERMISSION } from '../chain/abi.ts'
import { devnetOracleAbi, devnetOracleLegacyAbi, devnetRiverAbi } from './abi.ts'
import { type Anvil, startAnvil } from './anvil.ts'
import {
  type BlockBuilder,
  createBlockBuilder,
  createDevnetClients,
  DEVNET_ANVIL_ARGS,
  type MinedBlock,
  type TxRequest,
} from './blocks.ts'
import type { ValidatorFigures } from './consensus.ts'
import { type DevnetDeployment, implementationVersionAt } from './deployment.ts'
import { deployProtocolTestChain, type TestChainStake } from './testing-protocol.ts'
import { createTimeline, type Timeline } from './timeline.ts'
import { atLeast, type HistoryKind, type ProtocolVersion, type ProxiedContract } from './versions.ts'

/** A consensus-layer report as the Oracle takes it. */
export interface ReportInput extends ValidatorFigures {
  epoch: bigint
  rebalanceDepositToRedeemMode: boolean
  slashingContainmentMode: boolean
}

/** A fresh anvil with the devnet contracts deployed, for tests that drive the contracts by hand. */
export interface TestChain {
  anvil: Anvil
  publicClient: PublicClient
  testClient: TestClient
  builder: BlockBuilder
  timeline: Timeline
  deployment: DevnetDeployment
  /** Mines `txs` in one block `seconds` after the latest one (default 12 s). */
  mine(txs: TxRequest[], seconds?: bigint): Promise<MinedBlock>
  /**
   * Allowlists accounts: the simulator's allower (the firewall's admin) through the AllowlistFirewall, with
   * `allow` or `setAllowPermissions` as the Allowlist's version in force takes.
   */
  allow(accounts: Address[], permissions?: bigint): Promise<MinedBlock>
  /** The version a proxy points at (its EIP-1967 slot, mapped through the deployment's implementations). */
  versionOf(contract: ProxiedContract, blockNumber?: bigint): Promise<ProtocolVersion>
  /** Funds an account with ETH (anvil_setBalance). */
  fund(address: Address, value: bigint): Promise<void>
  /** A River call from `from` (anvil impersonation). */
  riverTx(from: Address, data: Hex, value?: bigint, label?: string): TxRequest
  /** Reverts anvil to a snapshot (a reorg) and resynchronizes the block builder with it. */
  revert(snapshot: Hex): Promise<void>
  /** The oracle member's report transaction, to mine alongside others in one block. */
  reportTx(report: ReportInput): TxRequest
  /** The 0.4 Oracle's report transaction (balance in gwei). */
  legacyReportTx(epoch: bigint, balanceGwei: bigint, validatorCount: number): TxRequest
  /** Credits the Withdraw and EL fee contracts, then mines the oracle report. */
  report(report: ReportInput, credits?: { withdraw?: bigint; elFees?: bigint }): Promise<MinedBlock>
  stop(): Promise<void>
}

/**
 * @example
 * const chain = await startTestChain()
 * try { await chain.allow([wallet]) } finally { await chain.stop() }
 */
export async function startTestChain(
  options: {
    startDate?: string
    history?: HistoryKind
    /** deposits and validators staked before the chain is handed over (on the protocol's code: on River 0.4.0) */
    stake?: TestChainStake
  } = {},
): Promise<TestChain> {
  const timeline = createTimeline(options.startDate ?? '2026-04-01')
  const anvil = await startAnvil({ timestamp: timeline.genesisTimestamp, args: DEVNET_ANVIL_ARGS })
  try {
    const { publicClient, testClient } = createDevnetClients(anvil.rpcUrl)
    await testClient.request({ method: 'anvil_autoImpersonateAccount', params: [true] } as never)
    const builder = await createBlockBuilder({ publicClient, testClient })
    const deployment = await deployProtocolTestChain({
      publicClient,
      testClient,
      builder,
      timestamp: timeline.genesisTimestamp + 12n,
      history: options.history ?? 'current',
      stake: options.stake,
    })
    const { contracts, roles } = deployment
    const versionOf = (contract: ProxiedContract, blockNumber?: bigint) =>
      implementationVersionAt(publicClient, deployment, contract, blockNumber)
    const mine = async (txs: TxRequest[], seconds = 12n) => {
      const [block] = await builder.mine(txs, builder.lastTimestamp() + seconds)
      if (!block) throw new Error('no block mined')
      return block
    }
    const reportTx = (report: ReportInput): TxRequest => ({
      from: roles.oracleMember,
      to: contracts.oracle,
      data: encodeFunctionData({
        abi: devnetOracleAbi,
        functionName: 'reportConsensusLayerData',
        args: [report],
      }),
      gas: 3_000_000n,
      label: 'report',
    })
    const fund = async (address: Address, value: bigint) => {
      await testClient.setBalance({ address, value: (await publicClient.getBalance({ address })) + value })
    }
    return {
      anvil,
      publicClient,
      testClient,
      builder,
      timeline,
      deployment,
      mine,
      fund,
      versionOf,
      async allow(accounts, permissions = PERMISSION.DEPOSIT | PERMISSION.REDEEM) {
        const args = [accounts, accounts.map(() => permissions)] as const
        const data = atLeast(await versionOf('allowlist'), '1.2.1')
          ? encodeFunctionData({ abi: allowlistAbi, functionName: 'setAllowPermissions', args })
          : encodeFunctionData({ abi: allowlistLegacyAbi, functionName: 'allow', args })
        return mine([
          { from: roles.simulatorAllower, to: contracts.firewall, data, gas: 1_000_000n, label: 'allow' },
        ])
      },
      async revert(snapshot) {
        await testClient.revert({ id: snapshot })
        await builder.resync()
      },
      riverTx: (from, data, value, label = 'river call') => ({
        from,
        to: contracts.river,
        data,
        gas: 1_000_000n,
        label,
        ...(value === undefined ? {} : { value }),
      }),
      reportTx,
      legacyReportTx: (epoch, balanceGwei, validatorCount) => ({
        from: roles.oracleMember,
        to: contracts.oracle,
        data: encodeFunctionData({
          abi: devnetOracleLegacyAbi,
          functionName: 'reportConsensusLayerData',
          args: [epoch, balanceGwei, validatorCount],
        }),
        gas: 3_000_000n,
        label: 'legacy report',
      }),
      async report(report, credits = {}) {
        if (credits.withdraw) await fund(contracts.withdraw, credits.withdraw)
        if (credits.elFees) await fund(contracts.elFeeRecipient, credits.elFees)
        return mine([reportTx(report)], 3600n)
      },
      stop: () => anvil.stop(),
    }
  } catch (error) {
    await anvil.stop()
    throw error
  }
}

/**
 * Name of the custom error a call reverts with (an eth_call or a simulation from an impersonated account).
 *
 * @example
 * expect(await revertName(client.simulateContract({ ... }))).toBe('Unauthorized')
 */
export async function revertName(promise: Promise<unknown>): Promise<string> {
  try {
    await promise
  } catch (error) {
    if (error instanceof BaseError) {
      const revert = error.walk((e) => e instanceof ContractFunctionRevertedError)
      if (revert instanceof ContractFunctionRevertedError)
        return revert.data?.errorName ?? revert.reason ?? '?'
    }
    throw error
  }
  throw new Error('the call did not revert')
}

/** River call data helpers for tests. */
export const riverCall = {
  deposit: () => encodeFunctionData({ abi: devnetRiverAbi, functionName: 'deposit' }),
  depositAndTransfer: (recipient: Address) =>
    encodeFunctionData({ abi: devnetRiverAbi, functionName: 'depositAndTransfer', args: [recipient] }),
  transfer: (to: Address, value: bigint) =>
    encodeFunctionData({ abi: devnetRiverAbi, functionName: 'transfer', args: [to, value] }),
  requestRedeem: (amount: bigint, recipient: Address) =>
    encodeFunctionData({ abi: devnetRiverAbi, functionName: 'requestRedeem', args: [amount, recipient] }),
  claim: (ids: number[], events: number[]) =>
    encodeFunctionData({ abi: devnetRiverAbi, functionName: 'claimRedeemRequests', args: [ids, events] }),
  setGlobalFee: (fee: bigint) =>
    encodeFunctionData({ abi: devnetRiverAbi, functionName: 'setGlobalFee', args: [fee] }),
}

function minBigint(a: bigint, b: bigint): bigint {
  if (a < b) return a
  return b
}

/**
 * The integer math of PROTOCOL.md, written independently of the contracts, for tests that check the chain
 * against it (devnet/protocol-contracts.test.ts holds it to River, RedeemManager and OperatorsRegistry 1.2.1).
 */
export const referenceMath = {
  /**
   * shares minted for a deposit of `amount` wei: floor(a * S / U), U and S before the deposit; 1:1 when
   * either is zero (an empty pool, or ETH in River with no shares)
   */
  depositShares: (amount: bigint, S: bigint, U: bigint): bigint =>
    U === 0n || S === 0n ? amount : (amount * S) / U,
  /**
   * River 1.x's rewards of a report: the pool's growth from the report's balances and the consensus-layer
   * funds pulled (`U` after them minus `U` before the report, 32 ETH counted per validator deposited and not
   * yet reported), or 0 when it shrank, plus the EL fees pulled. A loss day with EL fees still has rewards,
   * the EL fees; ETH pulled back from the RedeemManager's exceeding buffer and coverage funds are never rewards.
   *
   * @example
   * referenceMath.reportRewards(-10n ** 18n, 10n ** 17n) // 10n ** 17n: the fee is charged on the EL fees
   */
  reportRewards: (balanceChange: bigint, elFeesPulled: bigint): bigint =>
    (balanceChange > 0n ? balanceChange : 0n) + elFeesPulled,
  /**
   * fee shares minted on rewards r (`reportRewards`): floor(r * S0 * f / (Unew * 10000 - r * f)), S0 the
   * supply before the mint, Unew River's `U` after every pull of the report (exceeding ETH included)
   */
  feeShares: (r: bigint, S0: bigint, fee: bigint, Unew: bigint): bigint => {
    const denominator = Unew * 10_000n - r * fee
    return denominator === 0n ? 0n : (r * S0 * fee) / denominator
  },
  /** resolveRedeemRequests for one request against the withdrawal stack (-1, -3, or the event id) */
  resolve: (
    request: { height: bigint; amount: bigint },
    events: readonly { height: bigint; amount: bigint }[],
  ) => {
    if (request.amount === 0n) return -3n
    const index = events.findIndex(
      (we) => we.height <= request.height && request.height < we.height + we.amount,
    )
    return index < 0 ? -1n : BigInt(index)
  },
  /**
   * A claim of `request` from withdrawal event `first` on: per crossed event, matched = min(amount,
   * we.height + we.amount - height); eth = floor(matched * withdrawnEth / we.amount) capped at
   * floor(matched * maxRedeemableEth / amount); the request's height rises and its amount and
   * maxRedeemableEth fall.
   */
  claimWalk: (
    request: { height: bigint; amount: bigint; maxRedeemableEth: bigint },
    events: readonly { height: bigint; amount: bigint; withdrawnEth: bigint }[],
    first: number,
  ) => {
    const r = { height: request.height, amount: request.amount, maxRedeemableEth: request.maxRedeemableEth }
    const steps: { eventId: number; matched: bigint; eth: bigint; remaining: bigint; exceeding: bigint }[] =
      []
    for (let id = first; id < events.length && r.amount > 0n; id++) {
      const we = events[id]
      if (!we) break
      const available = we.height + we.amount - r.height
      const matched = minBigint(r.amount, available)
      let eth = (matched * we.withdrawnEth) / we.amount
      const cap = (matched * r.maxRedeemableEth) / r.amount
      const exceeding = eth > cap ? eth - cap : 0n
      if (eth > cap) eth = cap
      r.height += matched
      r.amount -= matched
      r.maxRedeemableEth -= eth
      steps.push({ eventId: id, matched, eth, remaining: r.amount, exceeding })
    }
    return { steps, request: r }
  },
}
