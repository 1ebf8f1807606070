/**
 * The checks of `lsreport doctor`: can this node and this configuration serve the service? Plain functions
 * over a viem public client, each returning what it found; `runDoctorChecks` runs them in order and stops at
 * the first hard failure. `up`, `sync` and `worker` may run them at start.
 *
 * Hard failures (`fail`): the wrong chain, a node that cannot read historical state, a configured contract
 * without code, a start block after a contract's deployment, an RPC error. Warnings (`warn`): what limits the
 * service without making its data wrong (an unknown implementation version, an implementation or firewall
 * whose runtime code is not a known protocol build or names another version than its address, an allower
 * other than our key, no recent oracle report, no ETH price feed for a currency or a feed without a round yet).
 */

import { formatUnits } from 'viem'
import type { Address } from '../common/address.ts'
import { allowlistAbi, riverReportEventsAbi } from './abi.ts'
import type { ChainContracts, StartBlocks } from './addresses.ts'
import { resolveAllowlistWriteRoute, writeSelector } from './allowlist-route.ts'
import type { ChainClient } from './client.ts'
import { type CodeIdentity, codeName, identifyCode } from './code-hashes.ts'
import { AllowlistWriteRefusedError } from './errors.ts'
import { createLogFetcher } from './log-fetcher.ts'
import { aggregatorV3Abi, CURRENCIES, type Currency, feedSourceOf } from './price-feeds.ts'
import { revertReasonOf } from './revert-reasons.ts'
import { shortMessage } from './rpc-values.ts'
import {
  implementationAt,
  type KnownImplementation,
  knownVersion,
  PROTOCOL_CONTRACT_OF,
  type ProxiedContractKey,
} from './versions.ts'

/** ok: as expected; warn: works, with a limit worth knowing; fail: the service cannot run correctly. */
export type CheckStatus = 'ok' | 'warn' | 'fail'

/** One finding: a stable check id, its status, one line for a person, and machine-readable details. */
export interface CheckResult {
  check: string
  status: CheckStatus
  message: string
  details?: Record<string, string | number | boolean | null>
}

export interface DoctorInput {
  client: ChainClient
  /** CHAIN as configured: mainnet, hoodi or devnet */
  chain: string
  /** the chain id CHAIN implies (a devnet's from its devnet.json) */
  chainId: number
  contracts: ChainContracts
  /** the address of our allowlist key (ALLOWER_PRIVATE_KEY, or the devnet's allower), if any */
  allower?: Address | undefined
  /** implementations beyond the published table (a devnet's `implementations`) */
  implementations?: readonly KnownImplementation[] | undefined
  /** how far back from the head to look for the latest oracle report. Default 50 000 blocks. */
  reportLookback?: bigint | undefined
  /** checks not run (e.g. `archive` on a resumed devnet, which keeps the state of its latest blocks only) */
  skip?: readonly string[] | undefined
}

/** What `runDoctorChecks` found: `ok` is false when a check failed (the run stopped there). */
export interface DoctorReport {
  ok: boolean
  results: CheckResult[]
}

const PROXIES = Object.keys(PROTOCOL_CONTRACT_OF) as ProxiedContractKey[]

/** Where an operator finds a node that can read old state. */
const ARCHIVE_HINT =
  'reads at historical blocks need an archive node (e.g. geth --gcmode archive, erigon, reth, or an archive plan of an RPC provider)'

function result(
  check: string,
  status: CheckStatus,
  message: string,
  details?: CheckResult['details'],
): CheckResult {
  return details ? { check, status, message, details } : { check, status, message }
}

function configured(contracts: ChainContracts): [string, Address][] {
  const entries: [string, Address | undefined][] = [
    ['river', contracts.river],
    ['redeemManager', contracts.redeemManager],
    ['allowlist', contracts.allowlist],
    ['oracle', contracts.oracle],
    ['operatorsRegistry', contracts.operatorsRegistry],
    ['firewall', contracts.firewall],
  ]
  return entries.filter((e): e is [string, Address] => e[1] !== undefined)
}

/**
 * The node's own words for a failed call (viem keeps them in `details`, under its generic short message),
 * on one line.
 */
