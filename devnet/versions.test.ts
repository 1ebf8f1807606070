import { createHash } from 'node:crypto'
import {
  type Address,
  encodeFunctionData,
  getAddress,
  type Log,
  parseEventLogs,
  slice,
  toFunctionSelector,
} from 'viem'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import {
  allowlistAbi,
  allowlistLegacyAbi,
  EIP1967_IMPLEMENTATION_SLOT,
  firewallAbi,
  oracleLegacyAbi,
  PERMISSION,
  proxyAbi,
  riverAbi,
  riverLegacyAbi,
} from '../chain/abi.ts'
import {
  devnetAllowlistAbi,
  devnetAllowlistV04EventAbi,
  devnetFirewallAbi,
  devnetProxyAbi,
  devnetRiverAbi,
} from './abi.ts'
import { derivedAddress } from './accounts.ts'
import type { MinedBlock } from './blocks.ts'
import { createSimulator, type Simulator } from './simulator.ts'
import { referenceMath, revertName, riverCall, startTestChain, type TestChain } from './testing.ts'
import { PROXIED_CONTRACTS, type UpgradeDays } from './versions.ts'

const ETH = 10n ** 18n
const ALLOW_SELECTOR = '0xe580d994' as const

const logsOf = (block: MinedBlock) => block.logs as unknown as Log[]

describe('AllowlistFirewall and proxies (current history)', () => {
  let chain: TestChain
  beforeAll(async () => {
    chain = await startTestChain({ bytecode: 'imitation' })
  })
  afterAll(() => chain?.stop())

  test('behavior: the firewall forwards for its admin and its executor (allowed selectors only) and refuses any other key', async () => {
    const { contracts, roles } = chain.deployment
    const read = <F extends 'getAdmin' | 'executor' | 'destination'>(functionName: F) =>
      chain.publicClient.readContract({ address: contracts.firewall, abi: firewallAbi, functionName })
    expect(await read('getAdmin')).toBe(roles.simulatorAllower)
    expect(await read('executor')).toBe(roles.allower)
    expect(await read('destination')).toBe(contracts.allowlist)
    for (const selector of [ALLOW_SELECTOR, toFunctionSelector('setAllowPermissions(address[],uint256[])')]) {
      expect(
        await chain.publicClient.readContract({
          address: contracts.firewall,
          abi: firewallAbi,
          functionName: 'executorCanCall',
          args: [selector],
        }),
      ).toBe(true)
    }
    expect(
      await chain.publicClient.readContract({
        address: contracts.allowlist,
        abi: allowlistAbi,
        functionName: 'getAllower',
      }),
    ).toBe(contracts.firewall)
    const wallet = derivedAddress('firewall-test', 'wallet', 0)
    const simulate = (account: Address) =>
      chain.publicClient.simulateContract({
        account,
        address: contracts.firewall,
        abi: [...allowlistAbi, ...devnetFirewallAbi],
        functionName: 'setAllowPermissions',
        args: [[wallet], [PERMISSION.DEPOSIT]],
      })
    const stranger = derivedAddress('firewall-test', 'stranger', 0)
    expect(await revertName(simulate(stranger))).toBe('Unauthorized')
    // the keeper is neither admin nor executor; the denier neither
    expect(await revertName(simulate(roles.keeper))).toBe('Unauthorized')
    await expect(
      chain.mine([
        {
          from: roles.denier,
          to: contracts.firewall,
          data: encodeFunctionData({
            abi: allowlistAbi,
            functionName: 'setAllowPermissions',
            args: [[wallet], [1n]],
          }),
          gas: 300_000n,
          label: 'stranger through the firewall',
        },
      ]),
    ).rejects.toThrow(/Unauthorized\(0x90F79bf6EB2c4f870365E785982E1f101E93b906\)/)
    // the executor loses a selector: refused; the admin still forwards it
    await chain.mine([
      {
        from: roles.simulatorAllower,
        to: contracts.firewall,
        data: encodeFunctionData({
          abi: devnetFirewallAbi,
          functionName: 'allowExecutor',
          args: [toFunctionSelector('setAllowPermissions(address[],uint256[])'), false],
        }),
        gas: 200_000n,
        label: 'revoke the executor selector',
      },
    ])
    expect(await revertName(simulate(roles.allower))).toBe('Unauthorized')
    await simulate(roles.simulatorAllower)
    // the Allowlist itself refuses everyone but the firewall
    expect(
      await revertName(
        chain.publicClient.simulateContract({
          account: roles.allower,
          address: contracts.allowlist,
          abi: [...allowlistAbi, ...devnetAllowlistAbi],
          functionName: 'setAllowPermissions',
          args: [[wallet], [1n]],
        }),
      ),
    ).toBe('Unauthorized')
  })

  test('behavior: every proxied contract is an EIP-1967 proxy on its 1.2.1 implementation; only the proxy admin upgrades', async () => {
    const { contracts, roles, implementations } = chain.deployment
    for (const contract of PROXIED_CONTRACTS) {
      const word = await chain.publicClient.getStorageAt({
        address: contracts[contract],
        slot: EIP1967_IMPLEMENTATION_SLOT,
      })
      expect(getAddress(slice(word ?? '0x', 12))).toBe(implementations[contract][0]?.address)
      expect(await chain.versionOf(contract)).toBe('1.2.1')
    }
    const upgrade = encodeFunctionData({
      abi: devnetProxyAbi,
      functionName: 'upgradeTo',
      args: [implementations.oracle[0]?.address as Address],
    })
    // anyone else's upgradeTo reaches the implementation, which has no such function
    await expect(
      chain.mine([
        { from: roles.admin, to: contracts.river, data: upgrade, gas: 200_000n, label: 'upgradeTo by admin' },
      ]),
    ).rejects.toThrow(/failed/)
    // the proxy admin cannot call the implementation
    await expect(
      chain.mine([
        {
          from: roles.proxyAdmin,
          to: contracts.river,
          data: riverCall.setGlobalFee(1n),
          gas: 200_000n,
          label: 'fee by the proxy admin',
        },
      ]),
    ).rejects.toThrow(/AdminCannotCallImplementation/)
    expect(await chain.versionOf('river')).toBe('1.2.1')
  })
})

