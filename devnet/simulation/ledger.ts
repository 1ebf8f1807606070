/**
 * Mining with log replay: every mined block's logs update the simulator's records (wallet shares and
 * permissions, open redeem requests, validator deposits and requested exits), as an indexer would.
 */
import {
  type Address,
  concat,
  decodeAbiParameters,
  decodeFunctionData,
  type Hash,
  keccak256,
  type Log,
  pad,
  parseAbi,
  parseEventLogs,
  toEventSelector,
} from 'viem'
import {
  allowlistAbi,
  allowlistLegacyAbi,
  PERMISSION,
  proxyAbi,
  redeemManagerAbi,
  riverAbi,
} from '../../chain/abi.ts'
import { devnetOperatorsRegistryAbi } from '../abi.ts'
import type { MinedBlock, RpcLog, TxRequest } from '../blocks.ts'
import { atLeast, PROXIED_CONTRACTS } from '../versions.ts'
import { operatorOfKey } from './protocol-keeper.ts'
import type { SimulationContext } from './state.ts'

/** topic0 of SetAllowlistPermissions (the same with `accounts` indexed or not). */
const PERMISSIONS_TOPIC = toEventSelector('SetAllowlistPermissions(address[],uint256[])')

/** The protocol's funding events: River 0.4 / 0.5's per key, the 1.x OperatorsRegistry's per operator. */
const fundingEventsAbi = parseAbi([
  'event FundedValidatorKey(bytes publicKey)',
  'event FundedValidatorKeys(uint256 indexed index, bytes[] publicKeys, bool deferred)',
])

const eventsAbi = [
  ...riverAbi,
  ...redeemManagerAbi,
  ...allowlistAbi,
  ...devnetOperatorsRegistryAbi,
  ...proxyAbi,
  ...fundingEventsAbi,
]

/**
 * A permission change replayed on a wallet. Before 1.2.1 (`allow`) the value is stored as given, the DENY bit
 * included; from 1.2.1 on a DENY value is stored as exactly DENY, and a value without it on a denied account
 * can only come from setDenyPermissions, which stores 0.
 */
function applyPermission(ctx: SimulationContext, account: Address, value: bigint): void {
  const wallet = ctx.walletByAddress.get(account.toLowerCase())
  if (!wallet) return
  const legacy = !atLeast(ctx.versions.allowlist, '1.2.1')
  if ((value & PERMISSION.DENY) === PERMISSION.DENY) {
    wallet.denied = true
    wallet.permissions = legacy ? value : PERMISSION.DENY
  } else if (wallet.denied && !legacy) {
    wallet.denied = false
    wallet.permissions = 0n
  } else {
    wallet.denied = false
    wallet.permissions = value
  }
}

/**
 * The 0.4.0 Allowlist's SetAllowlistPermissions has `accounts` indexed: the log holds only the hash of the
 * array, so the accounts come from the transaction's calldata (`allow`, sent directly or forwarded unchanged by
 * the firewall), checked against that hash.
 */
async function replayIndexedPermissions(ctx: SimulationContext, log: RpcLog): Promise<void> {
  const [permissions] = decodeAbiParameters([{ type: 'uint256[]' }], log.data)
  const tx = await ctx.publicClient.getTransaction({ hash: log.transactionHash })
  const { args } = decodeFunctionData({ abi: allowlistLegacyAbi, data: tx.input })
  const [accounts] = args
  const topic = keccak256(accounts.length === 0 ? '0x' : concat(accounts.map((a) => pad(a))))
  if (topic !== log.topics[1]) {
    throw new Error(
      `block ${BigInt(log.blockNumber)} tx ${log.transactionHash} log ${BigInt(log.logIndex)}: allow calldata does not match the indexed accounts`,
    )
  }
  accounts.forEach((account, i) => {
    applyPermission(ctx, account, permissions[i] ?? 0n)
  })
}

