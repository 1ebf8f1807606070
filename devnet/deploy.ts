import {
  type Abi,
  type Address,
  encodeDeployData,
  encodeFunctionData,
  getContractAddress,
  type Hex,
  type PublicClient,
  type TestClient,
  toFunctionSelector,
} from 'viem'
import { allowlistAbi } from '../chain/abi.ts'
import {
  devnetAllowlistAbi,
  devnetOperatorsRegistryAbi,
  devnetOracleAbi,
  devnetProxyAbi,
  devnetRedeemManagerAbi,
  devnetRiverAbi,
} from './abi.ts'
import { type DevRole, derivedAddress, devRoles } from './accounts.ts'
import { type BlockBuilder, createBlockBuilder, type TxRequest } from './blocks.ts'
import { type Artifacts, type ContractName, loadArtifacts } from './compile.ts'
import {
  IMPLEMENTATIONS,
  type ImplementationRecord,
  PROXIED_CONTRACTS,
  type ProtocolVersion,
  type ProxiedContract,
  type UpgradeStep,
  type VersionPlan,
  versionPlan,
} from './versions.ts'

/** Addresses of the deployed devnet contracts (the five proxied ones are their proxies). */
export interface DevnetContracts {
  river: Address
  /** in a versioned history, the address its proxy gets at the 1.0 upgrade (no code before) */
  redeemManager: Address
  allowlist: Address
  oracle: Address
  operatorsRegistry: Address
  /** the AllowlistFirewall: the Allowlist's allower and admin */
  firewall: Address
  elFeeRecipient: Address
  withdraw: Address
  depositContract: Address
  /** the ETH / USD PriceFeed (Chainlink-shaped, not a protocol contract; its owner is the admin) */
  usdPriceFeed: Address
  /** the ETH / EUR PriceFeed */
  eurPriceFeed: Address
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
  /** the versions of the history: initial version per proxy and the scheduled upgrades */
  plan: VersionPlan
  /**
   * Per proxy, every implementation it points at over the history, oldest first: the initial one (block =
   * deployBlock) and the planned ones (block null until the simulator mines the upgrade). Every
   * implementation is deployed in the deploy block.
   */
  implementations: Record<ProxiedContract, ImplementationRecord[]>
  /** the proxy admin's nonce before its first upgrade transaction (a later proxy's address derives from it) */
  proxyAdminNonce: number
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
/** Mainnet's consensus spec (frame of 225 epochs, 32 slots of 12 s, beacon genesis) and report bounds. */
const ORACLE_SPEC = [225n, 32n, 12n, 1_606_824_023n, 1000n, 500n] as const
/** The selectors the firewall's executor (the service's writer) may forward: 0.4/0.5 `allow`, 1.2.1's write. */
export const EXECUTOR_SELECTORS = [
  toFunctionSelector('function allow(address[],uint256[])'),
  toFunctionSelector(allowlistAbi.find((i) => i.type === 'function' && i.name === 'setAllowPermissions')!),
] as const

export interface DeployOptions {
  publicClient: PublicClient
  testClient: TestClient
  /** Timestamp of the deployment block (must be after the latest block). */
  timestamp: bigint
  initialFee?: number
  artifacts?: Artifacts
  /** Reuse a block builder (its nonce cache) instead of creating one. */
  builder?: BlockBuilder
  /** the versions of the history (default: `versionPlan('current')`, every proxy on 1.2.1, no upgrades) */
  plan?: VersionPlan
}

const deployData = (artifacts: Artifacts, name: ContractName, args: readonly unknown[]): Hex => {
  const artifact = artifacts.contracts[name]
  return args.length === 0
    ? artifact.bytecode
    : encodeDeployData({ abi: artifact.abi as Abi, bytecode: artifact.bytecode, args: args as unknown[] })
}

/** The implementation contract of a proxied contract's version (throws for a version it never had). */
function implementationName(contract: ProxiedContract, version: ProtocolVersion): ContractName {
  const name = IMPLEMENTATIONS[contract][version]
  if (!name) throw new Error(`${contract} has no ${version} implementation`)
  return name
}

/**
 * Deploys and wires the devnet in one block, from the admin dev account: every implementation the plan
 * needs, the proxies (River, Oracle, Allowlist, OperatorsRegistry, and the RedeemManager when it exists from the
 * start) with the proxy admin (dev account #7) and their initializers, the AllowlistFirewall (admin: the
 * simulator's allower #2, executor: the service's writer #1, allowed `allow` and `setAllowPermissions`),
 * ELFeeRecipient, Withdraw, DepositContract; then the Allowlist's denier (1.2.1), the oracle member, the keeper
 * and 5 operators. The Allowlist's admin and allower are the firewall. Last, after every protocol contract and
 * call (so their addresses do not depend on them), the ETH / USD and ETH / EUR PriceFeeds, without a round yet
 * (the simulator sets each day's prices: `priceTxs`).
 *
 * @example
 * const deployment = await deployDevnet({ publicClient, testClient, timestamp: timeline.genesisTimestamp + 12n })
 */
export async function deployDevnet(options: DeployOptions): Promise<DevnetDeployment> {
  const { publicClient } = options
  const artifacts = options.artifacts ?? loadArtifacts()
  const initialFee = options.initialFee ?? 1500
  const plan = options.plan ?? versionPlan('current')
  const roles = devRoles()
  const admin = roles.admin
  const builder = options.builder ?? (await createBlockBuilder(options))
  const [firstNonce, proxyAdminNonce] = await Promise.all([
    publicClient.getTransactionCount({ address: admin, blockTag: 'pending' }),
    publicClient.getTransactionCount({ address: roles.proxyAdmin, blockTag: 'pending' }),
  ])
  let nonce = firstNonce
  const next = () => getContractAddress({ from: admin, nonce: BigInt(nonce++) })

  // implementations: the initial versions and every version an upgrade switches to
  const wanted: { contract: ProxiedContract; version: ProtocolVersion }[] = []
  for (const contract of PROXIED_CONTRACTS) {
    const initial = plan.initial[contract]
    if (initial) wanted.push({ contract, version: initial })
  }
  for (const step of plan.upgrades) wanted.push({ contract: step.contract, version: step.version })
  const implementations = {} as Record<ProxiedContract, ImplementationRecord[]>
  for (const contract of PROXIED_CONTRACTS) implementations[contract] = []
  const implementationTxs: { name: ContractName; address: Address }[] = []
  for (const { contract, version } of wanted) {
    if (implementations[contract].some((r) => r.version === version)) continue
    const name = implementationName(contract, version)
    const address = next()
    implementationTxs.push({ name, address })
    implementations[contract].push({ version, address, block: null })
  }
  const proxied = PROXIED_CONTRACTS.filter((c) => plan.initial[c] !== null)
  const proxyAt = {} as Record<ProxiedContract, Address>
  for (const contract of proxied) proxyAt[contract] = next()
  const firewall = next()
  const elFeeRecipient = next()
  const withdraw = next()
  const depositContract = next()
  // a RedeemManager that appears later: its proxy is the proxy admin's deployment in its upgrade step
  const lateIndex = plan.upgrades.findIndex(
    (s) => s.contract === 'redeemManager' && !plan.initial.redeemManager,
  )
  proxyAt.redeemManager ??= getContractAddress({
    from: roles.proxyAdmin,
    nonce: BigInt(proxyAdminNonce + Math.max(0, lateIndex)),
  })

  const initData: Record<ProxiedContract, Hex> = {
    river: encodeFunctionData({
      abi: devnetRiverAbi,
      functionName: 'initialize',
      args: [
        admin,
        {
          allowlist: proxyAt.allowlist,
          redeemManager: plan.initial.redeemManager ? proxyAt.redeemManager : ZERO_ADDRESS,
          operatorsRegistry: proxyAt.operatorsRegistry,
          oracle: proxyAt.oracle,
          elFeeRecipient,
          withdraw,
          depositContract,
          collector: roles.collector,
          keeper: roles.keeper,
          globalFee: BigInt(initialFee),
        },
      ],
    }),
    oracle: encodeFunctionData({
      abi: devnetOracleAbi,
      functionName: 'initOracleV1',
      args: [proxyAt.river, admin, ...ORACLE_SPEC],
    }),
    allowlist: encodeFunctionData({
      abi: devnetAllowlistAbi,
      functionName: 'initAllowlistV1',
      args: [firewall, firewall],
    }),
    redeemManager: encodeFunctionData({
      abi: devnetRedeemManagerAbi,
      functionName: 'initializeRedeemManagerV1',
      args: [proxyAt.river],
    }),
    operatorsRegistry: encodeFunctionData({
      abi: devnetOperatorsRegistryAbi,
      functionName: 'initOperatorsRegistryV1',
      args: [admin, proxyAt.river],
    }),
  }
  const implementationOf = (contract: ProxiedContract, version: ProtocolVersion) =>
    implementations[contract].find((r) => r.version === version)?.address as Address

  const deploy = (name: ContractName, args: readonly unknown[], label: string): TxRequest => ({
    from: admin,
    to: null,
    data: deployData(artifacts, name, args),
    gas: DEPLOY_GAS,
    label,
  })
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
  const created: { label: string; address: Address }[] = []
  const creation = (tx: TxRequest, address: Address): TxRequest => {
    created.push({ label: tx.label, address })
    return tx
  }
  const txs: TxRequest[] = [
    ...implementationTxs.map(({ name, address }) => creation(deploy(name, [], `deploy ${name}`), address)),
    ...proxied.map((contract) =>
      creation(
        deploy(
          'TransparentProxy',
          [
            implementationOf(contract, plan.initial[contract] as ProtocolVersion),
            roles.proxyAdmin,
            initData[contract],
          ],
          `deploy ${contract} proxy`,
        ),
        proxyAt[contract],
      ),
    ),
    creation(
      deploy(
        'AllowlistFirewall',
        [roles.simulatorAllower, roles.allower, proxyAt.allowlist, EXECUTOR_SELECTORS],
        'deploy AllowlistFirewall',
      ),
      firewall,
    ),
    creation(deploy('ELFeeRecipient', [proxyAt.river], 'deploy ELFeeRecipient'), elFeeRecipient),
    creation(deploy('Withdraw', [proxyAt.river], 'deploy Withdraw'), withdraw),
    creation(deploy('DepositContract', [], 'deploy DepositContract'), depositContract),
    ...(plan.initial.allowlist === '1.2.1'
      ? [
          call(
            proxyAt.allowlist,
            encodeFunctionData({
              abi: devnetAllowlistAbi,
              functionName: 'initAllowlistV1_1',
              args: [roles.denier],
            }),
            'Allowlist.initAllowlistV1_1',
          ),
        ]
      : []),
    call(
      proxyAt.oracle,
      encodeFunctionData({ abi: devnetOracleAbi, functionName: 'addMember', args: [roles.oracleMember, 1n] }),
      'Oracle.addMember',
    ),
    call(
      proxyAt.operatorsRegistry,
      encodeFunctionData({
        abi: devnetOperatorsRegistryAbi,
        functionName: 'setKeeper',
        args: [roles.keeper],
      }),
      'OperatorsRegistry.setKeeper',
    ),
    ...operators.map((operator) =>
      call(
        proxyAt.operatorsRegistry,
        encodeFunctionData({
          abi: devnetOperatorsRegistryAbi,
          functionName: 'addOperator',
          args: [operator.name, operator.address],
        }),
        `OperatorsRegistry.addOperator ${operator.name}`,
      ),
    ),
  ]
  // the price feeds come after everything else: every address above stays what it was without them
  const feedAt = (i: number) =>
    getContractAddress({ from: admin, nonce: BigInt(firstNonce + txs.length + i) })
  const usdPriceFeed = feedAt(0)
  const eurPriceFeed = feedAt(1)
  txs.push(
    creation(deploy('PriceFeed', ['ETH / USD'], 'deploy ETH / USD PriceFeed'), usdPriceFeed),
    creation(deploy('PriceFeed', ['ETH / EUR'], 'deploy ETH / EUR PriceFeed'), eurPriceFeed),
  )
  const blocks = await builder.mine(txs, options.timestamp)
  const first = blocks[0]
  if (!first) throw new Error('deployment mined no block')
  // receipts in request order (a batch too big for one block is split over several)
  const receipts = blocks.flatMap((b) => b.receipts)
  created.forEach(({ label, address }) => {
    const deployed = receipts[txs.findIndex((tx) => tx.label === label)]?.contractAddress?.toLowerCase()
    if (deployed !== address.toLowerCase())
      throw new Error(`${label}: deployed at ${deployed}, expected ${address}`)
  })
  for (const contract of proxied) {
    const initial = implementations[contract].find((r) => r.version === plan.initial[contract])
    if (initial) initial.block = first.number
  }
  return {
    contracts: {
      river: proxyAt.river,
      redeemManager: proxyAt.redeemManager,
      allowlist: proxyAt.allowlist,
      oracle: proxyAt.oracle,
      operatorsRegistry: proxyAt.operatorsRegistry,
      firewall,
      elFeeRecipient,
      withdraw,
      depositContract,
      usdPriceFeed,
      eurPriceFeed,
    },
    roles,
    deployBlock: first.number,
    deployTimestamp: first.timestamp,
    operators,
    initialFee,
    plan,
    implementations,
    proxyAdminNonce,
  }
}

const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000' as const

/**
 * The proxy admin's transaction of one upgrade step: the proxy's deployment for a contract that does not
 * exist yet (the RedeemManager at 1.0.0, initialized and wired to River), else `upgradeToAndCall` with the new
 * version's initializer (River 1.0.0 gets the RedeemManager, Allowlist 1.2.1 the denier), or `upgradeTo` when
 * the version has none.
 *
 * @example
 * upgradeTx(deployment, { day: 7, contract: 'river', version: '0.5.0' }) // upgradeTo(RiverV0_5)
 */
export function upgradeTx(
  deployment: DevnetDeployment,
  step: UpgradeStep,
  artifacts: Artifacts = loadArtifacts(),
): TxRequest {
  const { contracts, roles, plan } = deployment
  const implementation = deployment.implementations[step.contract].find((r) => r.version === step.version)
  if (!implementation) throw new Error(`no ${step.contract} ${step.version} implementation deployed`)
  const label = `upgrade ${step.contract} to ${step.version}`
  const first = plan.upgrades.find((s) => s.contract === step.contract) === step
  if (first && plan.initial[step.contract] === null) {
    const init = encodeFunctionData({
      abi: devnetRedeemManagerAbi,
      functionName: 'initializeRedeemManagerV1',
      args: [contracts.river],
    })
    return {
      from: roles.proxyAdmin,
      to: null,
      data: deployData(artifacts, 'TransparentProxy', [implementation.address, roles.proxyAdmin, init]),
      gas: DEPLOY_GAS,
      label: `deploy ${step.contract} proxy (${step.version})`,
    }
  }
  const init = upgradeInitializer(deployment, step)
  const data = init
    ? encodeFunctionData({
        abi: devnetProxyAbi,
        functionName: 'upgradeToAndCall',
        args: [implementation.address, init],
      })
    : encodeFunctionData({ abi: devnetProxyAbi, functionName: 'upgradeTo', args: [implementation.address] })
  return { from: roles.proxyAdmin, to: contracts[step.contract], data, gas: CALL_GAS, label }
}

/** The initializer a version runs when its proxy is upgraded to it, if any. */
function upgradeInitializer(deployment: DevnetDeployment, step: UpgradeStep): Hex | undefined {
  const { contracts, roles } = deployment
  const key = `${step.contract} ${step.version}`
  switch (key) {
    case 'river 1.0.0':
      return encodeFunctionData({
        abi: devnetRiverAbi,
        functionName: 'initRiverV1_1',
        args: [
          contracts.redeemManager,
          ...ORACLE_SPEC.slice(0, 4),
          0n,
          ...ORACLE_SPEC.slice(4),
          0n,
          0n,
        ] as never,
      })
    case 'river 1.2.1':
      return encodeFunctionData({ abi: devnetRiverAbi, functionName: 'initRiverV1_2' })
    case 'oracle 1.0.0':
      return encodeFunctionData({ abi: devnetOracleAbi, functionName: 'initOracleV1_1' })
    case 'allowlist 1.2.1':
      return encodeFunctionData({
        abi: devnetAllowlistAbi,
        functionName: 'initAllowlistV1_1',
        args: [roles.denier],
      })
    case 'redeemManager 1.2.1':
      return encodeFunctionData({ abi: devnetRedeemManagerAbi, functionName: 'initializeRedeemManagerV1_2' })
    default:
      return undefined
  }
}
