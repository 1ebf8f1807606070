import { type Abi, type Address, type Log, parseEventLogs, zeroAddress } from 'viem'
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest'
import {
  allowlistAbi,
  operatorsRegistryAbi,
  PERMISSION,
  PROCESSED_REPORT_TOPIC,
  redeemManagerAbi,
  riverAbi,
} from '../chain/abi.ts'
import { implementationArtifact, protocolCode } from './protocol-code.ts'
import { protocolEventDays } from './simulation/protocol-events.ts'
import { referenceMath } from './testing.ts'
import { type ProtocolHistory, type ProtocolHistoryOptions, startProtocolHistory } from './testing-history.ts'

const ETH = 10n ** 18n
/** River 1.2.1's own ABI (the buffers' reads the service does not need, e.g. getCommittedBalance). */
const river121Abi: Abi = protocolCode(implementationArtifact('River', '1.2.1')).abi

/** A `current` history on the protocol's bytecode (every release in the deploy block), `days` days long. */
async function simulate(options: ProtocolHistoryOptions & { days: number }): Promise<ProtocolHistory> {
  const { days, ...rest } = options
  const run = await startProtocolHistory(rest)
  try {
    await run.simulator.runDays(days)
    return run
  } catch (error) {
    await run.stop()
    throw error
  }
}

/** Every log of the chain, as comparable tuples. */
async function allLogs(run: ProtocolHistory) {
  const logs = await run.logs()
  return logs.map((l) => [l.blockNumber, l.logIndex, l.address, l.topics, l.data, l.transactionHash])
}

describe('createSimulator', () => {
  test('behavior: the same seed builds the same history; another seed another one', async () => {
    const options = {
      walletCount: 40,
      days: 8,
      startDate: '2026-04-01',
      lossDay: 3,
      feeChange: { day: 5, fee: 1000 },
      denyDay: 4,
    }
    const runs = await Promise.all([
      simulate({ ...options, seed: 11 }),
      simulate({ ...options, seed: 11 }),
      simulate({ ...options, seed: 12 }),
    ])
    try {
      const [a, b, c] = await Promise.all(runs.map((run) => allLogs(run)))
      expect(a?.length).toBeGreaterThan(100)
      expect(b).toEqual(a)
      expect(c).not.toEqual(a)
      const heads = await Promise.all(runs.map((run) => run.publicClient.getBlock({ blockTag: 'latest' })))
      expect(heads[1]?.stateRoot).toBe(heads[0]?.stateRoot)
      expect(heads[1]?.hash).toBe(heads[0]?.hash)
      const [stateA, stateB] = runs.map((run) => run.simulator.state())
      expect(stateB?.wallets).toEqual(stateA?.wallets)
      expect(stateB?.reports).toEqual(stateA?.reports)
    } finally {
      await Promise.all(runs.map((run) => run.stop()))
    }
  }, 60_000)

  test('behavior: with a pace, each day first waits for it with the head block; stop() ends a day waiting for it and the days in flight', async () => {
    const run = await startProtocolHistory({ seed: 5, walletCount: 10, startDate: '2026-04-01' })
    try {
      const heads: bigint[] = []
      run.simulator.setPace(async (head, signal) => {
        heads.push(head)
        // the third day waits until the simulator stops
        if (heads.length === 3) await new Promise((resolve) => signal.addEventListener('abort', resolve))
      })
      const days = run.simulator.runDays(5)
      await vi.waitFor(() => expect(heads).toHaveLength(3), { timeout: 30_000 })
      const head = await run.publicClient.getBlockNumber()
      expect(heads[2]).toBe(head) // the head the pace was given is the chain's, and nothing is mined meanwhile
      expect(heads[1]).toBeLessThan(head)
      await run.simulator.stop()
      expect((await days).map((d) => d.day)).toEqual([0, 1])
      expect(await run.publicClient.getBlockNumber()).toBe(head)
    } finally {
      await run.stop()
    }
  }, 60_000)
})