/** Applies the logs of one mined block to the simulator's records. */
export async function applyBlock(
  ctx: SimulationContext,
  block: MinedBlock,
  timestamp: bigint,
): Promise<void> {
  const { contracts } = ctx.deployment
  const { counts, walletByAddress, openRequests, consensusModel, requestedExits } = ctx
  counts.blocks += 1
  counts.transactions += block.receipts.length
  const known = new Set<string>(Object.values(contracts).map((a) => a.toLowerCase()))
  const logs = block.logs.filter((log) => known.has(log.address.toLowerCase()))
  const allowlist = contracts.allowlist.toLowerCase()
  const parsed = parseEventLogs({ abi: eventsAbi, logs: logs as unknown as Log[] })
  // the 0.4.0 allowlist logs (2 topics) do not decode with allowlistAbi: they are replayed in their place
  const legacy = logs.filter(
    (l) =>
      l.address.toLowerCase() === allowlist && l.topics.length === 2 && l.topics[0] === PERMISSIONS_TOPIC,
  )
  const ordered = [
    ...parsed.map((log) => ({ index: Number(log.logIndex), log, legacy: undefined })),
    ...legacy.map((log) => ({ index: Number(BigInt(log.logIndex)), log: undefined, legacy: log })),
  ].sort((a, b) => a.index - b.index)
  let upgraded = false
  const fund = (operator: number, count: number) => {
    consensusModel.addDeposits(operator, count, timestamp)
    ctx.fundedKeys[operator] = (ctx.fundedKeys[operator] ?? 0) + count
  }
  for (const item of ordered) {
    if (item.legacy) {
      await replayIndexedPermissions(ctx, item.legacy)
      continue
    }
    const log = item.log
    if (!log) continue
    const address = log.address.toLowerCase()
    switch (log.eventName) {
      case 'Transfer': {
        if (address !== contracts.river.toLowerCase()) break
        const from = walletByAddress.get(log.args.from.toLowerCase())
        const to = walletByAddress.get(log.args.to.toLowerCase())
        if (from) from.shares -= log.args.value
        if (to) to.shares += log.args.value
        break
      }
      case 'RequestedRedeem': {
        if (address !== contracts.redeemManager.toLowerCase()) break
        const recipient = walletByAddress.get(log.args.recipient.toLowerCase())
        if (!recipient) break
        const initiator = block.senders.get((log as { transactionHash: Hash }).transactionHash)
        openRequests.set(log.args.id, {
          id: log.args.id,
          recipient: recipient.address,
          initiator: initiator ?? recipient.address,
        })
        break
      }
      case 'SetAllowlistPermissions': {
        if (address !== allowlist) break
        log.args.accounts.forEach((account, i) => {
          applyPermission(ctx, account, log.args.permissions[i] ?? 0n)
        })
        break
      }
      case 'Upgraded': {
        const contract = PROXIED_CONTRACTS.find((c) => contracts[c].toLowerCase() === address)
        if (!contract) break
        const record = ctx.deployment.implementations[contract].find(
          (r) => r.address.toLowerCase() === log.args.implementation.toLowerCase(),
        )
        if (!record) {
          throw new Error(
            `block ${block.number}: ${contract} upgraded to ${log.args.implementation}, not a devnet implementation`,
          )
        }
        ctx.versions[contract] = record.version
        record.block ??= block.number
        upgraded = true
        break
      }
      case 'FundedValidatorKey':
        if (address !== contracts.river.toLowerCase()) break
        fund(operatorOfKey(log.args.publicKey), 1)
        break
      case 'FundedValidatorKeys':
        // 1.0.0's re-emission of the keys funded before it (deferred) funds nothing
        if (address !== contracts.operatorsRegistry.toLowerCase() || log.args.deferred) break
        fund(Number(log.args.index), log.args.publicKeys.length)
        break
      case 'RequestedValidatorExits':
        if (address !== contracts.operatorsRegistry.toLowerCase()) break
        requestedExits[Number(log.args.index)] = Number(log.args.count)
        break
      case 'UpdatedRequestedValidatorExitsUponStopped':
        if (address !== contracts.operatorsRegistry.toLowerCase()) break
        requestedExits[Number(log.args.index)] = Number(log.args.newRequestedExits)
        break
    }
  }
  if (upgraded) ctx.onUpgrade?.()
}

/**
 * Mines `txs` at `timestamp` (several blocks if they do not fit one) and replays each block's logs.
 *
 * @example
 * const [block] = await mine(ctx, [depositTx], ctx.builder.lastTimestamp() + 12n)
 */
export async function mine(
  ctx: SimulationContext,
  txs: TxRequest[],
  timestamp: bigint,
): Promise<MinedBlock[]> {
  const blocks = await ctx.builder.mine(txs, timestamp)
  for (const block of blocks) await applyBlock(ctx, block, block.timestamp)
  return blocks
}