function nodeSaid(error: unknown): string {
  for (let e: unknown = error; typeof e === 'object' && e !== null; e = (e as { cause?: unknown }).cause) {
    const details = (e as { details?: unknown }).details
    if (typeof details === 'string' && details) return details.replace(/\s+/g, ' ')
  }
  return shortMessage(error).replace(/\s+/g, ' ')
}

const same = (a: string | undefined, b: string | undefined) =>
  a !== undefined && b !== undefined && a.toLowerCase() === b.toLowerCase()

/**
 * The node serves the chain CHAIN names. Also the first contact with RPC_URL: an unreachable node fails here.
 *
 * @example
 * await checkChainId(client, 1, 'mainnet') // {check: 'chain_id', status: 'ok', message: 'chain id 1 (mainnet)'}
 */
export async function checkChainId(
  client: ChainClient,
  expected: number,
  chain: string,
): Promise<CheckResult> {
  let actual: number
  try {
    actual = await client.getChainId()
  } catch (error) {
    return result('chain_id', 'fail', `cannot read the chain id from RPC_URL: ${nodeSaid(error)}`)
  }
  if (actual !== expected) {
    return result(
      'chain_id',
      'fail',
      `chain id ${actual} at RPC_URL, but CHAIN=${chain} is chain id ${expected}: point RPC_URL at a ${chain} node or set CHAIN to match`,
      { expected, actual },
    )
  }
  return result('chain_id', 'ok', `chain id ${actual} (${chain})`, { chain_id: actual })
}

/**
 * The node answers a state read at River's start block: indexing and backfills read balances and rates at
 * past blocks, which a pruned (full, non-archive) node refuses ("missing trie node", "header not found").
 */
export async function checkArchive(client: ChainClient, contracts: ChainContracts): Promise<CheckResult> {
  const block = contracts.startBlocks.river
  const head = await client.getBlockNumber()
  if (head < block) {
    return result(
      'archive',
      'fail',
      `the node's head is block ${head}, before River's start block ${block}: the node is not synced, or serves another chain`,
      { head: head.toString(), block: block.toString() },
    )
  }
  try {
    await client.getBalance({ address: contracts.river, blockNumber: block })
  } catch (error) {
    return result(
      'archive',
      'fail',
      `the node cannot read state at block ${block}: ${ARCHIVE_HINT}; the node said: ${nodeSaid(error)}`,
      { block: block.toString() },
    )
  }
  return result('archive', 'ok', `historical state readable (block ${block}, River's start block)`, {
    block: block.toString(),
  })
}

/**
 * Every configured address holds code at the head (a wrong address or chain holds none); a proxy that a devnet's
 * published history deploys at a later upgrade (no implementation of it mined yet) is a warning.
 */
export async function checkCode(
  client: ChainClient,
  contracts: ChainContracts,
  implementations: readonly KnownImplementation[] = [],
): Promise<CheckResult> {
  const entries = configured(contracts)
  const codes = await Promise.all(entries.map(([, address]) => client.getCode({ address })))
  const absent = entries.filter((_, i) => !codes[i] || codes[i] === '0x')
  // a devnet replaying the protocol's history deploys some proxies at a later upgrade (the RedeemManager with
  // River 1.0.0): its published implementations say so (none mined yet); anything else absent is a wrong address
  const planned = ([name]: [string, Address]) => {
    const listed = implementations.filter(
      (i) => i.contract === PROTOCOL_CONTRACT_OF[name as ProxiedContractKey],
    )
    return listed.length > 0 && listed.every((i) => i.block === null)
  }
  const missing = absent.filter((entry) => !planned(entry))
  const details = Object.fromEntries(entries)
  const list = (found: [string, Address][]) => found.map(([name, address]) => `${name} ${address}`).join(', ')
  if (missing.length) {
    return result(
      'code',
      'fail',
      `no contract code at ${list(missing)}: wrong CHAIN or contract addresses`,
      details,
    )
  }
  const present = entries.filter((entry) => !absent.includes(entry)).map(([name]) => name)
  if (absent.length) {
    return result(
      'code',
      'warn',
      `contract code at ${present.join(', ')}; ${list(absent)} not deployed yet (the chain's history deploys ` +
        'it at a planned upgrade)',
      details,
    )
  }
  return result('code', 'ok', `contract code at ${present.join(', ')}`, details)
}

