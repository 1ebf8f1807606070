/**
 * The deploy block's plan, worked out without the chain: the address every creation lands at (from the
 * admin's nonce), the initializers, and the transactions in the order `deployDevnet` (deploy.ts) sends them.
 */
import {
  type Abi,
  type Address,
  encodeDeployData,
  encodeFunctionData,
  getContractAddress,
  type Hex,
  toFunctionSelector,
} from 'viem'
import { allowlistAbi } from '../chain/abi.ts'
import { ZERO_ADDRESS } from '../common/address.ts'
import {
  devnetAllowlistAbi,
  devnetOperatorsRegistryAbi,
  devnetOracleAbi,
  devnetRedeemManagerAbi,
  devnetRiverAbi,
} from './abi.ts'
import { type DevRole, derivedAddress } from './accounts.ts'
import type { TxRequest } from './blocks.ts'
import type { Artifacts, ContractName } from './compile.ts'
import {
  IMPLEMENTATIONS,
  type ImplementationRecord,
  PROXIED_CONTRACTS,
  type ProtocolVersion,
  type ProxiedContract,
  type VersionPlan,
} from './versions.ts'

/** Node operators registered at deployment (fictional names). */
export const DEVNET_OPERATOR_NAMES = [
  'Alder Staking',
  'Birch Validators',
  'Cedar Nodes',
  'Dogwood Infrastructure',
  'Elm Consensus',
] as const

/** Gas limit of a contract creation sent by the deployment or an upgrade. */
export const DEPLOY_GAS = 8_000_000n
/** Gas limit of a wiring or upgrade call. */
export const CALL_GAS = 500_000n
/** Mainnet's consensus spec (frame of 225 epochs, 32 slots of 12 s, beacon genesis) and report bounds. */
export const ORACLE_SPEC = [225n, 32n, 12n, 1_606_824_023n, 1000n, 500n] as const
/** The selectors the firewall's executor (the service's writer) may forward: 0.4/0.5 `allow`, 1.2.1's write. */
export const EXECUTOR_SELECTORS = [
  toFunctionSelector('function allow(address[],uint256[])'),
  toFunctionSelector(allowlistAbi.find((i) => i.type === 'function' && i.name === 'setAllowPermissions')!),
] as const

/**
 * The creation code of a contract with its constructor arguments (the bare bytecode when it takes none).
 *
 * @example
 * deployData(artifacts, 'Withdraw', [river]) // bytecode ++ abi-encoded river
 */
