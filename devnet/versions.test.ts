import { createHash } from 'node:crypto'
import {
  type Abi,
  type Address,
  concatHex,
  encodeFunctionData,
  getAddress,
  type Hex,
  keccak256,
  type Log,
  padHex,
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
import { derivedAddress } from './accounts.ts'
import type { MinedBlock, TxRequest } from './blocks.ts'
import { implementationArtifact, type ProtocolContractName, protocolCode } from './protocol-code.ts'
import { frameEpoch } from './simulation/protocol-report.ts'
import { referenceMath, revertName, startTestChain, type TestChain } from './testing.ts'
import { type ProtocolHistory, startProtocolHistory } from './testing-history.ts'
import { PROXIED_CONTRACTS, type ProtocolVersion, type UpgradeDays } from './versions.ts'

const ETH = 10n ** 18n
const GWEI = 10n ** 9n
const ALLOW_SELECTOR = '0xe580d994' as const
const SET_ALLOW_SELECTOR = toFunctionSelector('setAllowPermissions(address[],uint256[])')
/** EIP-1967 storage slot of a proxy's admin: keccak256('eip1967.proxy.admin') - 1. */
const EIP1967_ADMIN_SLOT = '0xb53127684a568b3173ae13b9f8a6016e243e63b6e8ee1178d6a717850b5d6103'

/** The protocol's own ABI of a contract at a version (fixtures/protocol). */
const codeAbi = (contract: ProtocolContractName, version: ProtocolVersion): Abi =>
  protocolCode(implementationArtifact(contract, version)).abi
const FIREWALL_ABI = protocolCode('Firewall').abi
const TUP_ABI = protocolCode('TUPProxy').abi

const logsOf = (block: MinedBlock) => block.logs as unknown as Log[]
const addressIn = (word: Hex | undefined) => getAddress(slice(word ?? '0x', 12))

describe('the AllowlistFirewall and the proxies (a current test chain on the protocol bytecode)', () => {
  let chain: TestChain
  beforeAll(async () => {
    chain = await startTestChain()
  }, 60_000)
  afterAll(() => chain?.stop())

  test('behavior: the firewall forwards for its governor and its executor (allowed selectors only) and refuses any other key', async () => {
    const { contracts, roles } = chain.deployment
    const read = <F extends 'getAdmin' | 'executor' | 'destination'>(functionName: F) =>
      chain.publicClient.readContract({ address: contracts.firewall, abi: firewallAbi, functionName })
    expect(await read('getAdmin')).toBe(roles.simulatorAllower)
    expect(await read('executor')).toBe(roles.allower)
    expect(await read('destination')).toBe(contracts.allowlist)
    const canCall = (selector: Hex) =>
      chain.publicClient.readContract({
        address: contracts.firewall,
        abi: firewallAbi,
        functionName: 'executorCanCall',
        args: [selector],
      })
    expect(await canCall(ALLOW_SELECTOR)).toBe(true)
    expect(await canCall(SET_ALLOW_SELECTOR)).toBe(true)
    expect(await canCall(toFunctionSelector('setDenyPermissions(address[],uint256[])'))).toBe(false)
    expect(
      await chain.publicClient.readContract({
        address: contracts.allowlist,
        abi: allowlistAbi,
        functionName: 'getAllower',
      }),
    ).toBe(contracts.firewall)
    const allowlist121 = codeAbi('Allowlist', '1.2.1')
    const [wallet, other] = [0, 1].map((i) => derivedAddress('firewall-test', 'wallet', i)) as [
      Address,
      Address,
    ]
    const simulate = (account: Address, functionName = 'setAllowPermissions') =>
      chain.publicClient.simulateContract({
        account,
        address: contracts.firewall,
        abi: [...allowlist121, ...FIREWALL_ABI],
        functionName,
        args: [[wallet], [PERMISSION.DEPOSIT]],
      } as never)
    const stranger = derivedAddress('firewall-test', 'stranger', 0)
    expect(await revertName(simulate(stranger))).toBe('Unauthorized')
    // the keeper is neither governor nor executor
    expect(await revertName(simulate(roles.keeper))).toBe('Unauthorized')
    // the executor only for the selectors it was given: setDenyPermissions is not one
    expect(await revertName(simulate(roles.allower, 'setDenyPermissions'))).toBe('Unauthorized')
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
    // the executor's call is forwarded: the Allowlist stores it
    const setAllow = (from: Address, account: Address): TxRequest => ({
      from,
      to: contracts.firewall,
      data: encodeFunctionData({
        abi: allowlistAbi,
        functionName: 'setAllowPermissions',
        args: [[account], [PERMISSION.DEPOSIT | PERMISSION.REDEEM]],
      }),
      gas: 300_000n,
      label: 'setAllowPermissions through the firewall',
    })
    await chain.mine([setAllow(roles.allower, wallet)])
    const permissions = (account: Address) =>
      chain.publicClient.readContract({
        address: contracts.allowlist,
        abi: allowlistAbi,
        functionName: 'getPermissions',
        args: [account],
      })
    expect(await permissions(wallet)).toBe(PERMISSION.DEPOSIT | PERMISSION.REDEEM)
    // the executor loses the selector: refused; the governor still forwards it
    await chain.mine([
      {
        from: roles.simulatorAllower,
        to: contracts.firewall,
        data: encodeFunctionData({
          abi: FIREWALL_ABI,
          functionName: 'allowExecutor',
          args: [SET_ALLOW_SELECTOR, false],
        }),
        gas: 200_000n,
        label: 'revoke the executor selector',
      },
    ])
    expect(await revertName(simulate(roles.allower))).toBe('Unauthorized')
    await chain.mine([setAllow(roles.simulatorAllower, other)])
    expect(await permissions(other)).toBe(PERMISSION.DEPOSIT | PERMISSION.REDEEM)
    // the Allowlist itself refuses everyone but the firewall
    expect(
      await revertName(
        chain.publicClient.simulateContract({
          account: roles.allower,
          address: contracts.allowlist,
          abi: allowlist121,
          functionName: 'setAllowPermissions',
          args: [[wallet], [1n]],
        }),
      ),
    ).toBe('Unauthorized')
  })

  test('behavior: every proxied contract is an EIP-1967 TUPProxy on its 1.2.1 implementation; only the proxy admin, through the proxy firewall, upgrades', async () => {
    const { contracts, roles, implementations, protocol } = chain.deployment
    if (!protocol) throw new Error('not a protocol deployment')
    for (const contract of PROXIED_CONTRACTS) {
      const [implementation, admin] = await Promise.all([
        chain.publicClient.getStorageAt({ address: contracts[contract], slot: EIP1967_IMPLEMENTATION_SLOT }),
        chain.publicClient.getStorageAt({ address: contracts[contract], slot: EIP1967_ADMIN_SLOT }),
      ])
      expect(addressIn(implementation)).toBe(
        implementations[contract].find((r) => r.version === '1.2.1')?.address,
      )
      expect(await chain.versionOf(contract)).toBe('1.2.1')
      // the proxy's code is the TUPProxy's
      const code = await chain.publicClient.getCode({ address: contracts[contract] })
      expect(keccak256(code ?? '0x')).toBe(protocolCode('TUPProxy').runtimeCodeHash)
      // the proxy's admin is its own Firewall: governor the proxy admin (#7), executor the admin (pause only)
      const firewall = protocol.proxyFirewalls[contract]
      expect(addressIn(admin)).toBe(firewall)
      const read = <F extends 'getAdmin' | 'executor' | 'destination'>(functionName: F) =>
        chain.publicClient.readContract({ address: firewall, abi: firewallAbi, functionName })
      expect([await read('getAdmin'), await read('executor'), await read('destination')]).toEqual([
        roles.proxyAdmin,
        roles.admin,
        contracts[contract],
      ])
    }
    const river101 = implementations.river.find((r) => r.version === '1.0.1')?.address as Address
    const upgrade = encodeFunctionData({ abi: TUP_ABI, functionName: 'upgradeTo', args: [river101] })
    const riverFirewall = protocol.proxyFirewalls.river
    // anyone but the proxy's admin reaches the implementation, which has no upgradeTo: the proxy admin's own key too
    for (const from of [roles.admin, roles.proxyAdmin]) {
      await expect(
        chain.mine([{ from, to: contracts.river, data: upgrade, gas: 200_000n, label: 'upgradeTo direct' }]),
      ).rejects.toThrow(/failed/)
    }
    // through the proxy firewall: its executor may only pause, a stranger nothing
    for (const from of [roles.admin, roles.keeper]) {
      await expect(
        chain.mine([
          { from, to: riverFirewall, data: upgrade, gas: 200_000n, label: 'upgradeTo via firewall' },
        ]),
      ).rejects.toThrow(/Unauthorized/)
    }
    // the proxy's admin cannot call the implementation
    await expect(
      chain.mine([
        {
          from: roles.proxyAdmin,
          to: riverFirewall,
          data: encodeFunctionData({
            abi: codeAbi('River', '1.2.1'),
            functionName: 'setGlobalFee',
            args: [1n],
          }),
          gas: 200_000n,
          label: 'fee by the proxy admin',
        },
      ]),
    ).rejects.toThrow(/admin cannot fallback to proxy target/)
    expect(await chain.versionOf('river')).toBe('1.2.1')
    // the governor's upgrade goes through (undone afterwards)
    const snapshot = await chain.testClient.snapshot()
    const block = await chain.mine([
      {
        from: roles.proxyAdmin,
        to: riverFirewall,
        data: upgrade,
        gas: 200_000n,
        label: 'upgradeTo by governor',
      },
    ])
    expect(await chain.versionOf('river')).toBe('1.0.1')
    expect(parseEventLogs({ abi: proxyAbi, logs: logsOf(block) }).map((l) => l.args.implementation)).toEqual([
      river101,
    ])
    await chain.revert(snapshot)
    expect(await chain.versionOf('river')).toBe('1.2.1')
  })
})

describe('the 0.4.0 shapes (a versioned test chain on its launch versions, hand-driven)', () => {
  let chain: TestChain
  const user = derivedAddress('v04-test', 'user', 0)
  beforeAll(async () => {
    chain = await startTestChain({
      history: 'versioned',
      stake: { deposits: [[user, 64n * ETH]], validators: 2 },
    })
  }, 60_000)
  afterAll(() => chain?.stop())

  test('behavior: `allow` through the firewall by the executor stores values as given (DENY included, and lifted); the event indexes the accounts', async () => {
    const { contracts, roles } = chain.deployment
    expect(await chain.versionOf('allowlist')).toBe('0.4.0')
    const [a, b] = [0, 1].map((i) => derivedAddress('v04-test', 'account', i)) as [Address, Address]
    const allow = (accounts: Address[], permissions: bigint[]): TxRequest => ({
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
    const [event] = parseEventLogs({ abi: codeAbi('Allowlist', '0.4.0'), logs: logsOf(block) })
    if (event?.eventName !== 'SetAllowlistPermissions') throw new Error('no SetAllowlistPermissions')
    // topic 1 is the hash of the accounts (each padded to a word): they are only in the calldata
    expect(event.topics).toHaveLength(2)
    expect(event.topics[1]).toBe(keccak256(concatHex([a, b].map((x) => padHex(x, { size: 32 })))))
    expect((event.args as { permissions: readonly bigint[] }).permissions).toEqual([
      PERMISSION.DEPOSIT,
      PERMISSION.DENY | PERMISSION.DEPOSIT,
    ])
    // the mainnet (non-indexed) ABI does not decode it
    expect(parseEventLogs({ abi: allowlistAbi, logs: logsOf(block) })).toEqual([])
    const permissions = (account: Address) =>
      chain.publicClient.readContract({
        address: contracts.allowlist,
        abi: allowlistAbi,
        functionName: 'getPermissions',
        args: [account],
      })
    expect(await permissions(a)).toBe(PERMISSION.DEPOSIT)
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

  test('behavior: a 0.4 report (two members of three, the frame-first epoch) emits CLReported, PulledELFees (0 when nothing was waiting), the fee mint, ConsensusLayerDataUpdate and PostTotalShares with the math', async () => {
    const { contracts, roles, protocol } = chain.deployment
    const members = protocol?.oracleMembers ?? []
    expect(members).toHaveLength(3)
    expect(await chain.versionOf('oracle')).toBe('0.4.0')
    const oracle04 = codeAbi('Oracle', '0.4.0')
    expect(
      await chain.publicClient.readContract({
        address: contracts.oracle,
        abi: oracle04,
        functionName: 'getQuorum',
      }),
    ).toBe(2n)
    const read = (functionName: 'totalSupply' | 'totalUnderlyingSupply', blockNumber?: bigint) =>
      chain.publicClient.readContract({
        address: contracts.river,
        abi: riverAbi,
        functionName,
        ...(blockNumber === undefined ? {} : { blockNumber }),
      })
    // the stake: 64 ETH deposited 1:1, two validators deposited, not yet seen by the oracle
    const S0 = await read('totalSupply')
    expect(S0).toBe(64n * ETH)
    expect(await read('totalUnderlyingSupply')).toBe(64n * ETH)
    /** Two members' votes in one block, at the current frame's first epoch; the events of each vote. */
    const report = async (balanceGwei: bigint, seconds: bigint) => {
      const epoch = frameEpoch(chain.timeline.epochAt(chain.builder.lastTimestamp() + seconds))
      const vote = (from: Address): TxRequest => ({
        ...chain.legacyReportTx(epoch, balanceGwei, 2),
        from,
        label: `0.4 vote of ${from}`,
      })
      const block = await chain.mine([vote(members[0] as Address), vote(members[1] as Address)], seconds)
      const events = block.receipts.map((receipt) =>
        parseEventLogs({
          abi: [...riverAbi, ...riverLegacyAbi, ...oracleLegacyAbi],
          logs: receipt.logs as unknown as Log[],
        }),
      )
      return { epoch, block, events }
    }
    const elFees = ETH / 100n
    await chain.fund(contracts.elFeeRecipient, elFees)
    const balanceGwei = 64_010_000_000n // 64.01 ETH: 0.01 ETH of consensus rewards
    const first = await report(balanceGwei, 3600n)
    // the first vote is only counted; the second forms the quorum and runs River's report
    expect(first.events[0]?.map((l) => l.eventName)).toEqual(['CLReported'])
    const names = first.events[1] ?? []
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
      roundId: Hex
    }
    expect(update.validatorCount).toBe(2n)
    expect(update.validatorTotalBalance).toBe(balanceGwei * GWEI)
    expect(BigInt(update.roundId)).toBe(first.epoch)
    expect((byName.CLReported as { newCLBalance: bigint }).newCLBalance).toBe(balanceGwei * GWEI)
    expect((byName.PulledELFees as { amount: bigint }).amount).toBe(elFees)
    const rewards = ETH / 100n + elFees // consensus 0.01 + EL fees 0.01
    const U = await read('totalUnderlyingSupply', first.block.number)
    const S = await read('totalSupply', first.block.number)
    expect(U).toBe(64n * ETH + rewards)
    expect(S - S0).toBe(referenceMath.feeShares(rewards, S0, 1500n, U))
    const posted = byName.PostTotalShares as {
      postTotalEth: bigint
      prevTotalEth: bigint
      totalShares: bigint
    }
    expect(posted).toMatchObject({ postTotalEth: U, prevTotalEth: 64n * ETH, totalShares: S })

    // a frame later, nothing at the EL fee recipient: River 0.4.0 still pulls (it has a margin under the bound)
    // and emits PulledELFees(0) (0.5.0 emits it only when it pulled some)
    const second = await report(balanceGwei + 5_000_000n, 86_400n)
    expect(second.epoch).toBe(first.epoch + 225n)
    const secondNames = second.events[1] ?? []
    expect(secondNames.map((l) => l.eventName)).toEqual([
      'CLReported',
      'PulledELFees',
      'Transfer',
      'RewardsEarned',
      'ConsensusLayerDataUpdate',
      'PostTotalShares',
    ])
    expect(secondNames.find((l) => l.eventName === 'PulledELFees')?.args).toEqual({ amount: 0n })
    const S2 = await read('totalSupply', second.block.number)
    const U2 = await read('totalUnderlyingSupply', second.block.number)
    expect(U2).toBe(U + 5_000_000n * GWEI)
    expect(S2 - S).toBe(referenceMath.feeShares(5_000_000n * GWEI, S, 1500n, U2))

    // the 1.x entry points are not there yet
    await expect(
      chain.mine([
        chain.riverTx(
          user,
          encodeFunctionData({
            abi: codeAbi('River', '1.2.1'),
            functionName: 'requestRedeem',
            args: [1n, user],
          }),
        ),
      ]),
    ).rejects.toThrow(/failed/)
    expect(
      await chain.publicClient.readContract({
        address: contracts.river,
        abi: codeAbi('River', '0.4.0'),
        functionName: 'getAdmin',
      }),
    ).toBe(roles.admin)
  })
})

/**
 * Release days of the short versioned history: 0.5.0 on day 1, Shanghai on day 2 (skims wait in Withdraw for
 * two legacy reports), 1.0.0 on day 4, 1.0.1 on day 5, 1.1.0 on day 6, 1.2.1 on day 7.
 */
const UPGRADES: UpgradeDays = { v05Day: 1, v1Day: 4, v101Day: 5, v11Day: 6, v12Day: 7 }

/**
 * A versioned 11-day history on the protocol bytecode: loss under 0.5.0 (day 3), fee change under 1.0.1,
 * denial and its lifting under 1.2.1; with its fingerprint (every log, the head's hash and state root).
 */
async function versionedHistory(): Promise<{ run: ProtocolHistory; fingerprint: string }> {
  const run = await startProtocolHistory({
    history: 'versioned',
    upgrades: UPGRADES,
    seed: 5,
    walletCount: 40,
    startDate: '2026-04-01',
    lossDay: 3,
    feeChange: { day: 5, fee: 1000 },
    denyDay: 8,
    undenyDay: 10,
    behavior: { redeem: 0.08 },
  })
  try {
    await run.simulator.runDays(11)
    await run.simulator.stop()
    const logs = await run.logs()
    const head = await run.publicClient.getBlock({ blockTag: 'latest' })
    const text = JSON.stringify(
      {
        logs: logs.map((l) => [l.blockNumber, l.logIndex, l.topics, l.data]),
        head: [head.hash, head.stateRoot],
      },
      (_, v) => (typeof v === 'bigint' ? `${v}n` : v),
    )
    return { run, fingerprint: createHash('sha256').update(text).digest('hex') }
  } catch (error) {
    await run.stop()
    throw error
  }
}

describe('a versioned history on the protocol bytecode', () => {
  let first: Awaited<ReturnType<typeof versionedHistory>>
  beforeAll(async () => {
    first = await versionedHistory()
  }, 120_000)
  afterAll(() => first?.run.stop())

  test('behavior: it builds deterministically (same blocks and logs twice)', async () => {
    const second = await versionedHistory()
    try {
      expect(second.fingerprint).toBe(first.fingerprint)
    } finally {
      await second.run.stop()
    }
  }, 120_000)

  test('behavior: each release switches the EIP-1967 slot in its own block a minute before the day (old implementation in the block before), with Upgraded', async () => {
    const { run } = first
    const { implementations, plan, roles } = run.deployment
    expect([...new Set(plan.upgrades.map((s) => s.version))]).toEqual([
      '0.5.0',
      '1.0.0',
      '1.0.1',
      '1.1.0',
      '1.2.1',
    ])
    const releaseBlocks = new Set<bigint>()
    for (const step of plan.upgrades) {
      const records = implementations[step.contract]
      const record = records.find((r) => r.version === step.version)
      expect(record?.block, `${step.contract} ${step.version}`).not.toBeNull()
      const block = record?.block as bigint
      releaseBlocks.add(block)
      // the version in force at a block: the last one switched at or before it
      const inForce = (at: bigint) => records.filter((r) => r.block !== null && r.block <= at).at(-1)?.version
      const before = inForce(block - 1n)
      if (records.indexOf(record as never) > 0) expect(before).toBeDefined()
      if (before) expect(await run.versionOf(step.contract, block - 1n)).toBe(before)
      expect(await run.versionOf(step.contract, block)).toBe(inForce(block))
      expect(inForce(block - 1n)).not.toBe(step.version)
      const logs = await run.publicClient.getLogs({
        address: run.deployment.contracts[step.contract],
        event: proxyAbi[0],
        fromBlock: block,
        toBlock: block,
      })
      expect(logs.map((l) => l.args.implementation)).toContain(record?.address)
    }
    // five releases, each in a block of its own: the proxy admin's and the admin's transactions only, mined a
    // minute before the day's first block
    expect(releaseBlocks.size).toBe(5)
    for (const number of releaseBlocks) {
      const [block, next] = await Promise.all([
        run.publicClient.getBlock({ blockNumber: number, includeTransactions: true }),
        run.publicClient.getBlock({ blockNumber: number + 1n }),
      ])
      expect(next.timestamp - block.timestamp).toBe(60n)
      for (const tx of block.transactions)
        expect([roles.proxyAdmin, roles.admin]).toContain(getAddress(tx.from))
    }
    // the RedeemManager has no code before its 1.0 release
    const rm = implementations.redeemManager[0]?.block as bigint
    expect(
      await run.publicClient.getCode({
        address: run.deployment.contracts.redeemManager,
        blockNumber: rm - 1n,
      }),
    ).toBeUndefined()
  })

  test('behavior: reports before 1.0 emit ConsensusLayerDataUpdate with the fee math (skims since Shanghai in the balance), later ones ProcessedConsensusLayerReport; the first 1.x report pulls the skims', async () => {
    const { run } = first
    const { contracts } = run.deployment
    const reports = run.simulator.state().reports
    expect(reports.map((r) => r.riverVersion)).toEqual([
      '0.4.0',
      '0.5.0',
      '0.5.0',
      '0.5.0',
      '1.0.0',
      '1.0.1',
      '1.0.1',
      '1.2.1',
      '1.2.1',
      '1.2.1',
      '1.2.1',
    ])
    // the legacy loss day: River 0.5.0 nets the EL fees it pulled against the validators' loss and mints
    // nothing (1.x mints on the EL fees: simulator.test.ts)
    const loss = reports.find((r) => r.day === 3)
    expect(loss?.slashing).toBe(true)
    expect(loss?.pulledELFees).toBeGreaterThan(0n)
    expect(loss?.rewards).toBe(0n)
    expect(loss?.feeShares).toBe(0n)
    const withdrawEth = (blockNumber: bigint) =>
      run.publicClient.getBalance({ address: contracts.withdraw, blockNumber })
    let legacyWithFee = 0
    for (const report of reports) {
      const logs = await run.publicClient.getLogs({
        address: contracts.river,
        fromBlock: report.blockNumber,
        toBlock: report.blockNumber,
      })
      const parsed = parseEventLogs({ abi: [...riverAbi, ...riverLegacyAbi], logs: logs as unknown as Log[] })
      const names = new Set(parsed.map((l) => l.eventName))
      const legacy = report.riverVersion.startsWith('0.')
      expect(names.has('ConsensusLayerDataUpdate'), `day ${report.day}`).toBe(legacy)
      expect(names.has('ProcessedConsensusLayerReport'), `day ${report.day}`).toBe(!legacy)
      const earned = parsed.find((l) => l.eventName === 'RewardsEarned')
      expect(earned === undefined, `day ${report.day}`).toBe(report.rewards === 0n)
      if (earned?.eventName === 'RewardsEarned') {
        const { args } = earned
        // before 1.0 nothing follows the fee mint in a report (1.x reports may then pay a withdrawal event)
        if (legacy) expect(args.newTotalUnderlyingBalance).toBe(report.totalUnderlyingSupply)
        if (legacy) expect(args.newTotalSupply).toBe(report.totalSupply)
        expect(args.newTotalUnderlyingBalance - args.oldTotalUnderlyingBalance).toBe(report.rewards)
        expect(args.newTotalSupply - args.oldTotalSupply).toBe(
          referenceMath.feeShares(
            report.rewards,
            args.oldTotalSupply,
            report.globalFee,
            args.newTotalUnderlyingBalance,
          ),
        )
        if (legacy) legacyWithFee += 1
      }
      if (!legacy) continue
      const update = parsed.find((l) => l.eventName === 'ConsensusLayerDataUpdate')
      if (update?.eventName !== 'ConsensusLayerDataUpdate') throw new Error(`no update on day ${report.day}`)
      const [balance, count] = await Promise.all(
        (['getCLValidatorTotalBalance', 'getCLValidatorCount'] as const).map((functionName) =>
          run.publicClient.readContract({
            address: contracts.river,
            abi: riverLegacyAbi,
            functionName,
            blockNumber: report.blockNumber,
          }),
        ),
      )
      expect(update.args.validatorTotalBalance).toBe(balance)
      expect(update.args.validatorCount).toBe(count)
      expect(BigInt(update.args.roundId)).toBe(report.epoch)
      expect(report.epoch % 225n).toBe(0n)
    }
    expect(legacyWithFee).toBe(2) // days 1 and 2 (day 0 sees the validators at their deposits; day 3 the loss)
    // after Shanghai (day 2) the skims leave the validators and wait in Withdraw through the legacy reports
    const legacyAfterShanghai = reports.filter((r) => r.day >= 2 && r.riverVersion.startsWith('0.'))
    expect(legacyAfterShanghai).toHaveLength(2)
    for (const report of legacyAfterShanghai)
      expect(await withdrawEth(report.blockNumber)).toBeGreaterThan(0n)
    // ... and a legacy report after Shanghai outside the loss day is no loss: the skims count in its balance
    expect(legacyAfterShanghai.find((r) => r.day === 2)?.rewards).toBeGreaterThan(0n)
    // the first 1.x report books every skim at once (PulledCLFunds), emptying Withdraw of them
    const firstV1 = reports.find((r) => !r.riverVersion.startsWith('0.'))
    if (!firstV1) throw new Error('no 1.x report')
    const waiting = await withdrawEth(legacyAfterShanghai.at(-1)?.blockNumber as bigint)
    const pulled = parseEventLogs({
      abi: codeAbi('River', '1.0.0'),
      logs: (await run.publicClient.getLogs({
        address: contracts.river,
        fromBlock: firstV1.blockNumber,
        toBlock: firstV1.blockNumber,
      })) as unknown as Log[],
    }).find((l) => l.eventName === 'PulledCLFunds')
    const { pulledSkimmedEthAmount = 0n, pullExitedEthAmount = 0n } =
      (pulled?.args as { pulledSkimmedEthAmount?: bigint; pullExitedEthAmount?: bigint } | undefined) ?? {}
    expect(pulledSkimmedEthAmount).toBeGreaterThan(waiting)
    expect(pullExitedEthAmount).toBe(0n)
    expect(await withdrawEth(firstV1.blockNumber)).toBe(0n)
    // redemptions only from 1.0.0 on
    expect(run.simulator.state().counts.redeemRequests).toBeGreaterThan(0)
    const rmLogs = await run.publicClient.getLogs({
      address: contracts.redeemManager,
      fromBlock: 0n,
      toBlock: 'latest',
    })
    const rmBlock = run.deployment.implementations.redeemManager[0]?.block as bigint
    expect(rmLogs.every((l) => (l.blockNumber ?? 0n) >= rmBlock)).toBe(true)
  })

  test('behavior: users allowlisted with `allow` before 1.2.1 and `setAllowPermissions` after, through the firewall; a denial is lifted under 1.2.1', async () => {
    const { run } = first
    const { contracts, roles, implementations } = run.deployment
    const v12 = implementations.allowlist.find((r) => r.version === '1.2.1')?.block as bigint
    const allowlistLogs = await run.publicClient.getLogs({
      address: contracts.allowlist,
      fromBlock: 0n,
      toBlock: 'latest',
    })
    const fromFirewall = async (selector: string, before: boolean) => {
      const hashes = new Set(
        allowlistLogs
          .filter((l) => (before ? l.blockNumber < v12 : l.blockNumber > v12))
          .map((l) => l.transactionHash),
      )
      const txs = await Promise.all([...hashes].map((hash) => run.publicClient.getTransaction({ hash })))
      return txs
        .filter((tx) => tx.to?.toLowerCase() === contracts.firewall.toLowerCase())
        .map((tx) => [getAddress(tx.from), tx.input.slice(0, 10) === selector])
    }
    const before = await fromFirewall(ALLOW_SELECTOR, true)
    expect(before.length).toBeGreaterThan(0)
    expect(before.every(([from, ok]) => from === roles.simulatorAllower && ok)).toBe(true)
    const after = await fromFirewall(SET_ALLOW_SELECTOR, false)
    expect(after.length).toBeGreaterThan(0)
    expect(after.every(([, ok]) => ok)).toBe(true)
    // day 8: one wallet denied by the denier; day 10: lifted (0 stored), then allowlisted again
    const events = parseEventLogs({
      abi: allowlistAbi,
      logs: allowlistLogs.filter((l) => l.blockNumber >= v12) as unknown as Log[],
    })
    const denied = events.find(
      (e) => e.eventName === 'SetAllowlistPermissions' && e.args.permissions[0] === PERMISSION.DENY,
    )
    expect(denied).toBeDefined()
    const target = denied?.args.accounts[0] as Address
    const lifted = events.find(
      (e) =>
        e.eventName === 'SetAllowlistPermissions' &&
        e.blockNumber > (denied?.blockNumber ?? 0n) &&
        e.args.accounts[0] === target &&
        e.args.permissions[0] === 0n,
    )
    expect(lifted).toBeDefined()
    const wallet = run.simulator.state().wallets.find((w) => w.address === target)
    expect(wallet).toMatchObject({ denied: false, permissions: PERMISSION.DEPOSIT | PERMISSION.REDEEM })
    expect(
      await run.publicClient.readContract({
        address: contracts.allowlist,
        abi: allowlistAbi,
        functionName: 'getPermissions',
        args: [target],
      }),
    ).toBe(PERMISSION.DEPOSIT | PERMISSION.REDEEM)
  })
})