/**
 * The implementation behind each proxy (EIP-1967 slot), named twice: by its address (the published table, or
 * a devnet's own) and by its runtime code (`eth_getCode` hashed against `chain/code-hashes.ts`). Both naming
 * the same version of the proxy's contract is ok, and so is a known code at an address no table lists. A
 * warning, since the service's ABIs were checked against the known versions only: an address neither table
 * nor code knows; a code that is not a known protocol build (a devnet's own contracts); an address table and
 * a code that disagree (both named); a version of another contract; an empty slot.
 *
 * @example
 * await checkImplementations(client, 1, contractsFor('mainnet'))
 * // [{check: 'implementation_river', status: 'ok', message: 'river runs River 1.2.1 (0x34e4...; its code is River 1.2.1)'}, ...]
 */
export async function checkImplementations(
  client: ChainClient,
  chainId: number,
  contracts: ChainContracts,
  extra: readonly KnownImplementation[] = [],
): Promise<CheckResult[]> {
  const proxies = PROXIES.flatMap((key) => {
    const address = contracts[key]
    return address ? [[key, address] as const] : []
  })
  const implementations = await Promise.all(proxies.map(([, address]) => implementationAt(client, address)))
  const codes = await Promise.all(
    implementations.map((address) => (address ? client.getCode({ address }) : undefined)),
  )
  return proxies.map(([key, proxy], i) => {
    const implementation = implementations[i] ?? null
    const check = `implementation_${key}`
    if (implementation === null) {
      return result(check, 'warn', `${key} ${proxy} is not an EIP-1967 proxy (empty implementation slot)`, {
        proxy,
        implementation: null,
      })
    }
    return namedImplementation(check, key, proxy, implementation, {
      byAddress: knownVersion(chainId, implementation, extra),
      byCode: identifyCode(codes[i]),
    })
  })
}

/** One proxy's implementation check from its two names (see `checkImplementations`). */
function namedImplementation(
  check: string,
  key: ProxiedContractKey,
  proxy: Address,
  implementation: Address,
  { byAddress, byCode }: { byAddress: KnownImplementation | undefined; byCode: CodeIdentity },
): CheckResult {
  const expected = PROTOCOL_CONTRACT_OF[key]
  const code = byCode.known
  const details = {
    proxy,
    implementation,
    version: byAddress?.version ?? null,
    code_contract: code?.contract ?? null,
    code_version: code?.version ?? null,
    code_hash: byCode.hash,
    code_size: byCode.size,
  }
  const warn = (message: string) => result(check, 'warn', message, details)
  const codeSays = code ? codeName(code) : undefined
  const unknownCode =
    byCode.size === 0
      ? 'no code at the implementation'
      : `code not a known protocol build (keccak256 ${byCode.hash}, ${byCode.size} bytes)`
  if (code && (code.kind !== 'implementation' || code.contract !== expected)) {
    return warn(
      `${key} runs implementation ${implementation}, whose code is ${codeSays}, not a ${expected} version`,
    )
  }
  if (!byAddress) {
    if (code) {
      return result(
        check,
        'ok',
        `${key} runs ${codeSays} by its code (${implementation}, an address the version table does not list)`,
        details,
      )
    }
    return warn(
      `${key} runs implementation ${implementation}, not a known version (${unknownCode}): the service's ABIs were checked against the known ones only`,
    )
  }
  const addressSays = `${byAddress.contract} ${byAddress.version}`
  if (code && (code.contract !== byAddress.contract || code.version !== byAddress.version)) {
    return warn(
      `${key} runs implementation ${implementation}, which the version table names ${addressSays} but whose code is ${codeSays}`,
    )
  }
  if (byAddress.contract !== expected) {
    return warn(
      `${key} runs implementation ${implementation}, which is ${addressSays}, not a ${expected} version`,
    )
  }
  if (!code) return warn(`${key} runs ${addressSays} (${implementation}): ${unknownCode}`)
  return result(
    check,
    'ok',
    `${key} runs ${addressSays} (${implementation}; its code is ${codeSays})`,
    details,
  )
}