describe('a 35-day history from 2026-04-10 (crosses the 2026-05-01 cutover)', () => {
  let run: ProtocolHistory
  const days = 35
  const lossDay = 12
  const feeDay = 20
  beforeAll(async () => {
    run = await simulate({
      seed: 2026,
      walletCount: 150,
      days,
      startDate: '2026-04-10',
      lossDay,
      feeChange: { day: feeDay, fee: 1000 },
      denyDay: 10,
      // more redemptions than the default, so a short history has many claims
      behavior: { redeem: 0.05 },
    })
  }, 60_000)
  afterAll(() => run?.stop())

  const read = <T>(functionName: string, blockNumber?: bigint, address?: Address, args?: unknown[]) =>
    run.publicClient.readContract({
      address: address ?? run.deployment.contracts.river,
      abi: [...river121Abi, ...riverAbi, ...redeemManagerAbi, ...allowlistAbi, ...operatorsRegistryAbi],
      functionName,
      ...(args ? { args } : {}),
      ...(blockNumber === undefined ? {} : { blockNumber }),
    } as never) as Promise<T>
  /** River's logs of the whole history, decoded. */
  const riverLogs = async () =>
    parseEventLogs({
      abi: riverAbi,
      logs: (await run.publicClient.getLogs({
        address: run.deployment.contracts.river,
        fromBlock: 0n,
        toBlock: 'latest',
      })) as Log[],
    })
  /** The days the validators lose balance: the history's loss day and the protocol history's 1.x one. */
  const lossDays = () => [lossDay, protocolEventDays(run.deployment.protocol?.releaseDays ?? {}).lossDay1x]

  test("behavior: one report per day at 12:00 UTC, its block the members' votes, the last one emitting the published ProcessedConsensusLayerReport topic0", async () => {
    const { reports } = run.simulator.state()
    expect(reports.map((r) => r.date)).toEqual(
      Array.from({ length: days }, (_, i) => new Date(Date.UTC(2026, 3, 10 + i)).toISOString().slice(0, 10)),
    )
    expect(reports.some((r) => r.date < '2026-05-01')).toBe(true)
    expect(reports.some((r) => r.date >= '2026-05-01')).toBe(true)
    for (const report of reports) {
      expect(new Date(Number(report.timestamp) * 1000).toISOString()).toBe(`${report.date}T12:00:00.000Z`)
    }
    const logs = await run.publicClient.getLogs({
      address: run.deployment.contracts.river,
      fromBlock: 0n,
      toBlock: 'latest',
    })
    const processed = logs.filter((l) => l.topics[0] === PROCESSED_REPORT_TOPIC)
    expect(processed.map((l) => l.blockNumber)).toEqual(reports.map((r) => r.blockNumber))
    const decoded = parseEventLogs({
      abi: riverAbi,
      logs: processed,
      eventName: 'ProcessedConsensusLayerReport',
    })
    expect(decoded.map((l) => l.args.trace.rewards)).toEqual(reports.map((r) => r.rewards))
    // the report block holds the members' votes only (two, or three on a dissent or refused-report day); the
    // vote that completes the quorum, the block's last transaction, runs River's report
    const members = (run.deployment.protocol?.oracleMembers ?? []).map((m) => m.toLowerCase())
    expect(members).toHaveLength(3)
    const voteCounts = new Set<number>()
    for (const [i, report] of reports.entries()) {
      const block = await run.publicClient.getBlock({
        blockNumber: report.blockNumber,
        includeTransactions: true,
      })
      voteCounts.add(block.transactions.length)
      expect(block.transactions.length, report.date).toBeGreaterThanOrEqual(2)
      expect(block.transactions.length, report.date).toBeLessThanOrEqual(4)
      for (const tx of block.transactions) {
        expect(tx.to?.toLowerCase()).toBe(run.deployment.contracts.oracle.toLowerCase())
        expect(members).toContain(tx.from.toLowerCase())
      }
      expect(decoded[i]?.transactionHash).toBe(block.transactions.at(-1)?.hash)
    }
    expect([...voteCounts].sort()).toEqual([2, 3, 4])
  })

  test('behavior: every fee mint equals referenceMath.feeShares; a loss day mints a fee on the EL fees alone (River 1.x); the fee change applies', async () => {
    const { reports } = run.simulator.state()
    const parsed = await riverLogs()
    expect(parsed.filter((l) => l.eventName === 'SetGlobalFee').map((l) => l.args.fee)).toEqual([
      1500n,
      1000n,
    ])
    let withFee = 0
    let lossesWithFee = 0
    for (const report of reports) {
      const inBlock = parsed.filter((l) => l.blockNumber === report.blockNumber)
      const fee = await read<bigint>('getGlobalFee', report.blockNumber)
      expect(fee).toBe(report.day < feeDay ? 1500n : 1000n)
      const processed = inBlock.find((l) => l.eventName === 'ProcessedConsensusLayerReport')
      if (processed?.eventName !== 'ProcessedConsensusLayerReport')
        throw new Error(`no report on ${report.date}`)
      const { trace } = processed.args
      const earned = inBlock.find((l) => l.eventName === 'RewardsEarned')
      const U0 = await read<bigint>('totalUnderlyingSupply', report.blockNumber - 1n)
      const S0 = await read<bigint>('totalSupply', report.blockNumber - 1n)
      const pulledOther = trace.pulledRedeemManagerExceedingEthBuffer + trace.pulledCoverageFunds
      if (lossDays().includes(report.day)) {
        // the validators lost balance, yet River 1.x mints on the EL fees it pulled (River 0.x netted them
        // against the loss and minted nothing: versions.test.ts)
        expect(report.slashing).toBe(true)
        expect(trace.pulledELFees).toBeGreaterThan(0n)
        expect(trace.rewards).toBe(trace.pulledELFees)
        if (earned?.eventName !== 'RewardsEarned') throw new Error(`no RewardsEarned on ${report.date}`)
        const validatorsChange = earned.args.newTotalUnderlyingBalance - trace.pulledELFees - pulledOther - U0
        expect(validatorsChange).toBeLessThan(0n)
        lossesWithFee += 1
      }
      if (report.rewards === 0n) {
        expect(earned).toBeUndefined()
        continue
      }
      if (earned?.eventName !== 'RewardsEarned') throw new Error(`no RewardsEarned on ${report.date}`)
      const { oldTotalSupply, oldTotalUnderlyingBalance, newTotalUnderlyingBalance, newTotalSupply } =
        earned.args
      expect(oldTotalSupply).toBe(S0)
      expect(newTotalUnderlyingBalance - oldTotalUnderlyingBalance).toBe(report.rewards)
      // the rewards by the rule: the validators' change (pulls aside) when positive, plus the EL fees
      expect(report.rewards).toBe(
        referenceMath.reportRewards(
          newTotalUnderlyingBalance - trace.pulledELFees - pulledOther - U0,
          trace.pulledELFees,
        ),
      )
      if (!lossDays().includes(report.day))
        expect(newTotalUnderlyingBalance).toBe(U0 + report.rewards + pulledOther)
      expect(newTotalSupply - oldTotalSupply).toBe(
        referenceMath.feeShares(report.rewards, S0, fee, newTotalUnderlyingBalance),
      )
      expect(report.feeShares).toBe(newTotalSupply - oldTotalSupply)
      const mint = inBlock.find(
        (l) =>
          l.eventName === 'Transfer' &&
          l.args.from === zeroAddress &&
          l.args.to === run.deployment.roles.collector &&
          l.args.value === report.feeShares,
      )
      expect(mint).toBeDefined()
      withFee += 1
    }
    expect(withFee).toBeGreaterThan(days - 5)
    expect(lossesWithFee).toBe(2)
    const loss = reports[lossDay] ?? reports[0]
    const before = reports[lossDay - 1] ?? reports[0]
    if (!loss || !before) throw new Error('missing reports')
    // the loss day lowers the rate U/S
    expect(loss.totalUnderlyingSupply * before.totalSupply).toBeLessThan(
      before.totalUnderlyingSupply * loss.totalSupply,
    )
  })

  test('behavior: U is the sum of River buffers and validator balances at every report (River 1.2.1 _assetBalance); River holds its buffers in ETH', async () => {
    const committedAtReports: bigint[] = []
    for (const report of run.simulator.state().reports) {
      const block = report.blockNumber
      const [btd, committed, btr, deposited, last, U, riverEth] = await Promise.all([
        read<bigint>('getBalanceToDeposit', block),
        read<bigint>('getCommittedBalance', block),
        read<bigint>('getBalanceToRedeem', block),
        read<bigint>('getDepositedValidatorCount', block),
        read<{ validatorsBalance: bigint; validatorsCount: number }>('getLastConsensusLayerReport', block),
        read<bigint>('totalUnderlyingSupply', block),
        run.publicClient.getBalance({
          address: run.deployment.contracts.river,
          blockNumber: block,
        }),
      ])
      committedAtReports.push(committed)
      expect(riverEth).toBe(btd + committed + btr)
      expect(U).toBe(
        last.validatorsBalance +
          btd +
          committed +
          btr +
          (deposited - BigInt(last.validatorsCount)) * 32n * ETH,
      )
      expect(U).toBe(report.totalUnderlyingSupply)
    }
    // every buffer counts: the committed balance is not always empty at a report
    expect(committedAtReports.some((c) => c > 0n)).toBe(true)
    // the net rate grew at a realistic pace outside the loss days (~3% a year less the fee)
    const reports = run.simulator.state().reports
    const first = reports[lossDay + 1]
    const last = reports[reports.length - 1]
    if (!first || !last) throw new Error('missing reports')
    const growth =
      Number(
        (last.totalUnderlyingSupply * first.totalSupply * 10n ** 12n) /
          (first.totalUnderlyingSupply * last.totalSupply),
      ) /
        1e12 -
      1
    const annual = (growth * 365) / (last.day - first.day)
    expect(annual).toBeGreaterThan(0.01)
    expect(annual).toBeLessThan(0.06)
  })

  test('behavior: balances replayed from Transfer logs equal balanceOf, sum to totalSupply, and match the simulator', async () => {
    const { contracts } = run.deployment
    const logs = await run.publicClient.getLogs({
      address: contracts.river,
      fromBlock: 0n,
      toBlock: 'latest',
    })
    const balances = new Map<Address, bigint>()
    for (const log of parseEventLogs({ abi: riverAbi, logs, eventName: 'Transfer' })) {
      const { from, to, value } = log.args
      if (from !== zeroAddress) balances.set(from, (balances.get(from) ?? 0n) - value)
      if (to !== zeroAddress) balances.set(to, (balances.get(to) ?? 0n) + value)
    }
    const holders = [...balances.entries()]
    const onChain = await Promise.all(
      holders.map(([address]) => read<bigint>('balanceOf', undefined, undefined, [address])),
    )
    expect(onChain).toEqual(holders.map(([, value]) => value))
    expect(holders.reduce((sum, [, value]) => sum + value, 0n)).toBe(await read<bigint>('totalSupply'))
    expect(balances.get(contracts.redeemManager) ?? 0n).toBe(
      await read<bigint>('getRedeemDemand', undefined, contracts.redeemManager),
    )
    for (const wallet of run.simulator.state().wallets) {
      expect(wallet.shares).toBe(balances.get(wallet.address) ?? 0n)
    }
    expect((balances.get(run.deployment.roles.collector) ?? 0n) > 0n).toBe(true)
  })

  test('behavior: every claim follows the claim math, some partially; resolveRedeemRequests agrees with the stack', async () => {
    const { contracts } = run.deployment
    const logs = await run.publicClient.getLogs({
      address: contracts.redeemManager,
      fromBlock: 0n,
      toBlock: 'latest',
    })
    const parsed = parseEventLogs({ abi: redeemManagerAbi, logs: logs as Log[] })
    const requests = new Map<number, { height: bigint; amount: bigint; maxRedeemableEth: bigint }>()
    const events: { height: bigint; amount: bigint; withdrawnEth: bigint }[] = []
    let claims = 0
    let partial = 0
    for (let i = 0; i < parsed.length; i++) {
      const log = parsed[i]
      if (!log) continue
      if (log.eventName === 'RequestedRedeem') {
        const { height, amount, maxRedeemableEth } = log.args
        requests.set(log.args.id, { height, amount, maxRedeemableEth })
      } else if (log.eventName === 'ReportedWithdrawal') {
        expect(log.args.id).toBe(events.length)
        events.push({ height: log.args.height, amount: log.args.amount, withdrawnEth: log.args.ethAmount })
      } else if (log.eventName === 'SatisfiedRedeemRequest') {
        // the run of SatisfiedRedeemRequest logs of one request ends with its ClaimedRedeemRequest
        const id = log.args.redeemRequestId
        const request = requests.get(id)
        if (!request) throw new Error(`unknown request ${id}`)
        const expected = referenceMath.claimWalk(request, events, log.args.withdrawalEventId)
        let j = i
        for (const step of expected.steps) {
          const satisfied = parsed[j]
          if (satisfied?.eventName !== 'SatisfiedRedeemRequest')
            throw new Error('missing SatisfiedRedeemRequest')
          expect(satisfied.args).toEqual({
            redeemRequestId: id,
            withdrawalEventId: step.eventId,
            lsEthAmountSatisfied: step.matched,
            ethAmountSatisfied: step.eth,
            lsEthAmountRemaining: step.remaining,
            ethAmountExceeding: step.exceeding,
          })
          j += 1
        }
        const claimed = parsed[j]
        if (claimed?.eventName !== 'ClaimedRedeemRequest') throw new Error('missing ClaimedRedeemRequest')
        expect(claimed.args.ethAmount).toBe(expected.steps.reduce((sum, s) => sum + s.eth, 0n))
        expect(claimed.args.remainingLsEthAmount).toBe(expected.request.amount)
        requests.set(id, expected.request)
        claims += 1
        if (expected.request.amount > 0n) partial += 1
        i = j
      }
    }
    expect(events.length).toBeGreaterThan(3)
    expect(claims).toBeGreaterThan(5)
    expect(partial).toBeGreaterThan(0)
    const ids = [...requests.keys()]
    const resolved = await read<readonly bigint[]>(
      'resolveRedeemRequests',
      undefined,
      contracts.redeemManager,
      [ids],
    )
    expect(resolved).toEqual(
      ids.map((id) => referenceMath.resolve(requests.get(id) as { height: bigint; amount: bigint }, events)),
    )
    for (const id of ids) {
      const details = await read<{ height: bigint; amount: bigint; maxRedeemableEth: bigint }>(
        'getRedeemRequestDetails',
        undefined,
        contracts.redeemManager,
        [id],
      )
      expect({
        height: details.height,
        amount: details.amount,
        maxRedeemableEth: details.maxRedeemableEth,
      }).toEqual(requests.get(id))
    }
  })

  test('behavior: one wallet is denied on chain; operators and consensus facts are consistent with the reports', async () => {
    const { contracts } = run.deployment
    const state = run.simulator.state()
    const denied = state.wallets.filter((w) => w.denied)
    expect(denied).toHaveLength(1)
    const [wallet] = denied
    if (!wallet) throw new Error('no denied wallet')
    expect(await read<bigint>('getPermissions', undefined, contracts.allowlist, [wallet.address])).toBe(
      PERMISSION.DENY,
    )
    expect(await read<boolean>('isDenied', undefined, contracts.allowlist, [wallet.address])).toBe(true)

    const last = state.reports[state.reports.length - 1]
    if (!last) throw new Error('no report')
    const count = await read<bigint>('getOperatorCount', last.blockNumber, contracts.operatorsRegistry)
    const operators = await Promise.all(
      Array.from({ length: Number(count) }, (_, i) =>
        read<{ funded: number; name: string }>('getOperator', last.blockNumber, contracts.operatorsRegistry, [
          BigInt(i),
        ]),
      ),
    )
    const stopped = await read<readonly number[]>(
      'getStoppedValidatorCountPerOperator',
      last.blockNumber,
      contracts.operatorsRegistry,
    )
    const funded = operators.reduce((sum, o) => sum + BigInt(o.funded), 0n)
    expect(funded).toBe(await read<bigint>('getDepositedValidatorCount', last.blockNumber))
    expect(stopped.reduce((a, b) => a + b, 0)).toBe(last.stoppedValidatorCount)
    expect(last.stoppedValidatorCount).toBeGreaterThan(0)
    operators.forEach((operator, i) => {
      expect(operator.funded - (stopped[i] ?? 0)).toBeGreaterThan(0)
    })

    const facts = run.simulator.consensusHistory()
    expect(facts.map((f) => f.date)).toEqual(state.reports.map((r) => r.date))
    const latest = run.simulator.consensus()
    expect(latest?.epoch).toBe(last.epoch)
    expect(latest && latest.totalActiveBalance > 30_000_000n * ETH).toBe(true)
    expect(latest && latest.activeValidatorCount > 900_000).toBe(true)
    expect(latest && latest.exitQueue >= 5_000n * ETH).toBe(true)
  })
})
