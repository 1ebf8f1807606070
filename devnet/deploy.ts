import {
  type Abi,
  type Address,
  encodeDeployData,
  encodeFunctionData,
  getContractAddress,
  type Hex,
  type PublicClient,
  type TestClient,
} from 'viem'
import { devnetAllowlistAbi, devnetOperatorsRegistryAbi, devnetOracleAbi, devnetRiverAbi } from './abi.ts'
import { type DevRole, derivedAddress, devRoles } from './accounts.ts'
import { type BlockBuilder, createBlockBuilder, type TxRequest } from './blocks.ts'
import { type Artifacts, type ContractName, loadArtifacts } from './compile.ts'

/** Addresses of the deployed devnet contracts. */
export interface DevnetContracts {
  river: Address
  redeemManager: Address
  allowlist: Address
  oracle: Address
  operatorsRegistry: Address
  elFeeRecipient: Address
  withdraw: Address
  depositContract: Address
}

export interface DevnetDeployment {
  contracts: DevnetContracts
  /** dev account address of each role (see accounts.ts) */
  roles: Record<DevRole, Address>
  /** the block holding every deployment and wiring transaction */
  deployBlock: bigint
  deployTimestamp: bigint
  operators: { name: string; address: Address }[]
  /** fee in basis points set at deployment */
  initialFee: number
}

/** Node operators registered at deployment (fictional names). */
export const DEVNET_OPERATOR_NAMES = [
  'Alder Staking',
  'Birch Validators',
  'Cedar Nodes',
  'Dogwood Infrastructure',
  'Elm Consensus',
] as const

const DEPLOY_GAS = 8_000_000n
const CALL_GAS = 500_000n
/** keys (and staking limit) given to each devnet operator */
const OPERATOR_KEY_COUNT = 1_000_000

export interface DeployOptions {
  publicClient: PublicClient
  testClient: TestClient
  /** Timestamp of the deployment block (must be after the latest block). */
  timestamp: bigint
  initialFee?: number
  artifacts?: Artifacts
  /** Reuse a block builder (its nonce cache) instead of creating one. */
  builder?: BlockBuilder
}

/**
 * Deploys and wires the devnet contracts in one block, from the admin dev account: Allowlist, River,
 * RedeemManager, OperatorsRegistry (5 operators), Oracle, ELFeeRecipient, Withdraw, DepositContract; then
 * River.initialize (fee 1500 bps), the allowers (service and simulator), the denier, the oracle member and
 * the keeper.
 *
 * @example
 * const deployment = await deployDevnet({ publicClient, testClient, timestamp: timeline.genesisTimestamp + 12n })
 */
export async function deployDevnet(options: DeployOptions): Promise<DevnetDeployment> {
  const { publicClient } = options
  const artifacts = options.artifacts ?? loadArtifacts()
  const initialFee = options.initialFee ?? 1500
  const roles = devRoles()
  const admin = roles.admin
  const builder = options.builder ?? (await createBlockBuilder(options))
  const firstNonce = await publicClient.getTransactionCount({ address: admin, blockTag: 'pending' })
  const order: ContractName[] = [
    'Allowlist',
    'River',
    'RedeemManager',
    'OperatorsRegistry',
    'Oracle',
    'ELFeeRecipient',
    'Withdraw',
    'DepositContract',
  ]
  const at = Object.fromEntries(
    order.map((name, i) => [name, getContractAddress({ from: admin, nonce: BigInt(firstNonce + i) })]),
  ) as Record<ContractName, Address>
  const constructorArgs: Record<ContractName, readonly unknown[]> = {
    Allowlist: [admin],
    River: [admin],
    RedeemManager: [at.River],
    OperatorsRegistry: [admin, at.River],
    Oracle: [admin, at.River],
    ELFeeRecipient: [at.River],
    Withdraw: [at.River],
    DepositContract: [],
  }
  const deploy = (name: ContractName): TxRequest => {
    const artifact = artifacts.contracts[name]
    const args = constructorArgs[name]
    const data =
      args.length === 0
        ? artifact.bytecode
        : encodeDeployData({ abi: artifact.abi as Abi, bytecode: artifact.bytecode, args: args as unknown[] })
    return { from: admin, to: null, data, gas: DEPLOY_GAS, label: `deploy ${name}` }
  }
  const call = (to: Address, data: Hex, label: string): TxRequest => ({
    from: admin,
    to,
    data,
    gas: CALL_GAS,
    label,
  })
  const operators = DEVNET_OPERATOR_NAMES.map((name, i) => ({
    name,
    address: derivedAddress('operators', 'operator', i),
  }))
  const txs: TxRequest[] = [
    ...order.map(deploy),
    call(
      at.River,
      encodeFunctionData({
        abi: devnetRiverAbi,
        functionName: 'initialize',
        args: [
          {
            allowlist: at.Allowlist,
            redeemManager: at.RedeemManager,
            operatorsRegistry: at.OperatorsRegistry,
            oracle: at.Oracle,
            elFeeRecipient: at.ELFeeRecipient,
            withdraw: at.Withdraw,
            depositContract: at.DepositContract,
            collector: roles.collector,
            keeper: roles.keeper,
            globalFee: BigInt(initialFee),
          },
        ],
      }),
      'River.initialize',
    ),
    ...[roles.allower, roles.simulatorAllower].map((allower) =>
      call(
        at.Allowlist,
        encodeFunctionData({ abi: devnetAllowlistAbi, functionName: 'setAllower', args: [allower, true] }),
        'Allowlist.setAllower',
      ),
    ),
    call(
      at.Allowlist,
      encodeFunctionData({ abi: devnetAllowlistAbi, functionName: 'setDenier', args: [roles.denier] }),
      'Allowlist.setDenier',
    ),
    call(
      at.Oracle,
      encodeFunctionData({ abi: devnetOracleAbi, functionName: 'addMember', args: [roles.oracleMember] }),
      'Oracle.addMember',
    ),
    call(
      at.OperatorsRegistry,
      encodeFunctionData({
        abi: devnetOperatorsRegistryAbi,
        functionName: 'setKeeper',
        args: [roles.keeper],
      }),
      'OperatorsRegistry.setKeeper',
    ),
    ...operators.map((operator) =>
      call(
        at.OperatorsRegistry,
        encodeFunctionData({
          abi: devnetOperatorsRegistryAbi,
          functionName: 'addOperator',
          args: [operator.name, operator.address, OPERATOR_KEY_COUNT],
        }),
        `OperatorsRegistry.addOperator ${operator.name}`,
      ),
    ),
  ]
  const blocks = await builder.mine(txs, options.timestamp)
  const first = blocks[0]
  if (!first) throw new Error('deployment mined no block')
  const deployed = first.receipts.slice(0, order.length).map((r) => r.contractAddress?.toLowerCase())
  order.forEach((name, i) => {
    if (deployed[i] !== at[name].toLowerCase())
      throw new Error(`${name} deployed at ${deployed[i]}, expected ${at[name]}`)
  })
  return {
    contracts: {
      river: at.River,
      redeemManager: at.RedeemManager,
      allowlist: at.Allowlist,
      oracle: at.Oracle,
      operatorsRegistry: at.OperatorsRegistry,
      elFeeRecipient: at.ELFeeRecipient,
      withdraw: at.Withdraw,
      depositContract: at.DepositContract,
    },
    roles,
    deployBlock: first.number,
    deployTimestamp: first.timestamp,
    operators,
    initialFee,
  }
}