/**
 * The firewall's code (`contracts.firewall`), named by `chain/code-hashes.ts` with its immutable destination
 * masked (Hoodi's build): the protocol's Firewall is ok; another known code or an unknown one is a warning
 * (the allowlist writer calls it as the protocol's Firewall). No firewall configured: no result.
 *
 * @example
 * await checkFirewallCode(client, contractsFor('mainnet'))
 * // [{check: 'firewall_code', status: 'ok', message: 'firewall 0xf1b9... runs the protocol's Firewall (mainnet build)'}]
 */
export async function checkFirewallCode(
  client: ChainClient,
  contracts: ChainContracts,
): Promise<CheckResult[]> {
  const firewall = contracts.firewall
  if (!firewall) return []
  const found = identifyCode(await client.getCode({ address: firewall }))
  const code = found.known
  const details = {
    firewall,
    code_contract: code?.contract ?? null,
    code_hash: found.hash,
    code_size: found.size,
  }
  if (!code) {
    return [
      result(
        'firewall_code',
        'warn',
        `firewall ${firewall}: code not a known protocol build (keccak256 ${found.hash}, ${found.size} bytes)`,
        details,
      ),
    ]
  }
  if (code.kind !== 'firewall') {
    return [
      result(
        'firewall_code',
        'warn',
        `firewall ${firewall} holds the code of ${codeName(code)}, not a Firewall`,
        details,
      ),
    ]
  }
  const masked = code.immutables.length ? ', its immutable destination masked' : ''
  return [
    result(
      'firewall_code',
      'ok',
      `firewall ${firewall} runs the protocol's Firewall (${code.chains.join(' and ')} build${masked})`,
      details,
    ),
  ]
}

/**
 * Who may write the Allowlist and whether our key can (`resolveAllowlistWriteRoute`, the allowlist writer's own
 * detection): our key as the allower, or the firewall with our key as its admin or as its executor allowed the
 * write; anything else, or no key, means the service's allowlist writes are off or refused (warn).
 */
export async function checkAllower(
  client: ChainClient,
  contracts: ChainContracts,
  ours: Address | undefined,
): Promise<CheckResult> {
  const check = 'allower'
  if (!ours) {
    const allower = await client
      .readContract({ address: contracts.allowlist, abi: allowlistAbi, functionName: 'getAllower' })
      .catch(() => undefined)
    return result(
      check,
      'warn',
      `the Allowlist's allower is ${allower ?? 'unreadable'}; no allowlist key is set (ALLOWER_PRIVATE_KEY): ` +
        'allowlist writes are off',
    )
  }
  try {
    const route = await resolveAllowlistWriteRoute(client, contracts.allowlist, ours)
    const details = { allower: route.allower, ours, route: route.kind, to: route.to }
    if (route.kind === 'direct')
      return result(check, 'ok', `the Allowlist's allower is our key ${ours}`, details)
    const name = same(route.allower, contracts.firewall) ? 'the AllowlistFirewall' : 'a firewall'
    return result(
      check,
      'ok',
      `the Allowlist's allower is ${name} ${route.allower}; our key ${ours} is its ${route.role}, allowed to ` +
        `call ${route.functionName} (${writeSelector(route.functionName)}): writes go through it`,
      details,
    )
  } catch (error) {
    if (error instanceof AllowlistWriteRefusedError) {
      return result(check, 'warn', `${error.message}: writes will be refused`, {
        ours,
        allower: String(error.details?.allower ?? ''),
      })
    }
    return result(check, 'warn', `cannot read the Allowlist's allower: ${nodeSaid(error)}`)
  }
}

/**
 * Each contract's start block is not after its deployment: the contract has no code the block before (else
 * its earlier logs would never be scanned: fail). No code yet at the start block only means the scan starts a
 * little early, which is harmless.
 */
export async function checkStartBlocks(client: ChainClient, contracts: ChainContracts): Promise<CheckResult> {
  const entries = (Object.entries(contracts.startBlocks) as [keyof StartBlocks, bigint][]).flatMap(
    ([key, block]) => {
      const address = contracts[key]
      return address ? [{ key, block, address }] : []
    },
  )
  const late: string[] = []
  const early: string[] = []
  await Promise.all(
    entries.map(async ({ key, block, address }) => {
      const [before, at] = await Promise.all([
        block > 0n ? client.getCode({ address, blockNumber: block - 1n }) : undefined,
        client.getCode({ address, blockNumber: block }),
      ])
      if (before && before !== '0x') late.push(`${key} ${block}`)
      else if (!at || at === '0x') early.push(key)
    }),
  )
  const details = Object.fromEntries(entries.map(({ key, block }) => [key, block.toString()]))
  const list = entries.map(({ key, block }) => `${key} ${block}`).join(', ')
  if (late.length) {
    return result(
      'start_blocks',
      'fail',
      `start blocks after a deployment: ${late.join(', ')} (the contract has code the block before): its earlier logs would never be scanned`,
      details,
    )
  }
  const note = early.length ? ` (${early.join(', ')} deployed later: the scan starts early, harmless)` : ''
  return result('start_blocks', 'ok', `start blocks ${list}${note}`, details)
}

