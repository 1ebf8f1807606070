import { type Address, getAddress, type Hex, keccak256, toHex } from 'viem'
import { mnemonicToAccount } from 'viem/accounts'

/** anvil's default dev mnemonic: its accounts are unlocked and funded with 10,000 ETH each. */
export const ANVIL_MNEMONIC = 'test test test test test test test test test test test junk'

/** Which anvil dev account plays which role on the devnet. */
export const DEV_ACCOUNT_INDEX = {
  /** deployer; admin of every contract (fee changes) */
  admin: 0,
  /** the service's allowlist writer (written to devnet.json with its key): the AllowlistFirewall's executor */
  allower: 1,
  /** the AllowlistFirewall's admin: the simulator's allowlisting goes through it, never sharing the service's nonce */
  simulatorAllower: 2,
  /** Allowlist denier (setDenyPermissions) */
  denier: 3,
  /** the oracle member that posts the daily report */
  oracleMember: 4,
  /** keeper: deposits to the consensus layer, turns exit demand into operator exit requests */
  keeper: 5,
  /** receives the fee shares */
  collector: 6,
  /** admin of every proxy (sends the upgrades); on mainnet a separate governance contract */
  proxyAdmin: 7,
  /** the second oracle member (the protocol's own bytecode: three members, a quorum of two) */
  oracleMember2: 8,
  /** the third oracle member */
  oracleMember3: 9,
} as const

export type DevRole = keyof typeof DEV_ACCOUNT_INDEX

export interface DevAccount {
  address: Address
  privateKey: Hex
}

/** The dev account of a role (address and private key, derived from the anvil mnemonic). */
export function devAccount(role: DevRole): DevAccount {
  const account = mnemonicToAccount(ANVIL_MNEMONIC, { addressIndex: DEV_ACCOUNT_INDEX[role] })
  const privateKey = account.getHdKey().privateKey
  if (!privateKey) throw new Error(`no private key for dev account ${role}`)
  return { address: account.address, privateKey: toHex(privateKey) }
}

/** Addresses of every devnet role. */
export function devRoles(): Record<DevRole, Address> {
  const roles = {} as Record<DevRole, Address>
  for (const role of Object.keys(DEV_ACCOUNT_INDEX) as DevRole[]) roles[role] = devAccount(role).address
  return roles
}

/**
 * A deterministic address (no private key: the simulator sends from it through anvil impersonation).
 *
 * @example
 * derivedAddress(42, 'wallet', 0) // the same address for the same seed, on every run
 */
export function derivedAddress(seed: number | string, kind: string, index: number): Address {
  const hash = keccak256(toHex(`lsreport-devnet:${seed}:${kind}:${index}`))
  return getAddress(`0x${hash.slice(26)}`)
}
