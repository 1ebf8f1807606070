import {
  type Abi,
  createPublicClient,
  custom,
  encodeAbiParameters,
  encodeEventTopics,
  encodeFunctionResult,
  type Hex,
  keccak256,
  numberToHex,
  toFunctionSelector,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { describe, expect, test } from 'vitest'
import type { Address } from '../common/address.ts'
import { runtimeCodeOf } from '../test/helpers/protocol-bytecode.ts'
import { allowlistAbi, EIP1967_IMPLEMENTATION_SLOT, firewallAbi, riverAbi, riverLegacyAbi } from './abi.ts'
import { type ChainContracts, contractsFor, toContracts } from './addresses.ts'
import type { ChainClient } from './client.ts'
import { KNOWN_CODES } from './code-hashes.ts'
import {
  type CheckResult,
  checkArchive,
  checkChainId,
  checkCode,
  checkFirewallCode,
  checkImplementations,
  checkLatestReport,
  checkPriceFeeds,
  checkStartBlocks,
  runDoctorChecks,
} from './doctor.ts'
import { aggregatorV3Abi } from './price-feeds.ts'

const OURS = privateKeyToAccount(
  '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d',
).address.toLowerCase() as Address
const OTHER = '0x00000000000000000000000000000000000000aa' as Address
const MAINNET = contractsFor('mainnet')

/**
 * A contract on the fake node: code from `from` on (`0x6080`, a code no table knows, unless given), an
 * implementation slot, and view answers by selector.
 */
interface FakeContract {
  from: bigint
  code?: Hex
  implementation?: Address
  /** selector -> ABI-encoded answer; a selector without an answer reverts */
  calls?: Record<Hex, Hex>
}

interface FakeNodeOptions {
  chainId?: number
  head?: bigint
  contracts?: Record<string, FakeContract>
  /** state reads at blocks below this (other than the head) fail as on a pruned node */
  prunedBelow?: bigint
  logs?: { address: Address; blockNumber: bigint; topics: Hex[]; data: Hex }[]
  /** block timestamps (seconds) = genesis + 12 * number */
  genesis?: bigint
}

/**
 * A JSON-RPC node in memory answering the calls the doctor makes (chain id, head, balance, code, storage,
 * eth_call, logs, blocks), behind viem's `custom` transport.
 */
function fakeNode(options: FakeNodeOptions): ChainClient {
  const head = options.head ?? 22_000_000n
  const contracts = Object.fromEntries(
    Object.entries(options.contracts ?? {}).map(([a, c]) => [a.toLowerCase(), c]),
  ) as Record<string, FakeContract>
  const blockOf = (tag: unknown) => (typeof tag === 'string' && tag.startsWith('0x') ? BigInt(tag) : head)
  const pruned = (tag: unknown) => {
    const block = blockOf(tag)
    if (options.prunedBelow !== undefined && block < options.prunedBelow && block !== head) {
      throw Object.assign(new Error('missing trie node 4a5b9c (path ) state 0xabc is not available'), {
        code: -32000,
      })
    }
    return block
  }
  const request = async ({ method, params }: { method: string; params?: unknown }) => {
    const p = (params ?? []) as unknown[]
    switch (method) {
      case 'eth_chainId':
        return numberToHex(options.chainId ?? 1)
      case 'eth_blockNumber':
        return numberToHex(head)
      case 'eth_getBalance':
        pruned(p[1])
        return '0x0'
      case 'eth_getCode': {
        const block = pruned(p[1])
        const c = contracts[String(p[0]).toLowerCase()]
        return c && block >= c.from ? (c.code ?? '0x6080') : '0x'
      }
      case 'eth_getStorageAt': {
        pruned(p[2])
        const c = contracts[String(p[0]).toLowerCase()]
        if (String(p[1]) !== EIP1967_IMPLEMENTATION_SLOT || !c?.implementation) return `0x${'0'.repeat(64)}`
        return `0x${c.implementation.slice(2).padStart(64, '0')}`
      }
      case 'eth_call': {
        const call = p[0] as { to: string; data: Hex }
        pruned(p[1])
        const answer = contracts[call.to.toLowerCase()]?.calls?.[call.data.slice(0, 10) as Hex]
        if (answer === undefined)
          throw Object.assign(new Error('execution reverted'), { code: 3, data: '0x' })
        return answer
      }
      case 'eth_getLogs': {
        const filter = p[0] as { address: string | string[]; fromBlock: Hex; toBlock: Hex; topics?: Hex[][] }
        const addresses = [filter.address].flat().map((a) => a.toLowerCase())
        const topic0 = filter.topics?.[0]
        return (options.logs ?? [])
          .map((log, i) => ({ log, i }))
          .filter(
            ({ log }) =>
              addresses.includes(log.address) &&
              log.blockNumber >= BigInt(filter.fromBlock) &&
              log.blockNumber <= BigInt(filter.toBlock) &&
              (!topic0 || [topic0].flat().includes(log.topics[0]!)),
          )
          .map(({ log, i }) => ({
            address: log.address,
            topics: log.topics,
            data: log.data,
            blockNumber: numberToHex(log.blockNumber),
            blockHash: `0x${log.blockNumber.toString(16).padStart(64, '0')}`,
            transactionHash: `0x${(i + 1).toString(16).padStart(64, 'f')}`,
            transactionIndex: '0x0',
            logIndex: numberToHex(i),
            removed: false,
          }))
      }
      case 'eth_getBlockByNumber': {
        const number = blockOf(p[0])
        return {
          number: numberToHex(number),
          hash: `0x${number.toString(16).padStart(64, '0')}`,
          parentHash: `0x${'0'.repeat(64)}`,
          timestamp: numberToHex((options.genesis ?? 1_606_824_023n) + 12n * number),
          transactions: [],
          gasLimit: '0x0',
          gasUsed: '0x0',
          logsBloom: null,
          nonce: '0x0',
          difficulty: '0x0',
          size: '0x0',
          uncles: [],
          extraData: '0x',
          miner: OTHER,
          sha3Uncles: `0x${'0'.repeat(64)}`,
          stateRoot: `0x${'0'.repeat(64)}`,
          receiptsRoot: `0x${'0'.repeat(64)}`,
          transactionsRoot: `0x${'0'.repeat(64)}`,
        }
      }
      default:
        throw new Error(`fake node: ${method} not supported`)
    }
  }
  return createPublicClient({ transport: custom({ request }, { retryCount: 0 }) }) as unknown as ChainClient
}

/** The ABI-encoded answer of `functionName` for an eth_call to a contract with `abi`. */
function answer(abi: Abi, functionName: string, result: unknown): [Hex, Hex] {
  const item = abi.find((i) => i.type === 'function' && i.name === functionName)!
  return [toFunctionSelector(item as never), encodeFunctionResult({ abi, functionName, result } as never)]
}

/** Mainnet's 1.2.1 implementations (address, contract) and its Firewall, holding their real runtime code. */
const MAINNET_CODES: Record<string, FakeContract> = {
  '0x34e4617764cc94620170aa0e6652ad328d196d58': {
    from: 21_128_374n,
    code: runtimeCodeOf('mainnet', 'RiverV1_Implementation_1_2_1'),
  },
  '0x4fb46d0b7668fc5ee27a37979579a3c254c70f54': {
    from: 21_128_372n,
    code: runtimeCodeOf('mainnet', 'RedeemManagerV1_Implementation_1_2_1'),
  },
  '0x9c07cd07cc097ead6ebd7f7d17e6b38ff08e3b5c': {
    from: 21_122_547n,
    code: runtimeCodeOf('mainnet', 'AllowlistV1_Implementation_1_2_1'),
  },
  '0x51e09ed43f5658a77428e6419aea83d769c9b2fd': {
    from: 21_128_370n,
    code: runtimeCodeOf('mainnet', 'OracleV1_Implementation_1_2_1'),
  },
  '0x4cf3341e1be254c5229e8bcd05b8233a2b60940a': {
    from: 21_128_367n,
    code: runtimeCodeOf('mainnet', 'OperatorsRegistryV1_Implementation_1_2_1'),
  },
}

/**
 * Every configured mainnet contract deployed at its start block (the firewall just before the Allowlist, with
 * the real Firewall's code), and the 1.2.1 implementations with theirs.
 */
function mainnetContracts(
  overrides: Record<string, Partial<FakeContract>> = {},
): Record<string, FakeContract> {
  const base: Record<string, FakeContract> = {
    ...MAINNET_CODES,
    [MAINNET.river]: {
      from: MAINNET.startBlocks.river,
      implementation: '0x34e4617764cc94620170aa0e6652ad328d196d58' as Address,
    },
    [MAINNET.redeemManager]: {
      from: MAINNET.startBlocks.redeemManager,
      implementation: '0x4fb46d0b7668fc5ee27a37979579a3c254c70f54' as Address,
    },
    [MAINNET.allowlist]: {
      from: MAINNET.startBlocks.allowlist,
      implementation: '0x9c07cd07cc097ead6ebd7f7d17e6b38ff08e3b5c' as Address,
    },
    [MAINNET.oracle!]: {
      from: MAINNET.startBlocks.oracle!,
      implementation: '0x51e09ed43f5658a77428e6419aea83d769c9b2fd' as Address,
    },
    [MAINNET.operatorsRegistry!]: {
      from: MAINNET.startBlocks.operatorsRegistry!,
      implementation: '0x4cf3341e1be254c5229e8bcd05b8233a2b60940a' as Address,
    },
    [MAINNET.firewall!]: { from: 15_676_394n, code: runtimeCodeOf('mainnet', 'Firewall') },
    [MAINNET.priceFeeds!.usd!]: { from: 10_606_501n, calls: feedCalls('ETH / USD', 312_345_678_901n) },
    [MAINNET.priceFeeds!.eurUsd!]: { from: 10_606_501n, calls: feedCalls('EUR / USD', 108_700_000n) },
  }
  for (const [address, o] of Object.entries(overrides))
    base[address] = { ...base[address]!, ...o } as FakeContract
  return base
}

/** A Chainlink-shaped feed answering decimals (8), description and latestRoundData (round 42, `answer`). */
function feedCalls(description: string, price: bigint | null): Record<Hex, Hex> {
  return Object.fromEntries([
    answer(aggregatorV3Abi, 'decimals', 8),
    answer(aggregatorV3Abi, 'description', description),
    // null: latestRoundData reverts (no round yet)
    ...(price === null
      ? []
      : [answer(aggregatorV3Abi, 'latestRoundData', [42n, price, 1_700_000_000n, 1_700_000_000n, 42n])]),
  ])
}

/** A firewall answering getAdmin, executor and executorCanCall (the same answer for every selector). */
function firewallCalls(admin: Address, executor: Address, canCall: boolean): Record<Hex, Hex> {
  return Object.fromEntries([
    answer(firewallAbi, 'getAdmin', admin),
    answer(firewallAbi, 'executor', executor),
    answer(firewallAbi, 'executorCanCall', canCall),
  ])
}

const allowerIs = (allower: Address) => Object.fromEntries([answer(allowlistAbi, 'getAllower', allower)])

describe('checkChainId', () => {
  test('behavior: ok when the node serves CHAIN, a fail naming both ids otherwise', async () => {
    expect(await checkChainId(fakeNode({ chainId: 1 }), 1, 'mainnet')).toMatchObject({
      status: 'ok',
      message: 'chain id 1 (mainnet)',
    })
    const wrong = await checkChainId(fakeNode({ chainId: 560048 }), 1, 'mainnet')
    expect(wrong.status).toBe('fail')
    expect(wrong.message).toMatch(/chain id 560048 at RPC_URL, but CHAIN=mainnet is chain id 1/)
  })

  test('behavior: an unreachable node fails the first check', async () => {
    const client = createPublicClient({
      transport: custom(
        { request: async () => Promise.reject(new Error('connect ECONNREFUSED')) },
        { retryCount: 0 },
      ),
    }) as unknown as ChainClient
    const r = await checkChainId(client, 1, 'mainnet')
    expect(r.status).toBe('fail')
    expect(r.message).toMatch(/cannot read the chain id from RPC_URL/)
  })
})

describe('checkArchive', () => {
  test('behavior: ok when the node reads state at River’s start block', async () => {
    const r = await checkArchive(fakeNode({}), MAINNET)
    expect(r).toMatchObject({ status: 'ok', details: { block: '15676402' } })
  })

  test('behavior: a pruned node fails with the archive message and the node’s own words', async () => {
    const r = await checkArchive(fakeNode({ prunedBelow: 21_900_000n }), MAINNET)
    expect(r.status).toBe('fail')
    expect(r.message).toContain(
      'the node cannot read state at block 15676402: reads at historical blocks need an archive node (e.g.',
    )
    expect(r.message).toContain('missing trie node')
  })

  test('behavior: a head before the start block (unsynced node) fails', async () => {
    const r = await checkArchive(fakeNode({ head: 1_000n }), MAINNET)
    expect(r.status).toBe('fail')
    expect(r.message).toMatch(/head is block 1000, before River's start block 15676402/)
  })
})

describe('checkCode', () => {
  test('behavior: ok with code at every configured address; a fail names each address without code', async () => {
    expect((await checkCode(fakeNode({ contracts: mainnetContracts() }), MAINNET)).status).toBe('ok')
    const contracts = mainnetContracts()
    delete contracts[MAINNET.oracle!]
    const r = await checkCode(fakeNode({ contracts }), MAINNET)
    expect(r.status).toBe('fail')
    expect(r.message).toBe(`no contract code at oracle ${MAINNET.oracle}: wrong CHAIN or contract addresses`)
  })

  test('behavior: a proxy a devnet deploys at a planned upgrade (no implementation mined yet) is a warning, not a failure', async () => {
    const contracts = mainnetContracts()
    delete contracts[MAINNET.redeemManager]
    const planned = [
      { contract: 'RedeemManager', version: '1.0.0', address: OTHER, block: null },
      { contract: 'River', version: '0.4.0', address: OURS, block: 1n },
    ]
    const r = await checkCode(fakeNode({ contracts }), MAINNET, planned)
    expect(r.status).toBe('warn')
    expect(r.message).toMatch(
      /; redeemManager 0x[0-9a-f]{40} not deployed yet \(the chain's history deploys it/,
    )
    // mined already, yet no code: a wrong address
    const mined = [{ contract: 'RedeemManager', version: '1.0.0', address: OTHER, block: 5n }]
    expect((await checkCode(fakeNode({ contracts }), MAINNET, mined)).status).toBe('fail')
  })
})

const RIVER_121 = '0x34e4617764cc94620170aa0e6652ad328d196d58' as Address

describe('checkImplementations', () => {
  test('behavior: names each proxy’s implementation version by its address and by its code; unknown, empty or foreign ones are warnings', async () => {
    const contracts = mainnetContracts({
      [MAINNET.redeemManager]: { implementation: OTHER },
      [MAINNET.oracle!]: { implementation: RIVER_121 },
    })
    delete contracts[MAINNET.operatorsRegistry!]?.implementation
    const results = await checkImplementations(fakeNode({ contracts }), 1, MAINNET)
    expect(results.map((r) => [r.check, r.status])).toEqual([
      ['implementation_river', 'ok'],
      ['implementation_redeemManager', 'warn'],
      ['implementation_allowlist', 'ok'],
      ['implementation_oracle', 'warn'],
      ['implementation_operatorsRegistry', 'warn'],
    ])
    expect(results[0]!.message).toBe(`river runs River 1.2.1 (${RIVER_121}; its code is River 1.2.1)`)
    expect(results[0]!.details).toMatchObject({
      version: '1.2.1',
      code_contract: 'River',
      code_version: '1.2.1',
      code_hash: KNOWN_CODES.find(
        (c) => c.contract === 'River' && c.chains.includes('mainnet') && c.version === '1.2.1',
      )!.hash,
      code_size: 22752,
    })
    expect(results[1]!.message).toBe(
      `redeemManager runs implementation ${OTHER}, not a known version (no code at the implementation): the service's ABIs were checked against the known ones only`,
    )
    expect(results[3]!.message).toBe(
      `oracle runs implementation ${RIVER_121}, whose code is River 1.2.1, not a Oracle version`,
    )
    expect(results[4]!.message).toMatch(/not an EIP-1967 proxy/)
  })

  test('behavior: an address table and a code that disagree are a warning naming both', async () => {
    const contracts = mainnetContracts({
      [RIVER_121]: { code: runtimeCodeOf('mainnet', 'RiverV1_Implementation_1_0_0') },
    })
    const [river] = await checkImplementations(fakeNode({ contracts }), 1, MAINNET)
    expect(river).toMatchObject({
      status: 'warn',
      message: `river runs implementation ${RIVER_121}, which the version table names River 1.2.1 but whose code is River 1.0.0`,
      details: { version: '1.2.1', code_version: '1.0.0' },
    })
    // a firewall's code behind a proxy is not a version of its contract
    const firewall = mainnetContracts({ [RIVER_121]: { code: runtimeCodeOf('mainnet', 'Firewall') } })
    const [wrong] = await checkImplementations(fakeNode({ contracts: firewall }), 1, MAINNET)
    expect(wrong!.message).toBe(
      `river runs implementation ${RIVER_121}, whose code is the Firewall, not a River version`,
    )
  })

  test('behavior: a known code at an address no table lists is named by its code (ok); an address the table knows with an unknown code is a warning', async () => {
    const contracts = mainnetContracts({
      [MAINNET.river]: { implementation: OURS },
      [OURS]: { from: 1n, code: runtimeCodeOf('hoodi', 'RiverV1_Implementation_1_2_1') },
      [RIVER_121]: { code: '0x6080' },
      [MAINNET.redeemManager]: { implementation: RIVER_121 },
    })
    const [river, redeemManager] = await checkImplementations(fakeNode({ contracts }), 1, MAINNET)
    expect(river).toMatchObject({
      status: 'ok',
      message: `river runs River 1.2.1 by its code (${OURS}, an address the version table does not list)`,
      details: { version: null, code_version: '1.2.1' },
    })
    // the table names River 1.2.1 there (its code unknown): not a RedeemManager version
    expect(redeemManager!.message).toBe(
      `redeemManager runs implementation ${RIVER_121}, which is River 1.2.1, not a RedeemManager version`,
    )
    const unknown = mainnetContracts({ [RIVER_121]: { code: '0x6080' } })
    const [plain] = await checkImplementations(fakeNode({ contracts: unknown }), 1, MAINNET)
    expect(plain).toMatchObject({
      status: 'warn',
      message: `river runs River 1.2.1 (${RIVER_121}): code not a known protocol build (keccak256 ${keccak256('0x6080')}, 2 bytes)`,
      details: { version: '1.2.1', code_contract: null, code_version: null },
    })
  })

  test('behavior: a devnet’s own implementation table names its versions; its own contracts’ code is not a known protocol build (a warning)', async () => {
    const devnet = toContracts({ river: OTHER, redeemManager: OTHER, allowlist: OTHER, startBlock: 1n })
    const extra = [{ contract: 'River', version: '1.2.1', address: OURS, block: 1n }]
    const own = fakeNode({
      chainId: 31337,
      contracts: { [OTHER]: { from: 1n, implementation: OURS }, [OURS]: { from: 1n } },
    })
    const [river] = await checkImplementations(own, 31337, devnet, extra)
    expect(river).toMatchObject({ status: 'warn' })
    expect(river!.message).toMatch(
      new RegExp(`^river runs River 1\\.2\\.1 \\(${OURS}\\): code not a known protocol build`),
    )
    const real = fakeNode({
      chainId: 31337,
      contracts: {
        [OTHER]: { from: 1n, implementation: OURS },
        [OURS]: { from: 1n, code: runtimeCodeOf('mainnet', 'RiverV1_Implementation_1_2_1') },
      },
    })
    const [named] = await checkImplementations(real, 31337, devnet, extra)
    expect(named).toMatchObject({
      status: 'ok',
      message: `river runs River 1.2.1 (${OURS}; its code is River 1.2.1)`,
    })
  })
})

describe('checkFirewallCode', () => {
  test('behavior: mainnet’s Firewall code is ok; a Hoodi Firewall is named once its immutable destination is masked', async () => {
    const [mainnet] = await checkFirewallCode(fakeNode({ contracts: mainnetContracts() }), MAINNET)
    expect(mainnet).toMatchObject({
      check: 'firewall_code',
      status: 'ok',
      message: `firewall ${MAINNET.firewall} runs the protocol's Firewall (mainnet build)`,
    })
    const hoodi = contractsFor('hoodi')
    const table = KNOWN_CODES.find((c) => c.contract === 'Firewall' && c.chains.includes('hoodi'))!
    let code = runtimeCodeOf('hoodi', 'Firewall').slice(2)
    for (const offset of table.immutables) {
      code = `${code.slice(0, offset * 2)}${hoodi.allowlist.slice(2).padStart(64, '0')}${code.slice((offset + 32) * 2)}`
    }
    const node = fakeNode({
      chainId: 560048,
      contracts: { [hoodi.firewall!]: { from: 1n, code: `0x${code}` } },
    })
    expect(await checkFirewallCode(node, hoodi)).toEqual([
      {
        check: 'firewall_code',
        status: 'ok',
        message: `firewall ${hoodi.firewall} runs the protocol's Firewall (hoodi build, its immutable destination masked)`,
        details: {
          firewall: hoodi.firewall,
          code_contract: 'Firewall',
          code_hash: table.hash,
          code_size: 1625,
        },
      },
    ])
  })

  test('behavior: an unknown code or another known one is a warning; no firewall configured, no result', async () => {
    const unknown = mainnetContracts({ [MAINNET.firewall!]: { code: '0x6080' } })
    const [own] = await checkFirewallCode(fakeNode({ contracts: unknown }), MAINNET)
    expect(own).toMatchObject({ status: 'warn' })
    expect(own!.message).toBe(
      `firewall ${MAINNET.firewall}: code not a known protocol build (keccak256 ${keccak256('0x6080')}, 2 bytes)`,
    )
    const river = mainnetContracts({
      [MAINNET.firewall!]: { code: runtimeCodeOf('mainnet', 'RiverV1_Implementation_1_2_1') },
    })
    const [other] = await checkFirewallCode(fakeNode({ contracts: river }), MAINNET)
    expect(other).toMatchObject({
      status: 'warn',
      message: `firewall ${MAINNET.firewall} holds the code of River 1.2.1, not a Firewall`,
    })
    const { firewall: _, ...none } = MAINNET
    expect(await checkFirewallCode(fakeNode({}), none)).toEqual([])
  })
})

describe('checkStartBlocks', () => {
  test('behavior: ok when no contract has code before its start block; an early start is noted as harmless', async () => {
    expect((await checkStartBlocks(fakeNode({ contracts: mainnetContracts() }), MAINNET)).message).toBe(
      'start blocks river 15676402, redeemManager 17371894, allowlist 15676397, oracle 15676406, operatorsRegistry 15676409',
    )
    const later = mainnetContracts({ [MAINNET.river]: { from: 15_676_500n } })
    const r = await checkStartBlocks(fakeNode({ contracts: later }), MAINNET)
    expect(r.status).toBe('ok')
    expect(r.message).toMatch(/\(river deployed later: the scan starts early, harmless\)$/)
  })

  test('behavior: a start block after the deployment fails (earlier logs would be missed)', async () => {
    const earlier = mainnetContracts({ [MAINNET.redeemManager]: { from: 17_000_000n } })
    const r = await checkStartBlocks(fakeNode({ contracts: earlier }), MAINNET)
    expect(r.status).toBe('fail')
    expect(r.message).toMatch(/start blocks after a deployment: redeemManager 17371894/)
  })
})

/** A ProcessedConsensusLayerReport log on River at `blockNumber`. */
function reportLog(blockNumber: bigint, contracts: ChainContracts = MAINNET) {
  const event = riverAbi.find((i) => i.type === 'event' && i.name === 'ProcessedConsensusLayerReport')!
  const report = {
    epoch: 1n,
    validatorsBalance: 2n,
    validatorsSkimmedBalance: 0n,
    validatorsExitedBalance: 0n,
    validatorsExitingBalance: 0n,
    validatorsCount: 3,
    stoppedValidatorCountPerOperator: [0],
    rebalanceDepositToRedeemMode: false,
    slashingContainmentMode: false,
  }
  const trace = {
    rewards: 1n,
    pulledELFees: 0n,
    pulledRedeemManagerExceedingEthBuffer: 0n,
    pulledCoverageFunds: 0n,
  }
  return {
    address: contracts.river,
    blockNumber,
    topics: encodeEventTopics({ abi: [event], eventName: 'ProcessedConsensusLayerReport' }) as Hex[],
    data: encodeAbiParameters(event.inputs, [report, trace]),
  }
}

/** A ConsensusLayerDataUpdate log (River before 1.0.0). */
function legacyReportLog(blockNumber: bigint) {
  const event = riverLegacyAbi.find((i) => i.type === 'event')!
  return {
    address: MAINNET.river,
    blockNumber,
    topics: encodeEventTopics({ abi: [event], eventName: 'ConsensusLayerDataUpdate' }) as Hex[],
    data: encodeAbiParameters(event.inputs, [10n, 320n * 10n ** 18n, `0x${'0'.repeat(63)}1`]),
  }
}

describe('checkLatestReport', () => {
  test('behavior: finds the last report of either kind within the lookback, with its block date', async () => {
    const head = 22_000_000n
    const node = fakeNode({
      head,
      logs: [legacyReportLog(head - 40_000n), reportLog(head - 7_300n), reportLog(head - 60_000n)],
      genesis: 0n,
    })
    const r = await checkLatestReport(node, MAINNET)
    expect(r.status).toBe('ok')
    const when = new Date(Number((head - 7_300n) * 12n) * 1000)
      .toISOString()
      .replace('T', ' ')
      .replace('.000Z', ' UTC')
    expect(r.message).toBe(
      `latest oracle report at block ${head - 7_300n} (${when}, ProcessedConsensusLayerReport), 7300 blocks before the head`,
    )
    const legacy = await checkLatestReport(fakeNode({ head, logs: [legacyReportLog(head - 10n)] }), MAINNET)
    expect(legacy.message).toMatch(/ConsensusLayerDataUpdate\), 10 blocks before the head$/)
  })

  test('behavior: no report within the lookback is a warning', async () => {
    const head = 22_000_000n
    const r = await checkLatestReport(fakeNode({ head, logs: [reportLog(head - 60_000n)] }), MAINNET)
    expect(r).toMatchObject({ status: 'warn', check: 'latest_report' })
    expect(r.message).toBe(
      `no oracle report on River in blocks ${head - 49_999n}..${head}: is the oracle reporting?`,
    )
  })
})

describe('checkPriceFeeds', () => {
  const FEED = '0x00000000000000000000000000000000000000fe' as Address
  const withFeeds = (feeds: { usd?: Address; eur?: Address }) => ({ ...MAINNET, priceFeeds: feeds })

  test('behavior: a configured feed with code that answers as ETH / USD is ok, with its price and round; EUR on mainnet is its EUR / USD feed (ETH/EUR derived); a currency without a feed is a warning naming it and the chain', async () => {
    const [usd, eur] = await checkPriceFeeds(fakeNode({ contracts: mainnetContracts() }), 1, MAINNET)
    expect(usd).toMatchObject({
      check: 'price_feed_usd',
      status: 'ok',
      message: `ETH / USD price feed ${MAINNET.priceFeeds!.usd}: 3123.45678901 (round 42, updated 2023-11-14 22:13:20 UTC)`,
    })
    expect(eur).toMatchObject({
      check: 'price_feed_eur',
      status: 'ok',
      message: `EUR / USD price feed ${MAINNET.priceFeeds!.eurUsd}: 1.087 (round 42, updated 2023-11-14 22:13:20 UTC)`,
    })
    const [, noEur] = await checkPriceFeeds(fakeNode({ contracts: mainnetContracts() }), 1, {
      ...MAINNET,
      priceFeeds: { usd: MAINNET.priceFeeds!.usd! },
    })
    expect(noEur).toMatchObject({
      check: 'price_feed_eur',
      status: 'warn',
      message:
        'no ETH/EUR price feed is configured for chain 1: EUR prices are stored as missing beside each report',
    })
    const hoodi = await checkPriceFeeds(fakeNode({ chainId: 560048 }), 560048, contractsFor('hoodi'))
    expect(hoodi.map((r) => [r.check, r.status, r.message])).toEqual([
      [
        'price_feed_usd',
        'warn',
        expect.stringMatching(/^no ETH\/USD price feed is configured for chain 560048: USD/),
      ],
      [
        'price_feed_eur',
        'warn',
        expect.stringMatching(/^no ETH\/EUR price feed is configured for chain 560048: EUR/),
      ],
    ])
  })

  test('behavior: a feed address without code fails; a feed of another pair (EUR / USD configured as ETH / EUR) fails', async () => {
    const [, noCode] = await checkPriceFeeds(fakeNode({}), 1, withFeeds({ eur: FEED }))
    expect(noCode).toMatchObject({
      status: 'fail',
      message: `no contract code at the ETH / EUR price feed ${FEED}: wrong address or chain`,
    })
    const crossRate = fakeNode({
      contracts: { [FEED]: { from: 1n, calls: feedCalls('EUR / USD', 108_000_000n) } },
    })
    const [, wrongPair] = await checkPriceFeeds(crossRate, 1, withFeeds({ eur: FEED }))
    expect(wrongPair).toMatchObject({
      status: 'fail',
      message: `the price feed configured for ETH / EUR (${FEED}) describes itself as "EUR / USD": it is not an ETH / EUR feed`,
    })
    const notAFeed = fakeNode({ contracts: { [FEED]: { from: 1n } } })
    const [notAggregator] = await checkPriceFeeds(notAFeed, 1, withFeeds({ usd: FEED }))
    expect(notAggregator).toMatchObject({ status: 'fail' })
    expect(notAggregator!.message).toMatch(
      /does not answer decimals\(\) and description\(\) as an AggregatorV3 feed/,
    )
  })

  test('behavior: a feed without a round yet, or with a non-positive answer, is a warning (prices stored as missing)', async () => {
    const empty = fakeNode({ contracts: { [FEED]: { from: 1n, calls: feedCalls('ETH / USD', null) } } })
    const [noRound] = await checkPriceFeeds(empty, 1, withFeeds({ usd: FEED }))
    expect(noRound).toMatchObject({ status: 'warn' })
    expect(noRound!.message).toMatch(
      /has no answer \(latestRoundData reverted: .*\): prices are stored as missing/,
    )
    const zero = fakeNode({ contracts: { [FEED]: { from: 1n, calls: feedCalls('ETH / USD', 0n) } } })
    const [nonPositive] = await checkPriceFeeds(zero, 1, withFeeds({ usd: FEED }))
    expect(nonPositive).toMatchObject({
      status: 'warn',
      message: `the ETH / USD price feed ${FEED} answers a non-positive price (0): prices are stored as missing`,
    })
  })
})

describe('runDoctorChecks', () => {
  const healthy = () =>
    fakeNode({
      contracts: mainnetContracts({
        [MAINNET.allowlist]: { calls: allowerIs(MAINNET.firewall!) },
        [MAINNET.firewall!]: { calls: firewallCalls(OTHER, OURS, true) },
      }),
      logs: [reportLog(21_999_000n)],
    })

  // the allower's route (multicall reads) is checked on a real devnet: test/doctor.test.ts and
  // test/allowlist-firewall.test.ts; without a key the check only warns that writes are off
  test('behavior: every check in order, all passing (no allower key: a warning), each reported as it completes', async () => {
    const seen: CheckResult[] = []
    const report = await runDoctorChecks(
      { client: healthy(), chain: 'mainnet', chainId: 1, contracts: MAINNET },
      (r) => seen.push(r),
    )
    expect(report.ok).toBe(true)
    expect(seen).toEqual(report.results)
    expect(report.results.map((r) => `${r.status} ${r.check}`)).toEqual([
      'ok chain_id',
      'ok archive',
      'ok code',
      'ok implementation_river',
      'ok implementation_redeemManager',
      'ok implementation_allowlist',
      'ok implementation_oracle',
      'ok implementation_operatorsRegistry',
      'ok firewall_code',
      'warn allower',
      'ok start_blocks',
      'ok latest_report',
      'ok price_feed_usd',
      'ok price_feed_eur',
    ])
  })

  test('behavior: stops at the first failure', async () => {
    const report = await runDoctorChecks({
      client: healthy(),
      chain: 'hoodi',
      chainId: 560048,
      contracts: MAINNET,
    })
    expect(report.ok).toBe(false)
    expect(report.results.map((r) => r.check)).toEqual(['chain_id'])
    const pruned = fakeNode({ contracts: mainnetContracts(), prunedBelow: 21_000_000n })
    const second = await runDoctorChecks({ client: pruned, chain: 'mainnet', chainId: 1, contracts: MAINNET })
    expect(second.results.map((r) => `${r.status} ${r.check}`)).toEqual(['ok chain_id', 'fail archive'])
  })

  test('behavior: an RPC error inside a check is that check’s failure', async () => {
    const client = fakeNode({ contracts: mainnetContracts() })
    const broken = new Proxy(client, {
      get: (target, key) =>
        key === 'getCode' ? () => Promise.reject(new Error('upstream 502')) : Reflect.get(target, key),
    })
    const report = await runDoctorChecks({ client: broken, chain: 'mainnet', chainId: 1, contracts: MAINNET })
    expect(report.results.at(-1)).toMatchObject({
      check: 'code',
      status: 'fail',
      message: 'code check failed: upstream 502',
    })
  })
})