/**
 * The latest oracle report on River (`ProcessedConsensusLayerReport`, or `ConsensusLayerDataUpdate` before
 * River 1.0.0) within `lookback` blocks of the head, with its block time; none is a warning (a stalled oracle,
 * or a chain without reports).
 */
export async function checkLatestReport(
  client: ChainClient,
  contracts: ChainContracts,
  lookback = 50_000n,
): Promise<CheckResult> {
  const head = await client.getBlockNumber()
  const earliest = head - lookback + 1n
  const fromBlock = earliest > contracts.startBlocks.river ? earliest : contracts.startBlocks.river
  if (fromBlock > head) {
    return result('latest_report', 'warn', `no oracle report yet: River starts at block ${fromBlock}`)
  }
  const fetcher = createLogFetcher({ client, retries: 2, initialRange: 10_000n, checkHead: false })
  const logs = await fetcher.fetchLogs({
    address: contracts.river,
    abi: riverReportEventsAbi,
    fromBlock,
    toBlock: head,
  })
  const last = logs.at(-1)
  if (!last) {
    return result(
      'latest_report',
      'warn',
      `no oracle report on River in blocks ${fromBlock}..${head}: is the oracle reporting?`,
      { from_block: fromBlock.toString(), to_block: head.toString() },
    )
  }
  const block = await client.getBlock({ blockNumber: last.blockNumber })
  const date = new Date(Number(block.timestamp) * 1000)
    .toISOString()
    .replace('T', ' ')
    .replace('.000Z', ' UTC')
  return result(
    'latest_report',
    'ok',
    `latest oracle report at block ${last.blockNumber} (${date}, ${last.eventName}), ${head - last.blockNumber} blocks before the head`,
    {
      block: last.blockNumber.toString(),
      timestamp: Number(block.timestamp),
      event: last.eventName,
      tx: last.transactionHash,
    },
  )
}

/**
 * The ETH price feed of each currency (`contracts.priceFeeds`), at the head: it has code and answers
 * `decimals()`, `description()` (which must be "ETH / USD" or "ETH / EUR": a feed of another pair, such as the
 * EUR / USD cross rate, would store a wrong price) and `latestRoundData()` with a positive answer. One result
 * per currency (`price_feed_usd`, `price_feed_eur`). No feed configured: a warning naming the currency and the
 * chain (its prices are stored as missing). No code, or a contract that is not an ETH AggregatorV3 feed: a
 * failure. No round yet or a non-positive answer: a warning (prices are stored as missing until it answers).
 *
 * @example
 * await checkPriceFeeds(client, 560048, contractsFor('hoodi'))
 * // [{check: 'price_feed_usd', status: 'warn', message: 'no ETH/USD price feed is configured for chain 560048: ...'}, ...]
 */
export async function checkPriceFeeds(
  client: ChainClient,
  chainId: number,
  contracts: ChainContracts,
): Promise<CheckResult[]> {
  return Promise.all(CURRENCIES.map((currency) => checkPriceFeed(client, chainId, contracts, currency)))
}

