/**
 * What the simulated users do in a block: deposit (for themselves or another wallet), request redeems,
 * transfer LsETH, and claim their satisfied redeem requests. Every draw comes from the day's seeded Rng.
 */
import {
  type Address,
  type ContractFunctionName,
  type EncodeFunctionDataParameters,
  encodeFunctionData,
} from 'viem'
import { PERMISSION, redeemManagerAbi } from '../../chain/abi.ts'
import { devnetRiverAbi } from '../abi.ts'
import type { TxRequest } from '../blocks.ts'
import type { Rng } from '../rng.ts'
import { atLeast } from '../versions.ts'
import type { SimulationContext, WalletState } from './state.ts'
import { call, depositTx, GAS } from './transactions.ts'

/**
 * A log-uniform amount of ETH in `[min, max]`, in wei, at micro-ETH precision plus random low digits (so the
 * floor divisions see arbitrary integers).
 */
export const randomEth = (rng: Rng, [min, max]: readonly [number, number]): bigint => {
  const eth = Math.exp(rng.between(Math.log(min), Math.log(max)))
  return BigInt(Math.floor(eth * 1e6)) * 10n ** 12n + BigInt(rng.int(1_000_000_000))
}

/** A user's call to River (`to`): the function and its arguments, with its gas and label. */
const riverCall = (
  from: Address,
  to: Address,
  fn: { functionName: ContractFunctionName<typeof devnetRiverAbi>; args: readonly unknown[] },
  gas: bigint,
  label: string,
): TxRequest =>
  call(
    from,
    to,
    encodeFunctionData({ abi: devnetRiverAbi, ...fn } as EncodeFunctionDataParameters),
    gas,
    label,
  )

/** All of `amount` with chance `whole`, else a random share of it in `[min, max]` (never 0). */
const fraction = (rng: Rng, amount: bigint, whole: number, min: number, max: number): bigint => {
  if (rng.chance(whole)) return amount
  const share = BigInt(Math.round(rng.between(min, max) * 1e6))
  const part = (amount * share) / 1_000_000n
  return part === 0n ? amount : part
}

/** Whether a wallet holds every permission of `mask` and is not denied. */
export const canUse = (w: WalletState, mask: bigint) => !w.denied && (w.permissions & mask) === mask

/** Another wallet, not denied, that passes `filter` (20 random tries). */
const pickOther = (
  ctx: SimulationContext,
  rng: Rng,
  self: WalletState,
  filter: (w: WalletState) => boolean,
): WalletState | undefined => {
  for (let attempt = 0; attempt < 20; attempt++) {
    const candidate = rng.pick(ctx.wallets)
    if (candidate !== self && !candidate.denied && filter(candidate)) return candidate
  }
  return undefined
}

/**
 * The users' transactions of one block of `day` (one of `blocksPerDay`): deposits, redeem requests and
 * transfers; wallets in `skip` (losing their permissions in this block) sit it out.
 */
export function userTxs(
  ctx: SimulationContext,
  rng: Rng,
  day: number,
  blocksPerDay: number,
  skip: Set<WalletState>,
): TxRequest[] {
  const { behavior, counts } = ctx
  const { contracts } = ctx.deployment
  const txs: TxRequest[] = []
  const pDeposit = behavior.deposit / blocksPerDay
  const pTransfer = behavior.transfer / blocksPerDay
  // redemptions exist from River 1.0.0 on
  const pRedeem = atLeast(ctx.versions.river, '1.0.0') ? behavior.redeem / blocksPerDay : 0
  for (const wallet of ctx.wallets) {
    if (wallet.denied || skip.has(wallet)) continue
    // a wallet allowlisted today makes its first deposit once the permission is mined
    const firstDeposit = wallet.joinDay === day && wallet.shares === 0n
    if (canUse(wallet, PERMISSION.DEPOSIT) && (firstDeposit || rng.chance(pDeposit))) {
      const recipient = rng.chance(behavior.depositForOther)
        ? pickOther(ctx, rng, wallet, (w) => !skip.has(w))
        : undefined
      txs.push(depositTx(ctx, wallet, randomEth(rng, behavior.depositEth), recipient))
    }
    if (wallet.shares === 0n) continue
    if (canUse(wallet, PERMISSION.REDEEM) && rng.chance(pRedeem)) {
      const other = rng.chance(behavior.redeemForOther)
        ? pickOther(ctx, rng, wallet, (w) => !skip.has(w) && canUse(w, PERMISSION.REDEEM))
        : undefined
      const amount = fraction(rng, wallet.shares, 0.25, 0.1, 0.9)
      counts.redeemRequests += 1
      txs.push(
        riverCall(
          wallet.address,
          contracts.river,
          {
            functionName: 'requestRedeem',
            args: [amount, (other ?? wallet).address],
          },
          GAS.requestRedeem,
          `redeem request by wallet ${wallet.index}`,
        ),
      )
    } else if (rng.chance(pTransfer)) {
      const to = pickOther(ctx, rng, wallet, (w) => !skip.has(w))
      if (!to) continue
      counts.transfers += 1
      txs.push(
        riverCall(
          wallet.address,
          contracts.river,
          {
            functionName: 'transfer',
            args: [to.address, fraction(rng, wallet.shares, 0.2, 0.05, 0.8)],
          },
          GAS.transfer,
          `transfer by wallet ${wallet.index}`,
        ),
      )
    }
  }
  return txs
}

/**
 * Claims of the open redeem requests that a withdrawal event satisfies, one transaction per recipient that
 * decides to claim today (requests already claimed, or of a denied recipient or initiator, are left out).
 */
export async function claimTxs(ctx: SimulationContext, rng: Rng): Promise<TxRequest[]> {
  const { openRequests, walletByAddress, behavior, counts } = ctx
  const { contracts } = ctx.deployment
  const open = [...openRequests.values()]
  if (open.length === 0) return []
  const resolved = await ctx.publicClient.readContract({
    address: contracts.redeemManager,
    abi: redeemManagerAbi,
    functionName: 'resolveRedeemRequests',
    args: [open.map((r) => r.id)],
  })
  const byRecipient = new Map<Address, { ids: number[]; events: number[] }>()
  open.forEach((request, i) => {
    const eventId = resolved[i] ?? -1n
    if (eventId === -3n || eventId === -2n) {
      openRequests.delete(request.id)
      return
    }
    if (eventId < 0n) return
    const recipient = walletByAddress.get(request.recipient.toLowerCase())
    const initiator = walletByAddress.get(request.initiator.toLowerCase())
    if (!recipient || recipient.denied || initiator?.denied) return
    const entry = byRecipient.get(recipient.address) ?? { ids: [], events: [] }
    entry.ids.push(request.id)
    entry.events.push(Number(eventId))
    byRecipient.set(recipient.address, entry)
  })
  const txs: TxRequest[] = []
  for (const [recipient, { ids, events }] of byRecipient) {
    if (!rng.chance(behavior.claim)) continue
    counts.claims += ids.length
    txs.push(
      riverCall(
        recipient,
        contracts.river,
        {
          functionName: 'claimRedeemRequests',
          args: [ids, events],
        },
        GAS.claimBase + GAS.claimPerRequest * BigInt(ids.length),
        `claim ${ids.join(',')} by ${recipient}`,
      ),
    )
  }
  return txs
}
