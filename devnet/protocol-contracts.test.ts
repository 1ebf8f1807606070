/**
 * The protocol's own contracts at 1.2.1 (mainnet's bytecode, launched at 0.4.0 and upgraded release by release:
 * testing-protocol.ts) driven by hand: the Allowlist behind its firewall, River's deposits, reports, fee mint,
 * deposits to the consensus layer, redeem requests, withdrawal events, exits and claims, checked against
 * `referenceMath` and decoded with the mainnet ABIs the service reads (`chain/abi.ts`).
 */
import {
  type Abi,
  type Address,
  encodeFunctionData,
  isAddressEqual,
  type Log,
  parseEther,
  parseEventLogs,
  zeroAddress,
} from 'viem'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import {
  allowlistAbi,
  operatorsRegistryAbi,
  PERMISSION,
  PROCESSED_REPORT_TOPIC,
  redeemManagerAbi,
  riverAbi,
} from '../chain/abi.ts'
import { derivedAddress } from './accounts.ts'
import type { MinedBlock, TxRequest } from './blocks.ts'
import { implementationArtifact, type ProtocolContractName, protocolCode } from './protocol-code.ts'
import { type KeeperState, keeperDepositTxs } from './simulation/protocol-keeper.ts'
import {
  type ReportInput,
  referenceMath,
  revertName,
  riverCall,
  startTestChain,
  type TestChain,
} from './testing.ts'

const { depositShares, feeShares, claimWalk, reportRewards } = referenceMath

const ETH = 10n ** 18n
const ZERO_ROOT = `0x${'00'.repeat(32)}` as const

/** The full ABI of a contract's 1.2.1 implementation (every call, event and error). */
const abi121 = (contract: ProtocolContractName): Abi =>
  protocolCode(implementationArtifact(contract, '1.2.1')).abi
const RIVER = abi121('River')
const REDEEM_MANAGER = abi121('RedeemManager')
const REGISTRY = abi121('OperatorsRegistry')
const ALLOWLIST = [...abi121('Allowlist'), ...protocolCode('Firewall').abi]

/** The logs `address` emitted in a block, decoded with `abi` (logs it does not know are left out). */
const events = <const A extends Abi>(block: MinedBlock, abi: A, address?: Address) =>
  parseEventLogs({
    abi,
    logs: (address
      ? block.logs.filter((l) => isAddressEqual(l.address, address))
      : block.logs) as unknown as Log[],
  })

/** The names of the events `address` emitted, in order, decoded with its full 1.2.1 ABI. */
const eventNames = (block: MinedBlock, abi: Abi, address: Address) =>
  events(block, abi, address).map((l) => l.eventName)

