/**
 * Mining with log replay: every mined block's logs update the simulator's records (wallet shares and
 * permissions, open redeem requests, validator deposits and requested exits), as an indexer would.
 */
import { type Hash, type Log, parseEventLogs } from 'viem'
import { allowlistAbi, PERMISSION, redeemManagerAbi, riverAbi } from '../../chain/abi.ts'
import { devnetOperatorsRegistryAbi } from '../abi.ts'
import type { MinedBlock, TxRequest } from '../blocks.ts'
import type { SimulationContext } from './state.ts'

const eventsAbi = [...riverAbi, ...redeemManagerAbi, ...allowlistAbi, ...devnetOperatorsRegistryAbi]

/** Applies the logs of one mined block to the simulator's records. */
export function applyBlock(ctx: SimulationContext, block: MinedBlock, timestamp: bigint): void {
  const { contracts } = ctx.deployment
  const { counts, walletByAddress, openRequests, consensusModel, requestedExits } = ctx
  counts.blocks += 1
  counts.transactions += block.receipts.length
  const known = new Set<string>(Object.values(contracts).map((a) => a.toLowerCase()))
  const logs = block.logs.filter((log) => known.has(log.address.toLowerCase()))
  const parsed = parseEventLogs({ abi: eventsAbi, logs: logs as unknown as Log[] })
  for (const log of parsed) {
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
        if (address !== contracts.allowlist.toLowerCase()) break
        log.args.accounts.forEach((account, i) => {
          const wallet = walletByAddress.get(account.toLowerCase())
          const value = log.args.permissions[i] ?? 0n
          if (!wallet) return
          if ((value & PERMISSION.DENY) === PERMISSION.DENY) {
            // setDenyPermissions stores exactly DENY
            wallet.denied = true
            wallet.permissions = PERMISSION.DENY
          } else if (wallet.denied) {
            // setAllowPermissions cannot touch a denied account: this is an undeny, which stores 0
            wallet.denied = false
            wallet.permissions = 0n
          } else {
            wallet.permissions = value
          }
        })
        break
      }
      case 'FundedValidators':
        if (address !== contracts.operatorsRegistry.toLowerCase()) break
        consensusModel.addDeposits(Number(log.args.index), Number(log.args.count), timestamp)
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
  for (const block of blocks) applyBlock(ctx, block, block.timestamp)
  return blocks
}