export const deployData = (artifacts: Artifacts, name: ContractName, args: readonly unknown[]): Hex => {
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

/** Where the deploy block's protocol contracts land (the price feeds aside: `priceFeedCreations`). */
export interface DeployLayout {
  /** per proxy, every implementation it points at over the history (block null until mined) */
  implementations: Record<ProxiedContract, ImplementationRecord[]>
  /** the implementation contracts to deploy, in nonce order */
  implementationTxs: { name: ContractName; address: Address }[]
  /** the proxies deployed in the deploy block (a RedeemManager that appears later is not one of them) */
  proxied: ProxiedContract[]
  /** every proxy's address, the later RedeemManager's included */
  proxyAt: Record<ProxiedContract, Address>
  firewall: Address
  elFeeRecipient: Address
  withdraw: Address
  depositContract: Address
}

/** A contract creation and the address it must land at. */
export interface Creation {
  tx: TxRequest
  address: Address
}

/**
 * The implementations to deploy, once each: the initial versions, then every version an upgrade switches to,
 * each at the next of the admin's addresses (`next`).
 */
function planImplementations(
  plan: VersionPlan,
  next: () => Address,
): Pick<DeployLayout, 'implementations' | 'implementationTxs'> {
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
  return { implementations, implementationTxs }
}

/**
 * The addresses of the deploy block, in the admin's nonce order from `firstNonce`: the implementations, the
 * initial proxies, the firewall, ELFeeRecipient, Withdraw, DepositContract. A RedeemManager that appears
 * later gets the proxy admin's address at its upgrade step (from `proxyAdminNonce`).
 *
 * @example
 * planLayout(versionPlan('current'), devRoles(), 0, 0).proxyAt.river
 */
export function planLayout(
  plan: VersionPlan,
  roles: Record<DevRole, Address>,
  firstNonce: number,
  proxyAdminNonce: number,
): DeployLayout {
  let nonce = firstNonce
  const next = () => getContractAddress({ from: roles.admin, nonce: BigInt(nonce++) })
  const { implementations, implementationTxs } = planImplementations(plan, next)
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
  return {
    implementations,
    implementationTxs,
    proxied,
    proxyAt,
    firewall,
    elFeeRecipient,
    withdraw,
    depositContract,
  }
}

/** The calldata each proxy runs at its deployment: the initializer of its initial version. */
function initializers(
  plan: VersionPlan,
  roles: Record<DevRole, Address>,
  layout: DeployLayout,
  initialFee: number,
): Record<ProxiedContract, Hex> {
  const { proxyAt, firewall } = layout
  return {
    river: encodeFunctionData({
      abi: devnetRiverAbi,
      functionName: 'initialize',
      args: [
        roles.admin,
        {
          allowlist: proxyAt.allowlist,
          redeemManager: plan.initial.redeemManager ? proxyAt.redeemManager : ZERO_ADDRESS,
          operatorsRegistry: proxyAt.operatorsRegistry,
          oracle: proxyAt.oracle,
          elFeeRecipient: layout.elFeeRecipient,
          withdraw: layout.withdraw,
          depositContract: layout.depositContract,
          collector: roles.collector,
          keeper: roles.keeper,
          globalFee: BigInt(initialFee),
        },
      ],
    }),
    oracle: encodeFunctionData({
      abi: devnetOracleAbi,
      functionName: 'initOracleV1',
      args: [proxyAt.river, roles.admin, ...ORACLE_SPEC],
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
      args: [roles.admin, proxyAt.river],
    }),
  }
}

/** The admin's transactions of the deploy block: a contract creation and a call, with their gas limits. */
export interface AdminRequests {
  deploy(name: ContractName, args: readonly unknown[], label: string): TxRequest
  call(to: Address, data: Hex, label: string): TxRequest
}

/**
 * The admin's transaction builders over the compiled artifacts.
 *
 * @example
 * adminRequests(artifacts, roles.admin).deploy('DepositContract', [], 'deploy DepositContract')
 */
export function adminRequests(artifacts: Artifacts, admin: Address): AdminRequests {
  return {
    deploy: (name, args, label) => ({
      from: admin,
      to: null,
      data: deployData(artifacts, name, args),
      gas: DEPLOY_GAS,
      label,
    }),
    call: (to, data, label) => ({ from: admin, to, data, gas: CALL_GAS, label }),
  }
}

/**
 * The protocol's creations in nonce order (the layout's): every implementation, the initial proxies with the
 * proxy admin and their initializers, the AllowlistFirewall (admin: the simulator's allower, executor: the
 * service's writer), ELFeeRecipient, Withdraw, DepositContract.
 */
export function protocolCreations(
  requests: AdminRequests,
  plan: VersionPlan,
  roles: Record<DevRole, Address>,
  layout: DeployLayout,
  initialFee: number,
): Creation[] {
  const { deploy } = requests
  const { implementations, proxyAt } = layout
  const initData = initializers(plan, roles, layout, initialFee)
  const implementationOf = (contract: ProxiedContract, version: ProtocolVersion) =>
    implementations[contract].find((r) => r.version === version)?.address as Address
  return [
    ...layout.implementationTxs.map(({ name, address }) => ({
      tx: deploy(name, [], `deploy ${name}`),
      address,
    })),
    ...layout.proxied.map((contract) => ({
      tx: deploy(
        'TransparentProxy',
        [
          implementationOf(contract, plan.initial[contract] as ProtocolVersion),
          roles.proxyAdmin,
          initData[contract],
        ],
        `deploy ${contract} proxy`,
      ),
      address: proxyAt[contract],
    })),
    {
      tx: deploy(
        'AllowlistFirewall',
        [roles.simulatorAllower, roles.allower, proxyAt.allowlist, EXECUTOR_SELECTORS],
        'deploy AllowlistFirewall',
      ),
      address: layout.firewall,
    },
    {
      tx: deploy('ELFeeRecipient', [proxyAt.river], 'deploy ELFeeRecipient'),
      address: layout.elFeeRecipient,
    },
    { tx: deploy('Withdraw', [proxyAt.river], 'deploy Withdraw'), address: layout.withdraw },
    { tx: deploy('DepositContract', [], 'deploy DepositContract'), address: layout.depositContract },
  ]
}

/** The node operators registered at deployment: their names and derived addresses. */
export function devnetOperators(): { name: string; address: Address }[] {
  return DEVNET_OPERATOR_NAMES.map((name, i) => ({
    name,
    address: derivedAddress('operators', 'operator', i),
  }))
}

/**
 * The wiring calls after the creations: the Allowlist's denier (1.2.1 only), the oracle member, the keeper,
 * then one `addOperator` per operator.
 */
export function wiringCalls(
  requests: AdminRequests,
  plan: VersionPlan,
  roles: Record<DevRole, Address>,
  proxyAt: Record<ProxiedContract, Address>,
  operators: { name: string; address: Address }[],
): TxRequest[] {
  const { call } = requests
  return [
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
}

/**
 * The ETH / USD then ETH / EUR PriceFeeds (no round yet), at the admin's nonces from `nonce`: sent after every
 * other transaction of the deploy block, so no address above depends on them.
 */
export function priceFeedCreations(
  requests: AdminRequests,
  admin: Address,
  nonce: number,
): { usd: Creation; eur: Creation } {
  const feedAt = (i: number) => getContractAddress({ from: admin, nonce: BigInt(nonce + i) })
  return {
    usd: {
      tx: requests.deploy('PriceFeed', ['ETH / USD'], 'deploy ETH / USD PriceFeed'),
      address: feedAt(0),
    },
    eur: {
      tx: requests.deploy('PriceFeed', ['ETH / EUR'], 'deploy ETH / EUR PriceFeed'),
      address: feedAt(1),
    },
  }
}