async function checkPriceFeed(
  client: ChainClient,
  chainId: number,
  contracts: ChainContracts,
  currency: Currency,
): Promise<CheckResult> {
  const check = `price_feed_${currency}`
  // EUR without an ETH / EUR feed: the EUR / USD feed ETH/EUR is derived from
  const { feed, description: pair } = feedSourceOf(contracts.priceFeeds, currency)
  if (!feed) {
    return result(
      check,
      'warn',
      `no ${pair.replaceAll(' ', '')} price feed is configured for chain ${chainId}: ${currency.toUpperCase()} prices are stored as missing beside each report`,
      { currency, chain_id: chainId, feed: null },
    )
  }
  const code = await client.getCode({ address: feed })
  if (!code || code === '0x') {
    return result(
      check,
      'fail',
      `no contract code at the ${pair} price feed ${feed}: wrong address or chain`,
      {
        currency,
        feed,
      },
    )
  }
  const read = <T>(functionName: 'decimals' | 'description' | 'latestRoundData') =>
    client.readContract({ address: feed, abi: aggregatorV3Abi, functionName }) as Promise<T>
  let decimals: number
  let description: string
  try {
    ;[decimals, description] = await Promise.all([read<number>('decimals'), read<string>('description')])
  } catch (error) {
    return result(
      check,
      'fail',
      `the ${pair} price feed ${feed} does not answer decimals() and description() as an AggregatorV3 feed: ${nodeSaid(error)}`,
      { currency, feed },
    )
  }
  if (description.trim() !== pair) {
    return result(
      check,
      'fail',
      `the price feed configured for ${pair} (${feed}) describes itself as "${description}": it is not an ${pair} feed`,
      { currency, feed, description },
    )
  }
  let round: readonly [bigint, bigint, bigint, bigint, bigint]
  try {
    round = await read('latestRoundData')
  } catch (error) {
    return result(
      check,
      'warn',
      `the ${pair} price feed ${feed} has no answer (latestRoundData reverted: ${revertReasonOf(error)}): prices are stored as missing until it answers`,
      { currency, feed, decimals, description },
    )
  }
  const [roundId, answer, , updatedAt] = round
  const details = {
    currency,
    feed,
    decimals,
    description,
    round_id: roundId.toString(),
    answer: answer.toString(),
    updated_at: Number(updatedAt),
  }
  if (answer <= 0n) {
    return result(
      check,
      'warn',
      `the ${pair} price feed ${feed} answers a non-positive price (${answer}): prices are stored as missing`,
      details,
    )
  }
  const when = new Date(Number(updatedAt) * 1000).toISOString().replace('T', ' ').replace('.000Z', ' UTC')
  return result(
    check,
    'ok',
    `${pair} price feed ${feed}: ${formatUnits(answer, decimals)} (round ${roundId}, updated ${when})`,
    details,
  )
}

/**
 * Runs the checks in order: chain id, archive reads, code, implementations, the firewall's code, allower,
 * start blocks, latest report, price feeds. Stops at the first failure (later checks would only repeat it). Each result is passed to
 * `onResult` as soon as it is known; an unexpected error (an RPC failure) is that check's failure.
 *
 * @example
 * const report = await runDoctorChecks({ client, chain: 'mainnet', chainId: 1, contracts: contractsFor('mainnet') })
 * if (!report.ok) process.exit(1)
 */
export async function runDoctorChecks(
  input: DoctorInput,
  onResult: (result: CheckResult) => void = () => {},
): Promise<DoctorReport> {
  const { client, contracts } = input
  const steps: [string, () => Promise<CheckResult | CheckResult[]>][] = [
    ['chain_id', () => checkChainId(client, input.chainId, input.chain)],
    ['archive', () => checkArchive(client, contracts)],
    ['code', () => checkCode(client, contracts, input.implementations)],
    ['implementation', () => checkImplementations(client, input.chainId, contracts, input.implementations)],
    ['firewall_code', () => checkFirewallCode(client, contracts)],
    ['allower', () => checkAllower(client, contracts, input.allower)],
    ['start_blocks', () => checkStartBlocks(client, contracts)],
    ['latest_report', () => checkLatestReport(client, contracts, input.reportLookback)],
    ['price_feeds', () => checkPriceFeeds(client, input.chainId, contracts)],
  ]
  const results: CheckResult[] = []
  for (const [check, run] of steps) {
    if (input.skip?.includes(check)) continue
    let found: CheckResult[]
    try {
      const out = await run()
      found = Array.isArray(out) ? out : [out]
    } catch (error) {
      found = [result(check, 'fail', `${check.replace('_', ' ')} check failed: ${nodeSaid(error)}`)]
    }
    for (const r of found) {
      results.push(r)
      onResult(r)
    }
    if (found.some((r) => r.status === 'fail')) return { ok: false, results }
  }
  return { ok: true, results }
}
