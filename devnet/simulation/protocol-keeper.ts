/**
 * The keeper's consensus-layer deposits on the protocol's own bytecode: validator keys added to the
 * OperatorsRegistry and limits raised as needed, then the deposit call of the River version in force (0.4 /
 * 0.5: the admin's `depositToConsensusLayer` from the deposit buffer; 1.0.x: `depositToConsensusLayer` from the
 * committed balance; 1.2.1: the keeper's `depositToConsensusLayerWithDepositRoot`).
 */
import { type Abi, concatHex, encodeFunctionData, type Hex, padHex, toHex } from 'viem'
import type { TxRequest } from '../blocks.ts'
import { DEPOSIT_SIZE } from '../consensus.ts'
import { implementationArtifact, protocolCode } from '../protocol-code.ts'
import { atLeast, type ProtocolVersion } from '../versions.ts'
import type { SimulationContext } from './state.ts'
import { call, GAS } from './transactions.ts'

const MAX_CL_DEPOSITS_PER_DAY = 5_000n
const ZERO_ROOT = padHex('0x', { size: 32 })

/**
 * The 48-byte public key of an operator's n-th validator key: the operator index and the key number, so a
 * funded key names its operator (River 0.4's FundedValidatorKey carries only the key).
 *
 * @example
 * operatorOfKey(validatorKey(3, 7)) // 3
 */
export const validatorKey = (operator: number, n: number): Hex =>
  padHex(toHex((BigInt(operator + 1) << 64n) | BigInt(n + 1)), { size: 48 })

/** The operator index a devnet validator key belongs to. */
export const operatorOfKey = (key: Hex): number => Number(BigInt(key) >> 64n) - 1

/** A 96-byte signature placeholder (the deposit contract stub verifies nothing). */
const SIGNATURE = padHex('0x01', { size: 96 })

const abiAt = (contract: 'River' | 'OperatorsRegistry', version: ProtocolVersion | null): Abi =>
  protocolCode(implementationArtifact(contract, version ?? '0.4.0')).abi

/** How many validators River can fund now: the deposit buffer (before 1.0.0) or the committed balance. */
async function fundableCount(ctx: SimulationContext): Promise<bigint> {
  const river = ctx.versions.river
  const balance = (await ctx.publicClient.readContract({
    address: ctx.deployment.contracts.river,
    abi: abiAt('River', river),
    functionName: atLeast(river, '1.0.0') ? 'getCommittedBalance' : 'getBalanceToDeposit',
  })) as bigint
  const count = balance / DEPOSIT_SIZE
  return count > MAX_CL_DEPOSITS_PER_DAY ? MAX_CL_DEPOSITS_PER_DAY : count
}

/**
 * The operators the registry can fund: from 1.0.0 on, those whose stopped validators cover the exits asked
 * of them (the registry skips the others); every operator before.
 */
async function fundableOperators(ctx: SimulationContext, registryAbi: Abi): Promise<number[]> {
  const all = ctx.deployment.operators.map((_, i) => i)
  if (!atLeast(ctx.versions.operatorsRegistry, '1.0.0')) return all
  const { operatorsRegistry } = ctx.deployment.contracts
  const states = await Promise.all(
    all.map(async (i) => {
      const [operator, stopped] = await Promise.all([
        ctx.publicClient.readContract({
          address: operatorsRegistry,
          abi: registryAbi,
          functionName: 'getOperator',
          args: [BigInt(i)],
        } as never) as Promise<{ requestedExits: number }>,
        ctx.publicClient.readContract({
          address: operatorsRegistry,
          abi: registryAbi,
          functionName: 'getOperatorStoppedValidatorCount',
          args: [BigInt(i)],
        } as never) as Promise<number | bigint>,
      ])
      return BigInt(stopped) >= BigInt(operator.requestedExits)
    }),
  )
  return all.filter((i) => states[i])
}

/**
 * The keeper's transactions of a day's first block: keys and limits so that every operator can take an equal
 * share of the validators to fund, then the deposit (none when nothing can be funded).
 */
export async function protocolClDepositTxs(ctx: SimulationContext): Promise<TxRequest[]> {
  const count = await fundableCount(ctx)
  if (count === 0n) return []
  const { contracts, roles } = ctx.deployment
  const registryAbi = abiAt('OperatorsRegistry', ctx.versions.operatorsRegistry)
  const operators = await fundableOperators(ctx, registryAbi)
  if (operators.length === 0) return []
  const share = Number((count + BigInt(operators.length) - 1n) / BigInt(operators.length))
  const txs: TxRequest[] = []
  const limits: bigint[] = []
  for (const i of operators) {
    const target = (ctx.fundedKeys[i] ?? 0) + share
    const have = ctx.addedKeys[i] ?? 0
    if (have < target) {
      const keys = Array.from({ length: target - have }, (_, k) =>
        concatHex([validatorKey(i, have + k), SIGNATURE]),
      )
      txs.push(
        call(
          roles.admin,
          contracts.operatorsRegistry,
          encodeFunctionData({
            abi: registryAbi,
            functionName: 'addValidators',
            args: [BigInt(i), target - have, concatHex(keys)],
          } as never),
          GAS.admin + 120_000n * BigInt(target - have),
          `operator ${i}: ${target - have} keys`,
        ),
      )
      ctx.addedKeys[i] = target
    }
    limits.push(BigInt(Math.max(target, have)))
  }
  // the limits' snapshot is the block these transactions are mined in (keys edited in it are covered)
  const snapshot = ctx.builder.lastBlockNumber() + 1n
  txs.push(
    call(
      roles.admin,
      contracts.operatorsRegistry,
      encodeFunctionData({
        abi: registryAbi,
        functionName: 'setOperatorLimits',
        args: [operators.map(BigInt), limits, snapshot],
      } as never),
      GAS.admin + 30_000n * BigInt(operators.length),
      'operator limits',
    ),
  )
  const river = ctx.versions.river
  const riverAbi = abiAt('River', river)
  const deposit = atLeast(river, '1.2.1')
    ? call(
        roles.keeper,
        contracts.river,
        encodeFunctionData({
          abi: riverAbi,
          functionName: 'depositToConsensusLayerWithDepositRoot',
          args: [count, ZERO_ROOT],
        } as never),
        GAS.clDepositBase + 200_000n * count,
        `keeper deposits ${count} validators`,
      )
    : call(
        atLeast(river, '1.0.0') ? roles.keeper : roles.admin,
        contracts.river,
        encodeFunctionData({
          abi: riverAbi,
          functionName: 'depositToConsensusLayer',
          args: [count],
        } as never),
        GAS.clDepositBase + 200_000n * count,
        `${atLeast(river, '1.0.0') ? 'keeper' : 'admin'} deposits ${count} validators`,
      )
  txs.push(deposit)
  return txs
}
