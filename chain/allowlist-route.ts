import { type Address, getAddress, toFunctionSelector } from 'viem'
import { allowlistAbi, firewallAbi } from './abi.ts'
import { readAllAtBlock, resultOf } from './blocks.ts'
import type { ChainClient } from './client.ts'
import { AllowlistWriteRefusedError } from './errors.ts'
import { withRetry } from './retry.ts'

/** The Allowlist's permission write of the version in force: `setAllowPermissions` (1.2.1 on), `allow` before. */
export type AllowWriteName = 'setAllowPermissions' | 'allow'

/**
 * Where and how the allowlist writer sends its writes: to the Allowlist when the key is its allower (`direct`),
 * or to the protocol's firewall when that is the allower and the key may call the write through it (`firewall`:
 * the firewall forwards the calldata unchanged to the Allowlist).
 */
export interface AllowlistWriteRoute {
  kind: 'direct' | 'firewall'
  /** The address the transactions go to. */
  to: Address
  functionName: AllowWriteName
  /** The Allowlist's allower. */
  allower: Address
  /** Through a firewall: the role the key holds there. */
  role?: 'admin' | 'executor'
}

/**
 * The selector of a write, as the firewall's `executorCanCall` keys it.
 *
 * @example
 * writeSelector('allow') // '0xe580d994'
 */
export function writeSelector(name: AllowWriteName): `0x${string}` {
  return toFunctionSelector(`${name}(address[],uint256[])`)
}

/**
 * Detects who may write the Allowlist and how the key `writer` can: reads the Allowlist's `getAllower()`; when the
 * allower is the key, writes go straight to the Allowlist; when it is a firewall whose `destination()` is the
 * Allowlist and the key is its admin, or its executor with `executorCanCall(write selector)`, writes go through
 * the firewall. Otherwise throws AllowlistWriteRefusedError naming the key, the Allowlist and its allower.
 *
 * @example
 * const route = await resolveAllowlistWriteRoute(client, contracts.allowlist, account.address)
 * // { kind: 'firewall', to: '0xF1b9...', functionName: 'setAllowPermissions', role: 'executor', ... }
 */
export async function resolveAllowlistWriteRoute(
  client: ChainClient,
  allowlist: Address,
  writer: Address,
): Promise<AllowlistWriteRoute> {
  // one block for every read: the Allowlist's version and allower, then the firewall's roles
  const block = await withRetry(() => client.getBlockNumber())
  const [denier, allowerRead] = await readAllAtBlock(
    client,
    [
      { address: allowlist, abi: allowlistAbi, functionName: 'getDenier' },
      { address: allowlist, abi: allowlistAbi, functionName: 'getAllower' },
    ],
    block,
  )
  // getDenier() came with setAllowPermissions in 1.2.1; before it the write was allow
  const functionName: AllowWriteName = denier?.status === 'success' ? 'setAllowPermissions' : 'allow'
  const allower = getAddress(resultOf(allowerRead) as Address)
  const key = getAddress(writer)
  if (allower === key) return { kind: 'direct', to: getAddress(allowlist), functionName, allower }
  const refuse = (why: string): never => {
    throw new AllowlistWriteRefusedError(
      `the allowlist writer's key ${key} cannot write the Allowlist ${getAddress(allowlist)}: its allower is ` +
        `${allower}, ${why}`,
      { details: { key, allowlist: getAddress(allowlist), allower } },
    )
  }
  const code = await withRetry(() => client.getCode({ address: allower, blockNumber: block }))
  if (!code || code === '0x') return refuse('an account that is not this key (not a firewall either)')
  const selector = writeSelector(functionName)
  const [destination, admin, executor, canCall] = await readAllAtBlock(
    client,
    [
      { address: allower, abi: firewallAbi, functionName: 'destination' },
      { address: allower, abi: firewallAbi, functionName: 'getAdmin' },
      { address: allower, abi: firewallAbi, functionName: 'executor' },
      { address: allower, abi: firewallAbi, functionName: 'executorCanCall', args: [selector] },
    ],
    block,
  )
  if (
    destination?.status !== 'success' ||
    getAddress(resultOf(destination) as Address) !== getAddress(allowlist)
  ) {
    return refuse('a contract that is not a firewall in front of this Allowlist')
  }
  const firewall = { kind: 'firewall', to: allower, functionName, allower } as const
  if (getAddress(resultOf(admin) as Address) === key) return { ...firewall, role: 'admin' }
  const executorAddress = getAddress(resultOf(executor) as Address)
  if (executorAddress === key && resultOf(canCall) === true) return { ...firewall, role: 'executor' }
  return refuse(
    executorAddress === key
      ? `a firewall whose executor (this key) may not call ${functionName} (${selector}): its admin must allow it`
      : `a firewall whose admin is ${getAddress(resultOf(admin) as Address)} and executor ${executorAddress}: ` +
          'the key is neither',
  )
}
