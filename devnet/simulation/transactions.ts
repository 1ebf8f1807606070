/**
 * The transactions the simulator sends, built from its roles and the deployed contracts: allowlisting and
 * deposits (the keeper's consensus-layer deposits: protocol-keeper.ts), and the gas each is given.
 */
import { type Address, encodeFunctionData, type Hex } from 'viem'
import { allowlistAbi, allowlistLegacyAbi, PERMISSION } from '../../chain/abi.ts'
import { devnetRiverAbi } from '../abi.ts'
import type { TxRequest } from '../blocks.ts'
import { atLeast } from '../versions.ts'
import type { SimulationContext, WalletState } from './state.ts'

/** Gas limits of the simulator's transactions. */
export const GAS = {
  deposit: 250_000n,
  transfer: 200_000n,
  requestRedeem: 500_000n,
  claimBase: 200_000n,
  claimPerRequest: 400_000n,
  allowlistBase: 80_000n,
  allowlistPerAccount: 40_000n,
  clDepositBase: 300_000n,
  clDepositPerValidator: 5_000n,
  exitsBase: 300_000n,
  exitsPerValidator: 5_000n,
  admin: 300_000n,
  report: 3_000_000n,
}
const ALLOWLIST_CHUNK = 200

/** The permissions of an onboarded minter: DEPOSIT and REDEEM. */
export const MINTER_PERMISSIONS = PERMISSION.DEPOSIT | PERMISSION.REDEEM

/**
 * A transaction request (`value` only when given).
 *
 * @example
 * call(roles.admin, contracts.river, data, GAS.admin, 'fee change')
 */
export const call = (
  from: Address,
  to: Address,
  data: Hex,
  gas: bigint,
  label: string,
  value?: bigint,
): TxRequest => (value === undefined ? { from, to, data, gas, label } : { from, to, data, gas, label, value })

/**
 * The simulator's allowlisting, 200 accounts per transaction, sent to the AllowlistFirewall by its admin (the
 * simulator's allower, dev account #2), which forwards it to the Allowlist: `allow` before 1.2.1,
 * `setAllowPermissions` from 1.2.1 on (the version in force, as replayed from the proxy's Upgraded logs);
 * counts the changes.
 */
export function allowTxs(
  ctx: SimulationContext,
  accounts: Address[],
  permissions: bigint[],
  label: string,
): TxRequest[] {
  const { contracts, roles } = ctx.deployment
  const txs: TxRequest[] = []
  for (let i = 0; i < accounts.length; i += ALLOWLIST_CHUNK) {
    const chunk = accounts.slice(i, i + ALLOWLIST_CHUNK)
    const args = [chunk, permissions.slice(i, i + ALLOWLIST_CHUNK)] as const
    txs.push(
      call(
        roles.simulatorAllower,
        contracts.firewall,
        atLeast(ctx.versions.allowlist, '1.2.1')
          ? encodeFunctionData({ abi: allowlistAbi, functionName: 'setAllowPermissions', args })
          : encodeFunctionData({ abi: allowlistLegacyAbi, functionName: 'allow', args }),
        GAS.allowlistBase + GAS.allowlistPerAccount * BigInt(chunk.length),
        label,
      ),
    )
  }
  ctx.counts.allowlistChanges += accounts.length
  return txs
}

/** A deposit of `amount` wei by `wallet`, minted to `recipient` when given (depositAndTransfer); counts it. */
export function depositTx(
  ctx: SimulationContext,
  wallet: WalletState,
  amount: bigint,
  recipient?: WalletState,
): TxRequest {
  ctx.counts.deposits += 1
  const data = recipient
    ? encodeFunctionData({
        abi: devnetRiverAbi,
        functionName: 'depositAndTransfer',
        args: [recipient.address],
      })
    : encodeFunctionData({ abi: devnetRiverAbi, functionName: 'deposit' })
  return call(
    wallet.address,
    ctx.deployment.contracts.river,
    data,
    GAS.deposit,
    `deposit by wallet ${wallet.index}`,
    amount,
  )
}