describe('Allowlist 1.2.1 behind the AllowlistFirewall', () => {
  let chain: TestChain
  const [a, b, c] = [0, 1, 2].map((i) => derivedAddress('allowlist-test', 'account', i)) as [
    Address,
    Address,
    Address,
  ]
  beforeAll(async () => {
    chain = await startTestChain()
  })
  afterAll(() => chain?.stop())

  // the service's writer (the firewall's executor) through the AllowlistFirewall, which forwards the calldata
  const simulateAllow = (accounts: Address[], permissions: bigint[], from?: Address) =>
    chain.publicClient.simulateContract({
      account: from ?? chain.deployment.roles.allower,
      address: chain.deployment.contracts.firewall,
      abi: ALLOWLIST,
      functionName: 'setAllowPermissions',
      args: [accounts, permissions],
    })

  test('behavior: setAllowPermissions follows the mainnet revert rules', async () => {
    expect(await chain.versionOf('allowlist')).toBe('1.2.1')
    expect(await revertName(simulateAllow([], []))).toBe('InvalidCount')
    expect(await revertName(simulateAllow([a, b], [1n]))).toBe('MismatchedArrayLengths')
    expect(await revertName(simulateAllow([zeroAddress], [1n]))).toBe('InvalidZeroAddress')
    expect(await revertName(simulateAllow([a], [PERMISSION.DENY]))).toBe('AttemptToSetDenyPermission')
    // neither the firewall's admin nor its executor: the firewall refuses before the Allowlist is called
    expect(await revertName(simulateAllow([a], [1n], c))).toBe('Unauthorized')
    // the Allowlist itself takes the write from its allower only (the firewall)
    expect(
      await revertName(
        chain.publicClient.simulateContract({
          account: chain.deployment.roles.allower,
          address: chain.deployment.contracts.allowlist,
          abi: ALLOWLIST,
          functionName: 'setAllowPermissions',
          args: [[a], [1n]],
        }),
      ),
    ).toBe('Unauthorized')
  })

  test('behavior: the firewall executor (service) and admin (simulator) write through the firewall; the event decodes with the mainnet ABI', async () => {
    const block = await chain.mine([
      {
        from: chain.deployment.roles.allower,
        to: chain.deployment.contracts.firewall,
        data: encodeFunctionData({
          abi: allowlistAbi,
          functionName: 'setAllowPermissions',
          args: [
            [a, b],
            [PERMISSION.DEPOSIT | PERMISSION.REDEEM, PERMISSION.DEPOSIT],
          ],
        }),
        gas: 500_000n,
        label: 'service allower',
      },
    ])
    await chain.allow([c], PERMISSION.REDEEM)
    const logs = events(block, allowlistAbi, chain.deployment.contracts.allowlist)
    expect(logs.map((l) => [l.eventName, l.args])).toEqual([
      ['SetAllowlistPermissions', { accounts: [a, b], permissions: [5n, 1n] }],
    ])
    const isAllowed = (account: Address, mask: bigint) =>
      chain.publicClient.readContract({
        address: chain.deployment.contracts.allowlist,
        abi: allowlistAbi,
        functionName: 'isAllowed',
        args: [account, mask],
      })
    expect(await isAllowed(a, PERMISSION.DEPOSIT | PERMISSION.REDEEM)).toBe(true)
    expect(await isAllowed(b, PERMISSION.REDEEM)).toBe(false)
    expect(await isAllowed(c, PERMISSION.REDEEM)).toBe(true)
  })

  test('behavior: setDenyPermissions stores exactly DENY, only for the denier; a denied account cannot be allowed', async () => {
    const deny = (from: Address, permission: bigint): TxRequest => ({
      from,
      to: chain.deployment.contracts.allowlist,
      data: encodeFunctionData({
        abi: allowlistAbi,
        functionName: 'setDenyPermissions',
        args: [[a], [permission]],
      }),
      gas: 300_000n,
      label: 'deny',
    })
    await expect(chain.mine([deny(chain.deployment.roles.allower, PERMISSION.DENY)])).rejects.toThrow(
      /Unauthorized/,
    )
    const block = await chain.mine([
      deny(chain.deployment.roles.denier, PERMISSION.DENY | PERMISSION.DEPOSIT),
    ])
    expect(events(block, allowlistAbi)[0]?.args).toEqual({
      accounts: [a],
      permissions: [PERMISSION.DENY | PERMISSION.DEPOSIT],
    })
    const read = async () => {
      const address = chain.deployment.contracts.allowlist
      return {
        permissions: await chain.publicClient.readContract({
          address,
          abi: allowlistAbi,
          functionName: 'getPermissions',
          args: [a],
        }),
        denied: await chain.publicClient.readContract({
          address,
          abi: allowlistAbi,
          functionName: 'isDenied',
          args: [a],
        }),
        allowed: await chain.publicClient.readContract({
          address,
          abi: allowlistAbi,
          functionName: 'isAllowed',
          args: [a, 0n],
        }),
      }
    }
    // a denied account is allowed nothing, not even the empty mask
    expect(await read()).toEqual({ permissions: PERMISSION.DENY, denied: true, allowed: false })
    expect(await revertName(simulateAllow([a], [PERMISSION.DEPOSIT]))).toBe('AttemptToRemoveDenyPermission')
    await chain.mine([deny(chain.deployment.roles.denier, 0n)])
    expect(await read()).toEqual({ permissions: 0n, denied: false, allowed: true })
    // the lifted denial lets the allower write the account again
    await chain.allow([a], PERMISSION.DEPOSIT)
    expect(await read()).toEqual({ permissions: PERMISSION.DEPOSIT, denied: false, allowed: true })
  })
})

