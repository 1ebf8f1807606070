import { type Abi, type Address, encodeFunctionData, type Log, parseEther, parseEventLogs } from 'viem'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import {
  allowlistAbi,
  operatorsRegistryAbi,
  PERMISSION,
  PROCESSED_REPORT_TOPIC,
  redeemManagerAbi,
  riverAbi,
} from '../chain/abi.ts'
import {
  devnetAllowlistAbi,
  devnetOperatorsRegistryAbi,
  devnetRedeemManagerAbi,
  devnetRiverAbi,
} from './abi.ts'
import { derivedAddress } from './accounts.ts'
import type { MinedBlock } from './blocks.ts'
import {
  type ReportInput,
  referenceMath,
  revertName,
  riverCall,
  startTestChain,
  type TestChain,
} from './testing.ts'

const { depositShares, feeShares, claimWalk } = referenceMath

const events = <const A extends Abi>(block: MinedBlock, abi: A) =>
  parseEventLogs({ abi, logs: block.logs as unknown as Log[] })

const ETH = 10n ** 18n
const fullRiverAbi = [...riverAbi, ...devnetRiverAbi]
const fullAllowlistAbi = [...allowlistAbi, ...devnetAllowlistAbi]
const fullRedeemManagerAbi = [...redeemManagerAbi, ...devnetRedeemManagerAbi]

describe('Allowlist', () => {
  let chain: TestChain
  const [a, b, c] = [0, 1, 2].map((i) => derivedAddress('allowlist-test', 'account', i)) as [
    Address,
    Address,
    Address,
  ]
  beforeAll(async () => {
    chain = await startTestChain({ bytecode: 'imitation' })
  })
  afterAll(() => chain?.stop())

  // the service's writer (the firewall's executor) through the AllowlistFirewall, which forwards the calldata
  const simulateAllow = (accounts: Address[], permissions: bigint[], from?: Address) =>
    chain.publicClient.simulateContract({
      account: from ?? chain.deployment.roles.allower,
      address: chain.deployment.contracts.firewall,
      abi: fullAllowlistAbi,
      functionName: 'setAllowPermissions',
      args: [accounts, permissions],
    })

  test('behavior: setAllowPermissions follows the mainnet revert rules', async () => {
    expect(await revertName(simulateAllow([], []))).toBe('InvalidCount')
    expect(await revertName(simulateAllow([a, b], [1n]))).toBe('MismatchedArrayLengths')
    expect(await revertName(simulateAllow(['0x0000000000000000000000000000000000000000'], [1n]))).toBe(
      'InvalidZeroAddress',
    )
    expect(await revertName(simulateAllow([a], [PERMISSION.DENY]))).toBe('AttemptToSetDenyPermission')
    expect(await revertName(simulateAllow([a], [1n], c))).toBe('Unauthorized')
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
    const [event] = events(block, allowlistAbi)
    expect(event?.eventName).toBe('SetAllowlistPermissions')
    expect(event?.args).toEqual({ accounts: [a, b], permissions: [5n, 1n] })
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
    const deny = (from: Address, permission: bigint) => ({
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
      }
    }
    expect(await read()).toEqual({ permissions: PERMISSION.DENY, denied: true })
    expect(await revertName(simulateAllow([a], [PERMISSION.DEPOSIT]))).toBe('AttemptToRemoveDenyPermission')
    await chain.mine([deny(chain.deployment.roles.denier, 0n)])
    expect(await read()).toEqual({ permissions: 0n, denied: false })
    // the lifted denial lets the allower write the account again
    await chain.allow([a], PERMISSION.DEPOSIT)
    expect(await read()).toEqual({ permissions: PERMISSION.DEPOSIT, denied: false })
  })
})