describe('the 0.4.0 shapes (hand-driven)', () => {
  let chain: TestChain
  beforeAll(async () => {
    chain = await startTestChain({ history: 'versioned', bytecode: 'imitation' })
  })
  afterAll(() => chain?.stop())

  test('behavior: `allow` through the firewall by the executor stores values as given (DENY included, and lifted); the event indexes the accounts', async () => {
    const { contracts, roles } = chain.deployment
    expect(await chain.versionOf('allowlist')).toBe('0.4.0')
    const [a, b] = [0, 1].map((i) => derivedAddress('v04-test', 'account', i)) as [Address, Address]
    const allow = (accounts: Address[], permissions: bigint[]) => ({
      from: roles.allower,
      to: contracts.firewall,
      data: encodeFunctionData({
        abi: allowlistLegacyAbi,
        functionName: 'allow',
        args: [accounts, permissions],
      }),
      gas: 300_000n,
      label: 'allow by the executor',
    })
    const block = await chain.mine([
      allow([a, b], [PERMISSION.DEPOSIT, PERMISSION.DENY | PERMISSION.DEPOSIT]),
    ])
    expect(allow([a], [1n]).data.slice(0, 10)).toBe(ALLOW_SELECTOR)
    const [event] = parseEventLogs({ abi: devnetAllowlistV04EventAbi, logs: logsOf(block) })
    expect(event?.topics.length).toBe(2)
    expect(event?.args.permissions).toEqual([PERMISSION.DEPOSIT, PERMISSION.DENY | PERMISSION.DEPOSIT])
    // the mainnet (non-indexed) ABI does not decode it
    expect(parseEventLogs({ abi: allowlistAbi, logs: logsOf(block) })).toEqual([])
    const permissions = (account: Address) =>
      chain.publicClient.readContract({
        address: contracts.allowlist,
        abi: allowlistAbi,
        functionName: 'getPermissions',
        args: [account],
      })
    expect(await permissions(b)).toBe(PERMISSION.DENY | PERMISSION.DEPOSIT)
    expect(
      await chain.publicClient.readContract({
        address: contracts.allowlist,
        abi: allowlistAbi,
        functionName: 'isDenied',
        args: [b],
      }),
    ).toBe(true)
    await chain.mine([allow([b], [PERMISSION.DEPOSIT])])
    expect(await permissions(b)).toBe(PERMISSION.DEPOSIT)
  })

  test('behavior: a 0.4 report emits CLReported, PulledELFees, the fee mint, ConsensusLayerDataUpdate and PostTotalShares with the math', async () => {
    const { contracts } = chain.deployment
    const user = derivedAddress('v04-test', 'user', 0)
    await chain.allow([user], PERMISSION.DEPOSIT)
    await chain.fund(user, 100n * ETH)
    await chain.mine([chain.riverTx(user, riverCall.deposit(), 64n * ETH)])
    await chain.mine([
      {
        ...chain.riverTx(chain.deployment.roles.keeper, riverCall.depositToConsensusLayer(2n)),
        label: 'keeper',
      },
    ])
    const read = (functionName: 'totalSupply' | 'totalUnderlyingSupply', blockNumber?: bigint) =>
      chain.publicClient.readContract({
        address: contracts.river,
        abi: riverAbi,
        functionName,
        ...(blockNumber === undefined ? {} : { blockNumber }),
      })
    const S0 = await read('totalSupply')
    const balanceGwei = 64_010_000_000n // 64.01 ETH: 0.01 ETH of consensus rewards
    await chain.fund(contracts.elFeeRecipient, ETH / 100n)
    const epoch = chain.timeline.epochAt(chain.builder.lastTimestamp() + 3600n)
    const block = await chain.mine([chain.legacyReportTx(epoch, balanceGwei, 2)], 3600n)
    const names = parseEventLogs({
      abi: [...riverAbi, ...riverLegacyAbi, ...oracleLegacyAbi],
      logs: logsOf(block),
    })
    expect(names.map((l) => l.eventName)).toEqual([
      'CLReported',
      'PulledELFees',
      'Transfer',
      'RewardsEarned',
      'ConsensusLayerDataUpdate',
      'PostTotalShares',
    ])
    const byName = Object.fromEntries(names.map((l) => [l.eventName, l.args])) as Record<string, unknown>
    const update = byName.ConsensusLayerDataUpdate as {
      validatorCount: bigint
      validatorTotalBalance: bigint
      roundId: string
    }
    expect(update.validatorCount).toBe(2n)
    expect(update.validatorTotalBalance).toBe(balanceGwei * 10n ** 9n)
    expect(BigInt(update.roundId)).toBe(epoch)
    expect((byName.CLReported as { newCLBalance: bigint }).newCLBalance).toBe(balanceGwei * 10n ** 9n)
    const rewards = ETH / 100n + ETH / 100n // consensus 0.01 + EL fees 0.01
    const U = await read('totalUnderlyingSupply', block.number)
    const S = await read('totalSupply', block.number)
    expect(U).toBe(64n * ETH + rewards)
    expect(S - S0).toBe(referenceMath.feeShares(rewards, S0, 1500n, U))
    const posted = byName.PostTotalShares as {
      postTotalEth: bigint
      prevTotalEth: bigint
      totalShares: bigint
    }
    expect(posted).toMatchObject({ postTotalEth: U, prevTotalEth: 64n * ETH, totalShares: S })
    // the 1.x entry points are not there yet
    await expect(chain.mine([chain.riverTx(user, riverCall.requestRedeem(1n, user))])).rejects.toThrow(
      /failed/,
    )
    expect(
      await chain.publicClient.readContract({
        address: contracts.river,
        abi: devnetRiverAbi,
        functionName: 'getAdmin',
      }),
    ).toBe(chain.deployment.roles.admin)
  })
})