describe('River, RedeemManager and OperatorsRegistry 1.2.1', () => {
  let chain: TestChain
  let keeper: KeeperState
  const [alice, bob, carol] = [0, 1, 2].map((i) => derivedAddress('river-test', 'account', i)) as [
    Address,
    Address,
    Address,
  ]
  // frame-first epochs (multiples of 225), long final at the chain's time
  let epoch = 400_050n
  const zeroStopped = [0, 0, 0, 0, 0, 0]
  const contracts = () => chain.deployment.contracts
  const read = async <T>(address: Address, abi: Abi, functionName: string, args: unknown[] = []) =>
    (await chain.publicClient.readContract({ address, abi, functionName, args } as never)) as T
  const readRiver = <T = bigint>(functionName: string, args: unknown[] = []) =>
    read<T>(contracts().river, RIVER, functionName, args)
  const supply = async () => ({
    U: await readRiver('totalUnderlyingSupply'),
    S: await readRiver('totalSupply'),
  })
  const balanceOf = (account: Address) => readRiver('balanceOf', [account])
  const buffers = async () => ({
    toDeposit: await readRiver('getBalanceToDeposit'),
    committed: await readRiver('getCommittedBalance'),
    toRedeem: await readRiver('getBalanceToRedeem'),
  })
  const requestDetails = (id: number) =>
    chain.publicClient.readContract({
      address: contracts().redeemManager,
      abi: redeemManagerAbi,
      functionName: 'getRedeemRequestDetails',
      args: [id],
    })
  const eventDetails = (id: number) =>
    chain.publicClient.readContract({
      address: contracts().redeemManager,
      abi: redeemManagerAbi,
      functionName: 'getWithdrawalEventDetails',
      args: [id],
    })
  const bufferedExceeding = () =>
    chain.publicClient.readContract({
      address: contracts().redeemManager,
      abi: redeemManagerAbi,
      functionName: 'getBufferedExceedingEth',
    })
  const resolve = (ids: number[]) =>
    chain.publicClient.readContract({
      address: contracts().redeemManager,
      abi: redeemManagerAbi,
      functionName: 'resolveRedeemRequests',
      args: [ids],
    })
  const lastReport = () =>
    readRiver<{ validatorsBalance: bigint; validatorsExitedBalance: bigint; validatorsCount: number }>(
      'getLastConsensusLayerReport',
    )
  const report = (fields: Partial<ReportInput>, credits?: { withdraw?: bigint; elFees?: bigint }) => {
    epoch += 225n
    return chain.report(
      {
        epoch,
        validatorsBalance: 0n,
        validatorsSkimmedBalance: 0n,
        validatorsExitedBalance: 0n,
        validatorsExitingBalance: 0n,
        validatorsCount: 0,
        stoppedValidatorCountPerOperator: zeroStopped,
        rebalanceDepositToRedeemMode: false,
        slashingContainmentMode: false,
        ...fields,
      },
      credits,
    )
  }
  /** The `ProcessedConsensusLayerReport` of a report's block, decoded with the mainnet ABI. */
  const processed = (block: MinedBlock) => {
    const log = events(block, riverAbi, contracts().river).find(
      (l) => l.eventName === 'ProcessedConsensusLayerReport',
    )
    if (log?.eventName !== 'ProcessedConsensusLayerReport')
      throw new Error('no ProcessedConsensusLayerReport')
    return log.args
  }
  /** U as River 1.2.1 defines it, from its own buffers and the last report; River holds exactly its buffers. */
  const expectedU = async () => {
    const last = await lastReport()
    const { toDeposit, committed, toRedeem } = await buffers()
    const deposited = await readRiver('getDepositedValidatorCount')
    const riverEth = await chain.publicClient.getBalance({ address: contracts().river })
    expect(riverEth).toBe(toDeposit + committed + toRedeem)
    return (
      last.validatorsBalance +
      toDeposit +
      committed +
      toRedeem +
      (deposited - BigInt(last.validatorsCount)) * 32n * ETH
    )
  }
  const simulate = (
    account: Address,
    address: Address,
    abi: Abi,
    functionName: string,
    args: unknown[] = [],
  ) => chain.publicClient.simulateContract({ account, address, abi, functionName, args } as never)
  const deny = (account: Address, permission: bigint): TxRequest => ({
    from: chain.deployment.roles.denier,
    to: contracts().allowlist,
    data: encodeFunctionData({
      abi: allowlistAbi,
      functionName: 'setDenyPermissions',
      args: [[account], [permission]],
    }),
    gas: 300_000n,
    label: 'deny',
  })

  beforeAll(async () => {
    chain = await startTestChain()
    for (const account of [alice, bob, carol]) await chain.fund(account, 1_000n * ETH)
    keeper = {
      deployment: chain.deployment,
      versions: { river: '1.2.1', operatorsRegistry: '1.2.1' },
      fundedKeys: chain.deployment.operators.map(() => 0),
      addedKeys: chain.deployment.operators.map(() => 0),
    }
  })
  afterAll(() => chain?.stop())

  test('behavior: deposits need DEPOSIT and mint 1:1 on an empty pool', async () => {
    expect(await chain.versionOf('river')).toBe('1.2.1')
    expect(await supply()).toEqual({ U: 0n, S: 0n })
    expect(await revertName(simulate(alice, contracts().river, RIVER, 'deposit'))).toBe('EmptyDeposit')
    expect(
      await revertName(
        chain.publicClient.simulateContract({
          account: alice,
          address: contracts().river,
          abi: RIVER,
          functionName: 'deposit',
          value: ETH,
        }),
      ),
    ).toBe('Unauthorized')
    await chain.allow([alice, bob])
    const amount = parseEther('100.123456789012345678')
    expect(depositShares(amount, 0n, 0n)).toBe(amount)
    const block = await chain.mine([
      chain.riverTx(alice, riverCall.deposit(), amount),
      chain.riverTx(bob, riverCall.deposit(), 60n * ETH),
    ])
    // the real River also books its deposit buffer and supply in events of its own
    expect(eventNames(block, RIVER, contracts().river)).toEqual([
      'SetBalanceToDeposit',
      'SetTotalSupply',
      'Transfer',
      'UserDeposit',
      'SetBalanceToDeposit',
      'SetTotalSupply',
      'Transfer',
      'UserDeposit',
    ])
    const logs = events(block, riverAbi)
    expect(logs.map((l) => [l.eventName, l.args])).toEqual([
      ['Transfer', { from: zeroAddress, to: alice, value: amount }],
      ['UserDeposit', { depositor: alice, recipient: alice, amount }],
      ['Transfer', { from: zeroAddress, to: bob, value: depositShares(60n * ETH, amount, amount) }],
      ['UserDeposit', { depositor: bob, recipient: bob, amount: 60n * ETH }],
    ])
    expect(await balanceOf(bob)).toBe(60n * ETH)
    expect(await supply()).toEqual({ U: amount + 60n * ETH, S: amount + 60n * ETH })
    expect(await expectedU()).toBe(amount + 60n * ETH)
    expect(await buffers()).toEqual({ toDeposit: amount + 60n * ETH, committed: 0n, toRedeem: 0n })
  })

  test('behavior: a report commits the deposit buffer in whole validators; the keeper deposits from the committed balance only', async () => {
    const keeperDeposit = (count: bigint) =>
      simulate(
        chain.deployment.roles.keeper,
        contracts().river,
        RIVER,
        'depositToConsensusLayerWithDepositRoot',
        [count, ZERO_ROOT],
      )
    // nothing committed yet: the deposit buffer alone funds no validator
    expect(await revertName(keeperDeposit(4n))).toBe('NotEnoughFunds')
    expect(
      await revertName(
        simulate(alice, contracts().river, RIVER, 'depositToConsensusLayerWithDepositRoot', [1n, ZERO_ROOT]),
      ),
    ).toBe('OnlyKeeper')
    const before = await supply()
    const block = await report({})
    expect(eventNames(block, RIVER, contracts().river)).toEqual([
      'PulledELFees',
      'PulledRedeemManagerExceedingEth',
      'PulledCoverageFunds',
      'ReportedRedeemManager',
      'SetBalanceCommittedToDeposit',
      'SetBalanceToDeposit',
      'ProcessedConsensusLayerReport',
    ])
    expect(processed(block).trace).toEqual({
      rewards: 0n,
      pulledELFees: 0n,
      pulledRedeemManagerExceedingEthBuffer: 0n,
      pulledCoverageFunds: 0n,
    })
    // the first report's period reaches back to epoch 0: the daily limit (3,200 ETH) does not bind, the whole
    // buffer is committed in multiples of 32 ETH
    const committed = (before.U / (32n * ETH)) * 32n * ETH
    expect(await buffers()).toEqual({ toDeposit: before.U - committed, committed, toRedeem: 0n })
    expect(await supply()).toEqual(before)

    const depositContractEth = await chain.publicClient.getBalance({ address: contracts().depositContract })
    const deposit = await chain.mine(keeperDepositTxs(keeper, [0, 1], 4n, chain.builder.lastBlockNumber()))
    expect(
      events(deposit, REGISTRY, contracts().operatorsRegistry)
        .filter((l) => l.eventName === 'FundedValidatorKeys')
        .map((l) => (l.args as { index: bigint }).index),
    ).toEqual([0n, 1n])
    keeper.fundedKeys = [2, 2, 0, 0, 0]
    expect(await readRiver('getDepositedValidatorCount')).toBe(4n)
    expect(await buffers()).toEqual({
      toDeposit: before.U - committed,
      committed: committed - 128n * ETH,
      toRedeem: 0n,
    })
    expect(
      (await chain.publicClient.getBalance({ address: contracts().depositContract })) - depositContractEth,
    ).toBe(128n * ETH)
    // the validators deposited but not yet reported count 32 ETH each: U does not move
    expect(await supply()).toEqual(before)
    expect(await expectedU()).toBe(before.U)
  })

  test('behavior: a report mints referenceMath.feeShares on its rewards (CL growth + EL fees) and emits the mainnet events', async () => {
    const before = await supply()
    const fee = await readRiver('getGlobalFee')
    expect(fee).toBe(1500n)
    const elFees = parseEther('0.05')
    const block = await report(
      {
        validatorsCount: 4,
        validatorsBalance: 128n * ETH + parseEther('0.4'),
        stoppedValidatorCountPerOperator: zeroStopped,
      },
      { elFees },
    )
    const r = reportRewards(parseEther('0.4'), elFees)
    expect(r).toBe(parseEther('0.45'))
    const Unew = before.U + r
    const minted = feeShares(r, before.S, fee, Unew)
    expect(minted).toBeGreaterThan(0n)
    const logs = events(block, riverAbi, contracts().river)
    expect(logs.map((l) => l.eventName)).toEqual([
      'PulledELFees',
      'PulledRedeemManagerExceedingEth',
      'PulledCoverageFunds',
      'Transfer',
      'RewardsEarned',
      'ProcessedConsensusLayerReport',
    ])
    expect(logs.slice(0, 5).map((l) => l.args)).toEqual([
      { amount: elFees },
      { amount: 0n },
      { amount: 0n },
      { from: zeroAddress, to: chain.deployment.roles.collector, value: minted },
      {
        collector: chain.deployment.roles.collector,
        oldTotalUnderlyingBalance: before.U,
        oldTotalSupply: before.S,
        newTotalUnderlyingBalance: Unew,
        newTotalSupply: before.S + minted,
      },
    ])
    const { trace, report: reported } = processed(block)
    expect(trace).toEqual({
      rewards: r,
      pulledELFees: elFees,
      pulledRedeemManagerExceedingEthBuffer: 0n,
      pulledCoverageFunds: 0n,
    })
    expect(reported.validatorsCount).toBe(4)
    expect(block.logs.find((l) => l.topics[0] === PROCESSED_REPORT_TOPIC)?.address.toLowerCase()).toBe(
      contracts().river.toLowerCase(),
    )
    expect(await supply()).toEqual({ U: Unew, S: before.S + minted })
    expect(await expectedU()).toBe(Unew)
    // the collector holds f/10000 of the rewards' value (to within rounding)
    const collectorValue = (minted * Unew) / (before.S + minted)
    const shortfall = (r * fee) / 10_000n - collectorValue
    expect(shortfall >= 0n && shortfall <= 2n).toBe(true)
  })

  test('behavior: a deposit after rewards mints floor(a*S/U)', async () => {
    const { U, S } = await supply()
    expect(S).toBeLessThan(U)
    const amount = parseEther('3.333333333333333333')
    const before = await balanceOf(bob)
    await chain.mine([chain.riverTx(bob, riverCall.deposit(), amount)])
    const minted = (await balanceOf(bob)) - before
    expect(minted).toBe(depositShares(amount, S, U))
    expect(minted).toBeLessThan(amount)
  })

  test('behavior: requestRedeem needs REDEEM, moves the shares user -> River -> RedeemManager, records the rate with River as the initiator', async () => {
    expect(await revertName(simulate(carol, contracts().river, RIVER, 'requestRedeem', [ETH, carol]))).toBe(
      'Unauthorized',
    )
    const { U, S } = await supply()
    const [aliceShares, bobShares] = [await balanceOf(alice), await balanceOf(bob)]
    const block = await chain.mine([
      chain.riverTx(alice, riverCall.requestRedeem(50n * ETH, alice)),
      chain.riverTx(bob, riverCall.requestRedeem(40n * ETH, bob)),
    ])
    const { river, redeemManager } = contracts()
    const transfers = events(block, riverAbi).filter((l) => l.eventName === 'Transfer')
    expect(transfers.map((l) => l.args)).toEqual([
      { from: alice, to: river, value: 50n * ETH },
      { from: river, to: redeemManager, value: 50n * ETH },
      { from: bob, to: river, value: 40n * ETH },
      { from: river, to: redeemManager, value: 40n * ETH },
    ])
    const requested = events(block, redeemManagerAbi, redeemManager).filter(
      (l) => l.eventName === 'RequestedRedeem',
    )
    expect(requested.map((l) => l.args)).toEqual([
      { recipient: alice, height: 0n, amount: 50n * ETH, maxRedeemableEth: (50n * ETH * U) / S, id: 0 },
      { recipient: bob, height: 50n * ETH, amount: 40n * ETH, maxRedeemableEth: (40n * ETH * U) / S, id: 1 },
    ])
    // River calls the RedeemManager: River, not the user, is the request's initiator
    expect(await requestDetails(1)).toEqual({
      amount: 40n * ETH,
      maxRedeemableEth: (40n * ETH * U) / S,
      recipient: bob,
      height: 50n * ETH,
      initiator: river,
    })
    expect([await balanceOf(alice), await balanceOf(bob)]).toEqual([
      aliceShares - 50n * ETH,
      bobShares - 40n * ETH,
    ])
    expect([await balanceOf(river), await balanceOf(redeemManager)]).toEqual([0n, 90n * ETH])
    expect(await read<bigint>(redeemManager, REDEEM_MANAGER, 'getRedeemDemand')).toBe(90n * ETH)
    expect(await resolve([0, 1, 2])).toEqual([-1n, -1n, -2n])
  })

  test('behavior: the deposit buffer pays a partial withdrawal event at the post-fee rate, exits are demanded for the rest, and a partial claim is capped', async () => {
    const { toDeposit: btd, committed } = await buffers()
    expect(btd).toBeGreaterThan(ETH)
    const block = await report({
      validatorsCount: 4,
      validatorsBalance: 128n * ETH + parseEther('0.7'),
      rebalanceDepositToRedeemMode: true,
    })
    const earned = events(block, riverAbi, contracts().river).find((l) => l.eventName === 'RewardsEarned')
    if (earned?.eventName !== 'RewardsEarned') throw new Error('no RewardsEarned')
    const { newTotalUnderlyingBalance: Unew, newTotalSupply: Snew } = earned.args
    const demandEth = (90n * ETH * Unew) / Snew
    const supplied = (btd * Snew) / Unew
    const reported = events(block, redeemManagerAbi, contracts().redeemManager).find(
      (l) => l.eventName === 'ReportedWithdrawal',
    )
    expect(reported?.args).toEqual({ height: 0n, amount: supplied, ethAmount: btd, id: 0 })
    const burn = events(block, riverAbi, contracts().river).find(
      (l) => l.eventName === 'Transfer' && l.args.to === zeroAddress,
    )
    expect(burn?.args).toEqual({ from: contracts().redeemManager, to: zeroAddress, value: supplied })
    // the whole deposit buffer went to the redeem buffer and out; the committed balance is not rebalanced
    expect(await buffers()).toEqual({ toDeposit: 0n, committed, toRedeem: 0n })
    const exitDemand = await read<bigint>(
      contracts().operatorsRegistry,
      REGISTRY,
      'getCurrentValidatorExitsDemand',
    )
    expect(exitDemand).toBe((demandEth - btd + 32n * ETH - 1n) / (32n * ETH))
    expect(exitDemand).toBe(3n)
    expect(await resolve([0, 1])).toEqual([0n, -1n])

    // carol (anyone) claims alice's request: it matches event 0 partially and the rate cap applies
    const request = await requestDetails(0)
    const we0 = await eventDetails(0)
    const expected = claimWalk(request, [we0], 0)
    const step = expected.steps[0]
    if (!step) throw new Error('no step')
    expect(step.exceeding).toBeGreaterThan(0n)
    const aliceEth = await chain.publicClient.getBalance({ address: alice })
    const claimBlock = await chain.mine([chain.riverTx(carol, riverCall.claim([0], [0]))])
    const logs = events(claimBlock, redeemManagerAbi, contracts().redeemManager)
    expect(logs.map((l) => [l.eventName, l.args])).toEqual([
      [
        'SatisfiedRedeemRequest',
        {
          redeemRequestId: 0,
          withdrawalEventId: 0,
          lsEthAmountSatisfied: step.matched,
          ethAmountSatisfied: step.eth,
          lsEthAmountRemaining: step.remaining,
          ethAmountExceeding: step.exceeding,
        },
      ],
      [
        'ClaimedRedeemRequest',
        {
          redeemRequestId: 0,
          recipient: alice,
          ethAmount: step.eth,
          lsEthAmount: step.matched,
          remainingLsEthAmount: step.remaining,
        },
      ],
    ])
    expect((await chain.publicClient.getBalance({ address: alice })) - aliceEth).toBe(step.eth)
    expect(await requestDetails(0)).toEqual({ ...request, ...expected.request })
    expect(await bufferedExceeding()).toBe(step.exceeding)
    expect(await resolve([0])).toEqual([-1n])
  })

  test('behavior: exits pay the next withdrawal events; claims cross events; exceeding ETH returns to River without counting as rewards', async () => {
    const { roles } = chain.deployment
    const { operatorsRegistry, redeemManager } = contracts()
    const requestExits = (count: bigint): TxRequest => ({
      from: roles.keeper,
      to: operatorsRegistry,
      data: encodeFunctionData({ abi: REGISTRY, functionName: 'requestValidatorExits', args: [count] }),
      gas: 500_000n,
      label: 'exits',
    })
    const exitRequests = (block: MinedBlock) =>
      events(block, REGISTRY, operatorsRegistry)
        .filter((l) => l.eventName === 'RequestedValidatorExits')
        .map((l) => l.args)
    // the registry spreads exits over the operators with the most active validators; the count is each
    // operator's new total of requested exits
    expect(exitRequests(await chain.mine([requestExits(2n)]))).toEqual([
      { index: 0n, count: 1n },
      { index: 1n, count: 1n },
    ])
    expect(await read<bigint>(operatorsRegistry, REGISTRY, 'getCurrentValidatorExitsDemand')).toBe(1n)

    const exceeding = await bufferedExceeding()
    const before = await supply()
    const exited = parseEther('64.2')
    const block = await report(
      {
        validatorsCount: 4,
        validatorsBalance: 128n * ETH + parseEther('0.9') - exited,
        validatorsExitedBalance: exited,
        stoppedValidatorCountPerOperator: [2, 1, 1, 0, 0, 0],
      },
      { withdraw: exited },
    )
    expect(
      events(block, RIVER, contracts().river).find((l) => l.eventName === 'PulledCLFunds')?.args,
    ).toEqual({
      pulledSkimmedEthAmount: 0n,
      pullExitedEthAmount: exited,
    })
    const { trace } = processed(block)
    expect(trace).toEqual({
      rewards: reportRewards(parseEther('0.2'), 0n),
      pulledELFees: 0n,
      pulledRedeemManagerExceedingEthBuffer: exceeding,
      pulledCoverageFunds: 0n,
    })
    expect(
      events(block, riverAbi, contracts().river).find(
        (l) => l.eventName === 'PulledRedeemManagerExceedingEth',
      )?.args,
    ).toEqual({ amount: exceeding })
    const earned = events(block, riverAbi, contracts().river).find((l) => l.eventName === 'RewardsEarned')
    if (earned?.eventName !== 'RewardsEarned') throw new Error('no RewardsEarned')
    // the fee is on the rewards only; U after every pull includes the exceeding ETH
    expect(earned.args.newTotalUnderlyingBalance).toBe(before.U + trace.rewards + exceeding)
    expect(earned.args.newTotalSupply - earned.args.oldTotalSupply).toBe(
      feeShares(trace.rewards, before.S, 1500n, before.U + trace.rewards + exceeding),
    )
    expect(await bufferedExceeding()).toBe(0n)
    expect(await resolve([0, 1])).toEqual([1n, 1n])
    expect((await supply()).U).toBe(await expectedU())
    expect(
      await read(operatorsRegistry, operatorsRegistryAbi, 'getStoppedValidatorCountPerOperator'),
    ).toEqual([1, 1, 0, 0, 0])
    expect(
      await chain.publicClient.readContract({
        address: operatorsRegistry,
        abi: operatorsRegistryAbi,
        functionName: 'getOperator',
        args: [0n],
      }),
    ).toMatchObject({ funded: 2, requestedExits: 1, active: true, name: chain.deployment.operators[0]?.name })

    // the demand not covered by the exited ETH asks for one more exit, which goes to operator 0 (ties: the first)
    expect(await read<bigint>(operatorsRegistry, REGISTRY, 'getCurrentValidatorExitsDemand')).toBe(1n)
    expect(exitRequests(await chain.mine([requestExits(5n)]))).toEqual([{ index: 0n, count: 2n }])
    const exited2 = exited + parseEther('32.1')
    await report(
      {
        validatorsCount: 4,
        validatorsBalance: 128n * ETH + parseEther('1.0') - exited2,
        validatorsExitedBalance: exited2,
        stoppedValidatorCountPerOperator: [3, 2, 1, 0, 0, 0],
      },
      { withdraw: exited2 - exited },
    )
    expect(await read<bigint>(redeemManager, REDEEM_MANAGER, 'getWithdrawalEventCount')).toBe(3n)
    expect(await read<bigint>(redeemManager, REDEEM_MANAGER, 'getRedeemDemand')).toBe(0n)
    expect(await balanceOf(redeemManager)).toBe(0n)

    expect(
      await revertName(
        simulate(carol, redeemManager, REDEEM_MANAGER, 'claimRedeemRequests', [[1], [0], true, 65_535]),
      ),
    ).toBe('DoesNotMatch')

    const weEvents = [await eventDetails(0), await eventDetails(1), await eventDetails(2)]
    const expectedAlice = claimWalk(await requestDetails(0), weEvents, 1)
    const expectedBob = claimWalk(await requestDetails(1), weEvents, 1)
    // bob's request spans events 1 and 2: one claim crosses both
    expect(expectedBob.steps.map((s) => s.eventId)).toEqual([1, 2])
    const [aliceEth, bobEth] = [
      await chain.publicClient.getBalance({ address: alice }),
      await chain.publicClient.getBalance({ address: bob }),
    ]
    const claim = await chain.mine([chain.riverTx(carol, riverCall.claim([0, 1], [1, 1]))])
    const logs = events(claim, redeemManagerAbi, redeemManager)
    const sum = (steps: { eth: bigint }[]) => steps.reduce((total, s) => total + s.eth, 0n)
    const sumMatched = (steps: { matched: bigint }[]) => steps.reduce((total, s) => total + s.matched, 0n)
    expect(logs.map((l) => [l.eventName, l.args])).toEqual([
      ...expectedAlice.steps.map((s) => [
        'SatisfiedRedeemRequest',
        {
          redeemRequestId: 0,
          withdrawalEventId: s.eventId,
          lsEthAmountSatisfied: s.matched,
          ethAmountSatisfied: s.eth,
          lsEthAmountRemaining: s.remaining,
          ethAmountExceeding: s.exceeding,
        },
      ]),
      [
        'ClaimedRedeemRequest',
        {
          redeemRequestId: 0,
          recipient: alice,
          ethAmount: sum(expectedAlice.steps),
          lsEthAmount: sumMatched(expectedAlice.steps),
          remainingLsEthAmount: 0n,
        },
      ],
      ...expectedBob.steps.map((s) => [
        'SatisfiedRedeemRequest',
        {
          redeemRequestId: 1,
          withdrawalEventId: s.eventId,
          lsEthAmountSatisfied: s.matched,
          ethAmountSatisfied: s.eth,
          lsEthAmountRemaining: s.remaining,
          ethAmountExceeding: s.exceeding,
        },
      ]),
      [
        'ClaimedRedeemRequest',
        {
          redeemRequestId: 1,
          recipient: bob,
          ethAmount: sum(expectedBob.steps),
          lsEthAmount: 40n * ETH,
          remainingLsEthAmount: 0n,
        },
      ],
    ])
    expect((await chain.publicClient.getBalance({ address: alice })) - aliceEth).toBe(
      sum(expectedAlice.steps),
    )
    expect((await chain.publicClient.getBalance({ address: bob })) - bobEth).toBe(sum(expectedBob.steps))
    expect(await resolve([0, 1, 7])).toEqual([-3n, -3n, -2n])
    // every request is paid: the RedeemManager keeps its new exceeding buffer plus rounding dust (at most one
    // wei per request and event crossed)
    const rmEth = await chain.publicClient.getBalance({ address: redeemManager })
    const buffered = await bufferedExceeding()
    expect(buffered).toBe(
      [...expectedAlice.steps, ...expectedBob.steps].reduce((total, s) => total + s.exceeding, 0n),
    )
    expect(rmEth - buffered >= 0n && rmEth - buffered <= 4n).toBe(true)
  })

  test('behavior: a loss without EL fees mints nothing; a loss with EL fees mints the fee on the EL fees', async () => {
    const exceeding = await bufferedExceeding()
    const last = await lastReport()
    const before = await supply()
    const stopped = [3, 2, 1, 0, 0, 0]
    const loss = await report({
      validatorsCount: 4,
      validatorsBalance: last.validatorsBalance - ETH,
      validatorsExitedBalance: last.validatorsExitedBalance,
      stoppedValidatorCountPerOperator: stopped,
    })
    const names = events(loss, riverAbi, contracts().river).map((l) => l.eventName)
    expect(names).not.toContain('RewardsEarned')
    expect(names).not.toContain('Transfer')
    expect(processed(loss).trace).toEqual({
      rewards: reportRewards(-ETH, 0n),
      pulledELFees: 0n,
      pulledRedeemManagerExceedingEthBuffer: exceeding,
      pulledCoverageFunds: 0n,
    })
    const afterLoss = await supply()
    expect(afterLoss.S).toBe(before.S)
    // exceeding ETH pulled back from the RedeemManager raises U without being a reward
    expect(afterLoss.U).toBe(before.U - ETH + exceeding)

    const elFees = parseEther('0.1')
    const lossWithFees = await report(
      {
        validatorsCount: 4,
        validatorsBalance: last.validatorsBalance - 2n * ETH,
        validatorsExitedBalance: last.validatorsExitedBalance,
        stoppedValidatorCountPerOperator: stopped,
      },
      { elFees },
    )
    const r = reportRewards(-ETH, elFees)
    expect(r).toBe(elFees)
    const Unew = afterLoss.U - ETH + elFees
    const minted = feeShares(r, afterLoss.S, 1500n, Unew)
    expect(minted).toBeGreaterThan(0n)
    const logs = events(lossWithFees, riverAbi, contracts().river)
    const earned = logs.find((l) => l.eventName === 'RewardsEarned')
    // the event's "old" U is the new U less the rewards, not the U before the report
    expect(earned?.args).toEqual({
      collector: chain.deployment.roles.collector,
      oldTotalUnderlyingBalance: Unew - elFees,
      oldTotalSupply: afterLoss.S,
      newTotalUnderlyingBalance: Unew,
      newTotalSupply: afterLoss.S + minted,
    })
    expect(processed(lossWithFees).trace).toEqual({
      rewards: elFees,
      pulledELFees: elFees,
      pulledRedeemManagerExceedingEthBuffer: 0n,
      pulledCoverageFunds: 0n,
    })
    expect(await supply()).toEqual({ U: Unew, S: afterLoss.S + minted })
    expect(await expectedU()).toBe(Unew)
  })

  test('behavior: denied accounts cannot move shares, deposit, receive a redeem request or have theirs claimed', async () => {
    await chain.mine([chain.riverTx(bob, riverCall.requestRedeem(ETH, bob))])
    await chain.mine([deny(bob, PERMISSION.DENY)])
    await expect(chain.mine([chain.riverTx(bob, riverCall.transfer(alice, 1n))])).rejects.toThrow(/Denied/)
    await expect(chain.mine([chain.riverTx(alice, riverCall.transfer(bob, 1n))])).rejects.toThrow(/Denied/)
    expect(
      await revertName(
        chain.publicClient.simulateContract({
          account: bob,
          address: contracts().river,
          abi: RIVER,
          functionName: 'deposit',
          value: ETH,
        }),
      ),
    ).toBe('Denied')
    expect(await revertName(simulate(alice, contracts().river, RIVER, 'depositAndTransfer', [bob]))).toBe(
      'EmptyDeposit',
    )
    expect(
      await revertName(
        chain.publicClient.simulateContract({
          account: alice,
          address: contracts().river,
          abi: RIVER,
          functionName: 'depositAndTransfer',
          args: [bob],
          value: ETH,
        }),
      ),
    ).toBe('Denied')
    // River's part passes (alice's shares move to River), the RedeemManager refuses the recipient
    const redeemManagerErrors = REDEEM_MANAGER.filter((item) => item.type === 'error')
    expect(
      await revertName(
        simulate(alice, contracts().river, [...RIVER, ...redeemManagerErrors], 'requestRedeem', [ETH, bob]),
      ),
    ).toBe('RecipientIsDenied')
    const last = await lastReport()
    await report({
      validatorsCount: 4,
      validatorsBalance: last.validatorsBalance,
      validatorsExitedBalance: last.validatorsExitedBalance,
      stoppedValidatorCountPerOperator: [3, 2, 1, 0, 0, 0],
      rebalanceDepositToRedeemMode: true,
    })
    const [weId] = await resolve([2])
    expect(weId).toBe(3n)
    await expect(chain.mine([chain.riverTx(carol, riverCall.claim([2], [3]))])).rejects.toThrow(
      /ClaimRecipientIsDenied/,
    )
    // the denial lifted, anyone claims it again
    await chain.mine([deny(bob, 0n)])
    const claim = await chain.mine([chain.riverTx(carol, riverCall.claim([2], [3]))])
    expect(
      events(claim, redeemManagerAbi).find((l) => l.eventName === 'ClaimedRedeemRequest')?.args,
    ).toMatchObject({
      redeemRequestId: 2,
      recipient: bob,
      lsEthAmount: ETH,
      remainingLsEthAmount: 0n,
    })
  })

  test('behavior: only the admin sets the fee, at most 10000 bps; SetGlobalFee decodes with the mainnet ABI', async () => {
    const { roles } = chain.deployment
    const setFee = (from: Address, fee: bigint) =>
      simulate(from, contracts().river, RIVER, 'setGlobalFee', [fee])
    expect(await revertName(setFee(roles.keeper, 1000n))).toBe('Unauthorized')
    expect(await revertName(setFee(roles.admin, 10_001n))).toBe('InvalidFee')
    const block = await chain.mine([chain.riverTx(roles.admin, riverCall.setGlobalFee(10_000n))])
    expect(events(block, riverAbi).map((l) => [l.eventName, l.args])).toEqual([
      ['SetGlobalFee', { fee: 10_000n }],
    ])
    await chain.mine([chain.riverTx(roles.admin, riverCall.setGlobalFee(1000n))])
    expect(await readRiver('getGlobalFee')).toBe(1000n)
  })
})
