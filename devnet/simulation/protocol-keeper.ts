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
/** Validator keys per `addValidators` transaction, and the gas each key is given (six slots and calldata). */
const KEYS_PER_TX = 100
const GAS_PER_KEY = 200_000n
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

/** What a keeper's deposit needs to know: the deployment, the versions in force, the keys so far. */
export interface KeeperState {
  deployment: Pick<SimulationContext['deployment'], 'contracts' | 'roles'>
  versions: Pick<SimulationContext['versions'], 'river' | 'operatorsRegistry'>
  /** per operator: keys funded so far */
  fundedKeys: number[]
  /** per operator: keys added so far (updated by this function) */
  addedKeys: number[]
}

/**
 * Keys and limits so that each of `operators` can take an equal share of `count` validators, then the deposit
 * call of the River version in force, to be mined in the block after `lastBlock` (the limits' snapshot).
 *
 * @example
 * keeperDepositTxs(state, [0, 1, 2, 3, 4], 10n, builder.lastBlockNumber())
 */
export function keeperDepositTxs(
  state: KeeperState,
  operators: readonly number[],
  count: bigint,
  lastBlock: bigint,
): TxRequest[] {
  const { contracts, roles } = state.deployment
  const registryAbi = abiAt('OperatorsRegistry', state.versions.operatorsRegistry)
  const share = Number((count + BigInt(operators.length) - 1n) / BigInt(operators.length))
  const txs: TxRequest[] = []
  const limits: bigint[] = []
  for (const i of operators) {
    const target = (state.fundedKeys[i] ?? 0) + share
    const have = state.addedKeys[i] ?? 0
    // the keys in transactions of at most KEYS_PER_TX (each key takes six storage slots)
    for (let from = have; from < target; from += KEYS_PER_TX) {
      const count = Math.min(KEYS_PER_TX, target - from)
      const keys = Array.from({ length: count }, (_, k) => concatHex([validatorKey(i, from + k), SIGNATURE]))
      txs.push(
        call(
          roles.admin,
          contracts.operatorsRegistry,
          encodeFunctionData({
            abi: registryAbi,
            functionName: 'addValidators',
            args: [BigInt(i), count, concatHex(keys)],
          } as never),
          GAS.admin + GAS_PER_KEY * BigInt(count),
          `operator ${i}: ${count} keys`,
        ),
      )
    }
    if (have < target) state.addedKeys[i] = target
    limits.push(BigInt(Math.max(target, have)))
  }
  // the limits' snapshot is the block these transactions are mined in (keys edited in it are covered)
  txs.push(
    call(
      roles.admin,
      contracts.operatorsRegistry,
      encodeFunctionData({
        abi: registryAbi,
        functionName: 'setOperatorLimits',
        args: [operators.map(BigInt), limits, lastBlock + 1n],
      } as never),
      GAS.admin + 30_000n * BigInt(operators.length),
      'operator limits',
    ),
  )
  txs.push(depositCall(state, count))
  return txs
}

/** The deposit call of the River version in force (see the file's comment). */
function depositCall(state: KeeperState, count: bigint): TxRequest {
  const { contracts, roles } = state.deployment
  const river = state.versions.river
  const riverAbi = abiAt('River', river)
  const gas = GAS.clDepositBase + 200_000n * count
  if (atLeast(river, '1.2.1')) {
    return call(
      roles.keeper,
      contracts.river,
      encodeFunctionData({
        abi: riverAbi,
        functionName: 'depositToConsensusLayerWithDepositRoot',
        args: [count, ZERO_ROOT],
      } as never),
      gas,
      `keeper deposits ${count} validators`,
    )
  }
  const sender = atLeast(river, '1.0.0') ? 'keeper' : 'admin'
  return call(
    roles[sender],
    contracts.river,
    encodeFunctionData({ abi: riverAbi, functionName: 'depositToConsensusLayer', args: [count] } as never),
    gas,
    `${sender} deposits ${count} validators`,
  )
}

/**
 * The keeper's transactions of a day's first block: keys and limits so that every operator the registry can
 * fund takes an equal share of the validators to fund, then the deposit (none when nothing can be funded).
 */
export async function protocolClDepositTxs(ctx: SimulationContext): Promise<TxRequest[]> {
  const count = await fundableCount(ctx)
  if (count === 0n) return []
  const registryAbi = abiAt('OperatorsRegistry', ctx.versions.operatorsRegistry)
  const operators = await fundableOperators(ctx, registryAbi)
  if (operators.length === 0) return []
  return keeperDepositTxs(ctx, operators, count, ctx.builder.lastBlockNumber())
}