const UPGRADES: UpgradeDays = { v05Day: 2, v1Day: 4, v12Day: 6 }

/** A versioned 11-day history: loss under 0.5.0, fee change under 1.0.0, denial and its lifting under 1.2.1. */
async function versionedHistory(): Promise<{ chain: TestChain; simulator: Simulator; fingerprint: string }> {
  const chain = await startTestChain({ history: 'versioned', upgrades: UPGRADES, bytecode: 'imitation' })
  const simulator = await createSimulator({
    publicClient: chain.publicClient,
    testClient: chain.testClient,
    deployment: chain.deployment,
    seed: 5,
    walletCount: 40,
    startDate: '2026-04-01',
    lossDay: 3,
    feeChange: { day: 5, fee: 1000 },
    denyDay: 7,
    undenyDay: 9,
    behavior: { redeem: 0.08 },
  })
  await simulator.runDays(11)
  await simulator.stop()
  const logs = await chain.publicClient.getLogs({ fromBlock: 0n, toBlock: 'latest' })
  const head = await chain.publicClient.getBlock({ blockTag: 'latest' })
  const text = JSON.stringify(
    {
      logs: logs.map((l) => [l.blockNumber, l.logIndex, l.topics, l.data]),
      head: [head.hash, head.stateRoot],
    },
    (_, v) => (typeof v === 'bigint' ? `${v}n` : v),
  )
  return { chain, simulator, fingerprint: createHash('sha256').update(text).digest('hex') }
}