describe('River and RedeemManager', () => {
  let chain: TestChain
  const [alice, bob, carol] = [0, 1, 2].map((i) => derivedAddress('river-test', 'account', i)) as [
    Address,
    Address,
    Address,
  ]
  let epoch = 400_000n
  const zeroStopped = [0, 0, 0, 0, 0, 0]
  const readRiver = (functionName: 'totalSupply' | 'totalUnderlyingSupply') =>
    chain.publicClient.readContract({
      address: chain.deployment.contracts.river,
      abi: riverAbi,
      functionName,
    })
  const supply = async () => ({
    U: await readRiver('totalUnderlyingSupply'),
    S: await readRiver('totalSupply'),
  })
  const balanceOf = (account: Address) =>
    chain.publicClient.readContract({
      address: chain.deployment.contracts.river,
      abi: riverAbi,
      functionName: 'balanceOf',
      args: [account],
    })
  const requestDetails = (id: number) =>
    chain.publicClient.readContract({
      address: chain.deployment.contracts.redeemManager,
      abi: redeemManagerAbi,
      functionName: 'getRedeemRequestDetails',
      args: [id],
    })
  const eventDetails = (id: number) =>
    chain.publicClient.readContract({
      address: chain.deployment.contracts.redeemManager,
      abi: redeemManagerAbi,
      functionName: 'getWithdrawalEventDetails',
      args: [id],
    })
  const resolve = (ids: number[]) =>
    chain.publicClient.readContract({
      address: chain.deployment.contracts.redeemManager,
      abi: redeemManagerAbi,
      functionName: 'resolveRedeemRequests',
      args: [ids],
    })
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
  /** U as River defines it, from its own buffers and the last report */
  const expectedU = async () => {
    const read = (
      functionName: 'getBalanceToDeposit' | 'getBalanceToRedeem' | 'getDepositedValidatorCount',
    ) =>
      chain.publicClient.readContract({
        address: chain.deployment.contracts.river,
        abi: devnetRiverAbi,
        functionName,
      })
    const last = await chain.publicClient.readContract({
      address: chain.deployment.contracts.river,
      abi: devnetRiverAbi,
      functionName: 'getLastConsensusLayerReport',
    })
    const [btd, btr, deposited] = [
      await read('getBalanceToDeposit'),
      await read('getBalanceToRedeem'),
      await read('getDepositedValidatorCount'),
    ]
    const riverEth = await chain.publicClient.getBalance({ address: chain.deployment.contracts.river })
    expect(riverEth).toBe(btd + btr)
    return last.validatorsBalance + btd + btr + (deposited - BigInt(last.validatorsCount)) * 32n * ETH
  }

  beforeAll(async () => {
    chain = await startTestChain({ bytecode: 'imitation' })
    for (const account of [alice, bob, carol]) await chain.fund(account, 1_000n * ETH)
  })
  afterAll(() => chain?.stop())

  test('behavior: deposits need DEPOSIT and mint 1:1 on an empty pool', async () => {
    await expect(chain.mine([chain.riverTx(alice, riverCall.deposit(), ETH, 'deposit')])).rejects.toThrow(
      /Unauthorized/,
    )
    await chain.allow([alice, bob])
    const amount = parseEther('100.123456789012345678')
    const block = await chain.mine([
      chain.riverTx(alice, riverCall.deposit(), amount),
      chain.riverTx(bob, riverCall.deposit(), 60n * ETH),
    ])
    const logs = events(block, riverAbi)
    expect(logs.map((l) => l.eventName)).toEqual(['Transfer', 'UserDeposit', 'Transfer', 'UserDeposit'])
    expect(logs[0]?.args).toEqual({
      from: '0x0000000000000000000000000000000000000000',
      to: alice,
      value: amount,
    })
    expect(logs[1]?.args).toEqual({ depositor: alice, recipient: alice, amount })
    expect(await balanceOf(bob)).toBe(60n * ETH)
    expect(await supply()).toEqual({ U: amount + 60n * ETH, S: amount + 60n * ETH })
    expect(await expectedU()).toBe(amount + 60n * ETH)
  })

  test('behavior: a report mints exactly floor(r*S0*f / (Unew*10000 - r*f)) fee shares and emits the mainnet events', async () => {
    await chain.mine([
      {
        from: chain.deployment.roles.keeper,
        to: chain.deployment.contracts.river,
        data: riverCall.depositToConsensusLayer(4n),
        gas: 500_000n,
        label: 'keeper deposit',
      },
    ])
    const before = await supply()
    expect(before.U).toBe(await expectedU())
    const elFees = parseEther('0.05')
    const block = await report(
      { validatorsCount: 4, validatorsBalance: 128n * ETH + parseEther('0.4') },
      { elFees },
    )
    const r = parseEther('0.45')
    const Unew = before.U + r
    const minted = feeShares(r, before.S, 1500n, Unew)
    expect(minted).toBeGreaterThan(0n)
    const logs = events(block, riverAbi)
    expect(logs.map((l) => l.eventName)).toEqual([
      'PulledELFees',
      'Transfer',
      'RewardsEarned',
      'ProcessedConsensusLayerReport',
    ])
    expect(logs[0]?.args).toEqual({ amount: elFees })
    expect(logs[1]?.args).toEqual({
      from: '0x0000000000000000000000000000000000000000',
      to: chain.deployment.roles.collector,
      value: minted,
    })
    expect(logs[2]?.args).toEqual({
      collector: chain.deployment.roles.collector,
      oldTotalUnderlyingBalance: before.U,
      oldTotalSupply: before.S,
      newTotalUnderlyingBalance: Unew,
      newTotalSupply: before.S + minted,
    })
    const processed = logs[3]
    expect(processed?.eventName === 'ProcessedConsensusLayerReport' && processed.args.trace).toEqual({
      rewards: r,
      pulledELFees: elFees,
      pulledRedeemManagerExceedingEthBuffer: 0n,
      pulledCoverageFunds: 0n,
    })
    expect(
      processed?.eventName === 'ProcessedConsensusLayerReport' && processed.args.report.validatorsCount,
    ).toBe(4)
    const raw = block.logs.find((l) => l.topics[0] === PROCESSED_REPORT_TOPIC)
    expect(raw).toBeDefined()
    expect(await supply()).toEqual({ U: Unew, S: before.S + minted })
    expect(await expectedU()).toBe(Unew)
    // the collector holds f/10000 of the rewards' value (to within one wei of rounding)
    const collectorValue = (minted * Unew) / (before.S + minted)
    const shortfall = (r * 1500n) / 10_000n - collectorValue
    expect(shortfall >= 0n && shortfall <= 2n).toBe(true)
  })

  test('behavior: a deposit after rewards mints floor(a*S/U)', async () => {
    const { U, S } = await supply()
    const amount = parseEther('3.333333333333333333')
    const before = await balanceOf(bob)
    await chain.mine([chain.riverTx(bob, riverCall.deposit(), amount)])
    expect((await balanceOf(bob)) - before).toBe(depositShares(amount, S, U))
  })

  test('behavior: requestRedeem needs REDEEM, moves the shares user -> River -> RedeemManager, records the rate', async () => {
    expect(
      await revertName(
        chain.publicClient.simulateContract({
          account: carol,
          address: chain.deployment.contracts.river,
          abi: fullRiverAbi,
          functionName: 'requestRedeem',
          args: [ETH, carol],
        }),
      ),
    ).toBe('Unauthorized')
    const { U, S } = await supply()
    const block = await chain.mine([
      chain.riverTx(alice, riverCall.requestRedeem(50n * ETH, alice)),
      chain.riverTx(bob, riverCall.requestRedeem(40n * ETH, bob)),
    ])
    const { river, redeemManager } = chain.deployment.contracts
    const transfers = events(block, riverAbi).filter((l) => l.eventName === 'Transfer')
    expect(transfers.slice(0, 2).map((l) => l.args)).toEqual([
      { from: alice, to: river, value: 50n * ETH },
      { from: river, to: redeemManager, value: 50n * ETH },
    ])
    const requested = events(block, redeemManagerAbi).filter((l) => l.eventName === 'RequestedRedeem')
    expect(requested.map((l) => l.args)).toEqual([
      { recipient: alice, height: 0n, amount: 50n * ETH, maxRedeemableEth: (50n * ETH * U) / S, id: 0 },
      { recipient: bob, height: 50n * ETH, amount: 40n * ETH, maxRedeemableEth: (40n * ETH * U) / S, id: 1 },
    ])
    expect(await requestDetails(1)).toEqual({
      amount: 40n * ETH,
      maxRedeemableEth: (40n * ETH * U) / S,
      recipient: bob,
      height: 50n * ETH,
      initiator: bob,
    })
    expect(await resolve([0, 1, 2])).toEqual([-1n, -1n, -2n])
  })

  test('behavior: the deposit buffer pays a partial withdrawal event at the post-fee rate, exits are requested for the rest, and a partial claim is capped', async () => {
    const registry = chain.deployment.contracts.operatorsRegistry
    const btd = await chain.publicClient.readContract({
      address: chain.deployment.contracts.river,
      abi: devnetRiverAbi,
      functionName: 'getBalanceToDeposit',
    })
    const block = await report({
      validatorsCount: 4,
      validatorsBalance: 128n * ETH + parseEther('0.7'),
      rebalanceDepositToRedeemMode: true,
    })
    const earned = events(block, riverAbi).find((l) => l.eventName === 'RewardsEarned')
    if (earned?.eventName !== 'RewardsEarned') throw new Error('no RewardsEarned')
    const { newTotalUnderlyingBalance: Unew, newTotalSupply: Snew } = earned.args
    const demandEth = (90n * ETH * Unew) / Snew
    const supplied = (btd * Snew) / Unew
    const reported = events(block, redeemManagerAbi).find((l) => l.eventName === 'ReportedWithdrawal')
    expect(reported?.args).toEqual({ height: 0n, amount: supplied, ethAmount: btd, id: 0 })
    const burn = events(block, riverAbi).find(
      (l) => l.eventName === 'Transfer' && l.args.to === '0x0000000000000000000000000000000000000000',
    )
    expect(burn?.args).toEqual({
      from: chain.deployment.contracts.redeemManager,
      to: '0x0000000000000000000000000000000000000000',
      value: supplied,
    })
    const exitDemand = await chain.publicClient.readContract({
      address: registry,
      abi: devnetOperatorsRegistryAbi,
      functionName: 'getCurrentValidatorExitsDemand',
    })
    expect(exitDemand).toBe((demandEth - btd + 32n * ETH - 1n) / (32n * ETH))
    expect(await resolve([0, 1])).toEqual([0n, -1n])

    // carol (anyone) claims alice's request: it matches event 0 partially and the rate cap applies
    const request = await requestDetails(0)
    const we0 = await eventDetails(0)
    const expected = claimWalk(request, [we0], 0)
    expect(expected.steps[0]?.exceeding).toBeGreaterThan(0n)
    const aliceEth = await chain.publicClient.getBalance({ address: alice })
    const claimBlock = await chain.mine([chain.riverTx(carol, riverCall.claim([0], [0]))])
    const logs = events(claimBlock, redeemManagerAbi)
    const step = expected.steps[0]
    if (!step) throw new Error('no step')
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
    expect(
      await chain.publicClient.readContract({
        address: chain.deployment.contracts.redeemManager,
        abi: redeemManagerAbi,
        functionName: 'getBufferedExceedingEth',
      }),
    ).toBe(step.exceeding)
    expect(await resolve([0])).toEqual([-1n])
  })

  test('behavior: exits pay the next withdrawal event; claims cross events; exceeding ETH returns to River without counting as rewards', async () => {
    const { contracts, roles } = chain.deployment
    const exits = await chain.mine([
      {
        from: roles.keeper,
        to: contracts.operatorsRegistry,
        data: encodeFunctionData({
          abi: devnetOperatorsRegistryAbi,
          functionName: 'requestValidatorExits',
          args: [2n],
        }),
        gas: 500_000n,
        label: 'exits',
      },
    ])
    expect(
      events(exits, devnetOperatorsRegistryAbi)
        .filter((l) => l.eventName === 'RequestedValidatorExits')
        .map((l) => l.args),
    ).toEqual([
      { index: 0n, count: 1n },
      { index: 1n, count: 1n },
    ])
    const exceeding = await chain.publicClient.readContract({
      address: contracts.redeemManager,
      abi: redeemManagerAbi,
      functionName: 'getBufferedExceedingEth',
    })
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
    const processed = events(block, riverAbi).find((l) => l.eventName === 'ProcessedConsensusLayerReport')
    expect(processed?.eventName === 'ProcessedConsensusLayerReport' && processed.args.trace).toEqual({
      rewards: parseEther('0.2'),
      pulledELFees: 0n,
      pulledRedeemManagerExceedingEthBuffer: exceeding,
      pulledCoverageFunds: 0n,
    })
    expect(
      events(block, riverAbi).find((l) => l.eventName === 'PulledRedeemManagerExceedingEth')?.args,
    ).toEqual({
      amount: exceeding,
    })
    expect(await resolve([0, 1])).toEqual([1n, 1n])
    expect(await (await supply()).U).toBe(await expectedU())
    const stopped = await chain.publicClient.readContract({
      address: contracts.operatorsRegistry,
      abi: operatorsRegistryAbi,
      functionName: 'getStoppedValidatorCountPerOperator',
    })
    expect(stopped).toEqual([1, 1, 0, 0, 0])
    const operator = await chain.publicClient.readContract({
      address: contracts.operatorsRegistry,
      abi: operatorsRegistryAbi,
      functionName: 'getOperator',
      args: [0n],
    })
    expect(operator).toMatchObject({ funded: 1, requestedExits: 1, name: 'Alder Staking', active: true })

    expect(
      await revertName(
        chain.publicClient.simulateContract({
          account: carol,
          address: contracts.redeemManager,
          abi: fullRedeemManagerAbi,
          functionName: 'claimRedeemRequests',
          args: [[1], [0], true, 65_535],
        }),
      ),
    ).toBe('DoesNotMatch')

    const weEvents = [await eventDetails(0), await eventDetails(1)]
    const expectedAlice = claimWalk(await requestDetails(0), weEvents, 1)
    const expectedBob = claimWalk(await requestDetails(1), weEvents, 1)
    const claim = await chain.mine([chain.riverTx(carol, riverCall.claim([0, 1], [1, 1]))])
    const claimed = events(claim, redeemManagerAbi).filter((l) => l.eventName === 'ClaimedRedeemRequest')
    const sum = (steps: { eth: bigint }[]) => steps.reduce((total, s) => total + s.eth, 0n)
    expect(claimed.map((l) => l.args)).toEqual([
      {
        redeemRequestId: 0,
        recipient: alice,
        ethAmount: sum(expectedAlice.steps),
        lsEthAmount: expectedAlice.steps[0]?.matched,
        remainingLsEthAmount: 0n,
      },
      {
        redeemRequestId: 1,
        recipient: bob,
        ethAmount: sum(expectedBob.steps),
        lsEthAmount: 40n * ETH,
        remainingLsEthAmount: 0n,
      },
    ])
    expect(await resolve([0, 1, 7])).toEqual([-3n, -3n, -2n])
    // the RedeemManager keeps exactly what is still owed plus the new exceeding buffer
    const rmEth = await chain.publicClient.getBalance({ address: contracts.redeemManager })
    const buffered = await chain.publicClient.readContract({
      address: contracts.redeemManager,
      abi: redeemManagerAbi,
      functionName: 'getBufferedExceedingEth',
    })
    // (plus at most one wei of rounding dust per event shared by several requests)
    expect(rmEth - buffered >= 0n && rmEth - buffered <= 1n).toBe(true)
    expect(await balanceOf(contracts.redeemManager)).toBe(0n)
  })

  test('behavior: a loss gives zero rewards and no fee; denied accounts cannot move shares or claim', async () => {
    const { contracts, roles } = chain.deployment
    const before = await supply()
    const exceeding = await chain.publicClient.readContract({
      address: contracts.redeemManager,
      abi: redeemManagerAbi,
      functionName: 'getBufferedExceedingEth',
    })
    const last = await chain.publicClient.readContract({
      address: contracts.river,
      abi: devnetRiverAbi,
      functionName: 'getLastConsensusLayerReport',
    })
    const block = await report(
      {
        validatorsCount: 4,
        validatorsBalance: last.validatorsBalance - ETH,
        validatorsExitedBalance: last.validatorsExitedBalance,
        stoppedValidatorCountPerOperator: [2, 1, 1, 0, 0, 0],
      },
      { elFees: parseEther('0.1') },
    )
    const names = events(block, riverAbi).map((l) => l.eventName)
    expect(names).not.toContain('RewardsEarned')
    expect(names).not.toContain('Transfer')
    const after = await supply()
    expect(after.S).toBe(before.S)
    // exceeding ETH pulled back from the RedeemManager raises U without being a reward
    expect(after.U).toBe(before.U - ETH + parseEther('0.1') + exceeding)

    await chain.mine([chain.riverTx(bob, riverCall.requestRedeem(ETH, bob))])
    await chain.mine([
      {
        from: roles.denier,
        to: contracts.allowlist,
        data: encodeFunctionData({
          abi: allowlistAbi,
          functionName: 'setDenyPermissions',
          args: [[bob], [PERMISSION.DENY]],
        }),
        gas: 300_000n,
        label: 'deny bob',
      },
    ])
    await expect(chain.mine([chain.riverTx(bob, riverCall.transfer(alice, 1n))])).rejects.toThrow(/Denied/)
    await expect(chain.mine([chain.riverTx(alice, riverCall.transfer(bob, 1n))])).rejects.toThrow(/Denied/)
    await expect(chain.mine([chain.riverTx(bob, riverCall.deposit(), ETH)])).rejects.toThrow(/Denied/)
    await report({
      validatorsCount: 4,
      validatorsBalance: last.validatorsBalance,
      validatorsExitedBalance: last.validatorsExitedBalance,
      stoppedValidatorCountPerOperator: [2, 1, 1, 0, 0, 0],
      rebalanceDepositToRedeemMode: true,
    })
    expect(await resolve([2])).toEqual([2n])
    await expect(chain.mine([chain.riverTx(carol, riverCall.claim([2], [2]))])).rejects.toThrow(
      /ClaimRecipientIsDenied/,
    )
  })

  test('behavior: only the admin sets the fee, at most 10000 bps; SetGlobalFee decodes with the mainnet ABI', async () => {
    const { contracts, roles } = chain.deployment
    const setFee = (from: Address, fee: bigint) =>
      chain.publicClient.simulateContract({
        account: from,
        address: contracts.river,
        abi: fullRiverAbi,
        functionName: 'setGlobalFee',
        args: [fee],
      })
    expect(await revertName(setFee(roles.keeper, 1000n))).toBe('Unauthorized')
    expect(await revertName(setFee(roles.admin, 10_001n))).toBe('InvalidFee')
    const block = await chain.mine([chain.riverTx(roles.admin, riverCall.setGlobalFee(1000n))])
    expect(events(block, riverAbi).map((l) => [l.eventName, l.args])).toEqual([
      ['SetGlobalFee', { fee: 1000n }],
    ])
    expect(
      await chain.publicClient.readContract({
        address: contracts.river,
        abi: riverAbi,
        functionName: 'getGlobalFee',
      }),
    ).toBe(1000n)
  })
})