describe('a versioned history', () => {
  let first: Awaited<ReturnType<typeof versionedHistory>>
  beforeAll(async () => {
    first = await versionedHistory()
  }, 120_000)
  afterAll(() => first?.chain.stop())

  test('behavior: it builds deterministically (same blocks and logs twice)', async () => {
    const second = await versionedHistory()
    try {
      expect(second.fingerprint).toBe(first.fingerprint)
    } finally {
      await second.chain.stop()
    }
  }, 120_000)

  test('behavior: each upgrade switches the EIP-1967 slot in its block (old implementation in the block before), with Upgraded', async () => {
    const { chain } = first
    const { implementations, plan } = chain.deployment
    for (const step of plan.upgrades) {
      const record = implementations[step.contract].find((r) => r.version === step.version)
      expect(record?.block, `${step.contract} ${step.version}`).not.toBeNull()
      const block = record?.block as bigint
      const index = implementations[step.contract].indexOf(record as never)
      if (index > 0)
        expect(await chain.versionOf(step.contract, block - 1n)).toBe(
          implementations[step.contract][index - 1]?.version,
        )
      expect(await chain.versionOf(step.contract, block)).toBe(step.version)
      const logs = await chain.publicClient.getLogs({
        address: chain.deployment.contracts[step.contract],
        event: proxyAbi[0],
        fromBlock: block,
        toBlock: block,
      })
      expect(logs.map((l) => l.args.implementation)).toContain(record?.address)
    }
    // the RedeemManager has no code before its 1.0 upgrade
    const rm = implementations.redeemManager[0]?.block as bigint
    expect(
      await chain.publicClient.getCode({
        address: chain.deployment.contracts.redeemManager,
        blockNumber: rm - 1n,
      }),
    ).toBeUndefined()
  })

  test('behavior: reports before 1.0 emit ConsensusLayerDataUpdate with U/S and the fee mint as the math gives; later ones ProcessedConsensusLayerReport', async () => {
    const { chain, simulator } = first
    const reports = simulator.state().reports
    expect(reports.map((r) => r.riverVersion)).toEqual([
      '0.4.0',
      '0.4.0',
      '0.5.0',
      '0.5.0',
      '1.0.0',
      '1.0.0',
      '1.2.1',
      '1.2.1',
      '1.2.1',
      '1.2.1',
      '1.2.1',
    ])
    const loss = reports.find((r) => r.day === 3)
    expect(loss?.rewards).toBe(0n)
    expect(loss?.feeShares).toBe(0n)
    for (const report of reports) {
      const logs = await chain.publicClient.getLogs({
        address: chain.deployment.contracts.river,
        fromBlock: report.blockNumber,
        toBlock: report.blockNumber,
      })
      const parsed = parseEventLogs({ abi: [...riverAbi, ...riverLegacyAbi], logs: logs as unknown as Log[] })
      const names = new Set(parsed.map((l) => l.eventName))
      const legacy = report.riverVersion.startsWith('0.')
      expect(names.has('ConsensusLayerDataUpdate'), `day ${report.day}`).toBe(legacy)
      expect(names.has('ProcessedConsensusLayerReport'), `day ${report.day}`).toBe(!legacy)
      const previous = reports[reports.indexOf(report) - 1]
      const S0 = previous ? previous.totalSupply : undefined
      for (const log of parsed) {
        if (log.eventName !== 'RewardsEarned') continue
        // before 1.0 nothing follows the fee mint in a report (1.x reports may then pay a withdrawal event)
        if (legacy) expect(log.args.newTotalUnderlyingBalance).toBe(report.totalUnderlyingSupply)
        if (legacy) expect(log.args.newTotalSupply).toBe(report.totalSupply)
        expect(log.args.newTotalUnderlyingBalance - log.args.oldTotalUnderlyingBalance).toBe(report.rewards)
        expect(log.args.newTotalSupply - log.args.oldTotalSupply).toBe(
          referenceMath.feeShares(
            report.rewards,
            log.args.oldTotalSupply,
            report.globalFee,
            log.args.newTotalUnderlyingBalance,
          ),
        )
        if (legacy && S0 !== undefined) expect(log.args.oldTotalSupply).toBeGreaterThanOrEqual(S0)
      }
      if (legacy) {
        const update = parsed.find((l) => l.eventName === 'ConsensusLayerDataUpdate')
        const balance = await chain.publicClient.readContract({
          address: chain.deployment.contracts.river,
          abi: riverLegacyAbi,
          functionName: 'getCLValidatorTotalBalance',
          blockNumber: report.blockNumber,
        })
        expect(update?.eventName === 'ConsensusLayerDataUpdate' && update.args.validatorTotalBalance).toBe(
          balance,
        )
        expect(update?.eventName === 'ConsensusLayerDataUpdate' && BigInt(update.args.roundId)).toBe(
          report.epoch,
        )
      }
    }
    // redemptions only from 1.0.0 on
    const counts = simulator.state().counts
    expect(counts.redeemRequests).toBeGreaterThan(0)
    const firstRequest = await chain.publicClient.getLogs({
      address: chain.deployment.contracts.redeemManager,
      fromBlock: 0n,
      toBlock: 'latest',
    })
    expect(
      firstRequest.every(
        (l) => (l.blockNumber ?? 0n) >= (chain.deployment.implementations.redeemManager[0]?.block as bigint),
      ),
    ).toBe(true)
  })

  test('behavior: users allowlisted with `allow` before 1.2.1 and `setAllowPermissions` after, through the firewall; a denial is lifted under 1.2.1', async () => {
    const { chain, simulator } = first
    const { contracts, roles, implementations } = chain.deployment
    const v12 = implementations.allowlist.find((r) => r.version === '1.2.1')?.block as bigint
    const fromFirewall = async (selector: string, before: boolean) => {
      const blocks = await chain.publicClient.getLogs({
        address: contracts.allowlist,
        fromBlock: 0n,
        toBlock: 'latest',
      })
      const txs = await Promise.all(
        [
          ...new Set(
            blocks
              .filter((l) => (before ? l.blockNumber < v12 : l.blockNumber > v12))
              .map((l) => l.transactionHash),
          ),
        ].map((hash) => chain.publicClient.getTransaction({ hash })),
      )
      return txs
        .filter((tx) => tx.to?.toLowerCase() === contracts.firewall.toLowerCase())
        .map((tx) => [getAddress(tx.from), tx.input.slice(0, 10) === selector])
    }
    const before = await fromFirewall(ALLOW_SELECTOR, true)
    expect(before.length).toBeGreaterThan(0)
    expect(before.every(([from, ok]) => from === roles.simulatorAllower && ok)).toBe(true)
    const after = await fromFirewall(toFunctionSelector('setAllowPermissions(address[],uint256[])'), false)
    expect(after.length).toBeGreaterThan(0)
    expect(after.every(([, ok]) => ok)).toBe(true)
    // day 7: one wallet denied by the denier; day 9: lifted (0 stored), then allowlisted again
    const events = parseEventLogs({
      abi: allowlistAbi,
      logs: (await chain.publicClient.getLogs({
        address: contracts.allowlist,
        fromBlock: v12,
        toBlock: 'latest',
      })) as unknown as Log[],
    })
    const denied = events.find(
      (e) => e.eventName === 'SetAllowlistPermissions' && e.args.permissions[0] === PERMISSION.DENY,
    )
    expect(denied).toBeDefined()
    const target = denied?.args.accounts[0] as Address
    const wallet = simulator.state().wallets.find((w) => w.address === target)
    expect(wallet).toMatchObject({ denied: false, permissions: PERMISSION.DEPOSIT | PERMISSION.REDEEM })
    expect(
      await chain.publicClient.readContract({
        address: contracts.allowlist,
        abi: allowlistAbi,
        functionName: 'getPermissions',
        args: [target],
      }),
    ).toBe(PERMISSION.DEPOSIT | PERMISSION.REDEEM)
  })
})
