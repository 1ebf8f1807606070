import type { Hex } from 'viem'
import { type Address, decodedAddress, toAddress } from '../common/address.ts'
import { EIP1967_IMPLEMENTATION_SLOT } from './abi.ts'

/** The protocol's proxied contracts, by the names of their deployment files. */
export type ProtocolContract = 'River' | 'Oracle' | 'Allowlist' | 'RedeemManager' | 'OperatorsRegistry'

/** One deployed implementation of a proxied contract. */
export interface KnownImplementation {
  /** a ProtocolContract on mainnet and hoodi; whatever name a devnet publishes otherwise */
  contract: string
  /** x.y.z, as the deployment file names it */
  version: string
  address: Address
  /**
   * The published tables: the block of its deployment (not of the proxy's upgrade to it). A devnet's history:
   * the block its proxy switched to it. Null when the source does not say (an upgrade not mined yet).
   */
  block: bigint | null
}

function impl(
  contract: ProtocolContract,
  version: string,
  address: string,
  block: bigint,
): KnownImplementation {
  return { contract, version, address: toAddress(address, `${contract} ${version}`), block }
}

/**
 * Every implementation deployed for the protocol's proxies, by chain id, from the protocol's deployment files
 * (fixtures/protocol/<chain>/index.json; `chain/versions.test.ts` keeps them equal). OperatorsRegistry 1.0.1
 * was deployed twice on mainnet; both addresses are listed.
 */
export const IMPLEMENTATIONS: Readonly<Record<number, readonly KnownImplementation[]>> = {
  1: [
    impl('River', '0.4.0', '0x660bD93e6C149E2e0Af1963E2bDF362087792824', 15_676_401n),
    impl('River', '0.5.0', '0x179D669aC78896f970040E57cb297582b50DE4F2', 16_096_808n),
    impl('River', '1.0.0', '0xeB6e193B9b9f0D677890F7B614283e45adf37874', 17_372_117n),
    impl('River', '1.0.1', '0x48D93d8C45Fb25125F13cdd40529BbeaA97A6565', 17_720_548n),
    impl('River', '1.2.1', '0x34E4617764cc94620170aA0e6652AD328D196D58', 21_128_374n),
    impl('Oracle', '0.4.0', '0x7E49eB4699313Ae05009B98672bCd7c9Ca55F2e0', 15_676_404n),
    impl('Oracle', '1.0.0', '0x485ade5B7f66ECcaD4583862bc5c2Aa838720aA0', 17_372_115n),
    impl('Oracle', '1.2.1', '0x51e09Ed43F5658A77428E6419aea83D769C9B2fd', 21_128_370n),
    impl('Allowlist', '0.4.0', '0x8892dAf1FcD24B2e8A3c6194d297Aaab04E493f2', 15_676_396n),
    impl('Allowlist', '0.5.0', '0xCfa8cf872f0B8cE15C175a8eB13688D5c69E9CEe', 16_096_807n),
    impl('Allowlist', '1.2.1', '0x9C07cd07cc097EAD6ebd7f7d17E6B38ff08E3B5C', 21_122_547n),
    impl('RedeemManager', '1.0.0', '0x3fe10fd2ce1F492Ede1266a50f6451bC1D8AF9b0', 17_371_892n),
    impl('RedeemManager', '1.1.0', '0x423CE5282c460EED5FE0786B4D47d2c2a4Ef3721', 18_283_674n),
    impl('RedeemManager', '1.2.1', '0x4FB46D0b7668Fc5EE27a37979579a3C254C70F54', 21_128_372n),
    impl('OperatorsRegistry', '0.4.0', '0xC92a612eC60a8E948d6677cD0E6F836145679705', 15_676_408n),
    impl('OperatorsRegistry', '1.0.0', '0x7ADbc0BD23aB71b1dC8C946C0550fF87c9841008', 17_372_023n),
    impl('OperatorsRegistry', '1.0.1', '0xB54CDB51e2B86C7f37b35558eed87e6206457A98', 17_721_008n),
    impl('OperatorsRegistry', '1.0.1', '0x72662E4da74278430123cE51405c1e7A1B87C294', 18_283_166n),
    impl('OperatorsRegistry', '1.1.0', '0x99Dd9F8D3a62cb416f6ef5ABBC90185c4162f8d0', 18_283_673n),
    impl('OperatorsRegistry', '1.2.1', '0x4cF3341E1BE254C5229e8bcd05B8233a2b60940A', 21_128_367n),
  ],
  560048: [
    impl('River', '1.2.1', '0xfa5270E35C00b4e6F642493705B9d3AD3Ca893D8', 307_754n),
    impl('Oracle', '1.2.1', '0x424107De8eFA9718e3f427D01A75167644dF8ECD', 307_763n),
    impl('Allowlist', '1.2.1', '0xB10788719333cDe41519694CA1Fd08866a9e46F5', 307_744n),
    impl('RedeemManager', '1.2.1', '0x770604A7c8423d82a28c52F7ba77f981E7302AAC', 307_782n),
    impl('OperatorsRegistry', '1.2.1', '0x7572eF956eE783a1E19A4458379A633CdA30C704', 307_771n),
  ],
}

/**
 * The contract and version of an implementation address: from the chain's published table, or from `extra`
 * (a devnet's own history, see `implementationsFromDevnet`). Undefined when neither knows it.
 *
 * @example
 * knownVersion(1, '0x34E4617764cc94620170aA0e6652AD328D196D58') // {contract: 'River', version: '1.2.1', ...}
 */
export function knownVersion(
  chainId: number,
  address: string,
  extra: readonly KnownImplementation[] = [],
): KnownImplementation | undefined {
  const wanted = address.toLowerCase()
  return [...(IMPLEMENTATIONS[chainId] ?? []), ...extra].find((i) => i.address === wanted)
}

/** The service's key of each proxied contract (`ChainContracts`, devnet.json) -> its protocol name. */
export const PROTOCOL_CONTRACT_OF = {
  river: 'River',
  redeemManager: 'RedeemManager',
  allowlist: 'Allowlist',
  oracle: 'Oracle',
  operatorsRegistry: 'OperatorsRegistry',
} as const satisfies Record<string, ProtocolContract>

/** The service's key of a proxied contract. */
export type ProxiedContractKey = keyof typeof PROTOCOL_CONTRACT_OF

/** A devnet's published implementation history: `devnet.json` `implementations`. */
export type DevnetImplementations = Record<
  string,
  readonly { version: string; address: string; block?: number | string | null }[]
>

/**
 * The implementations a devnet publishes in `devnet.json` (`implementations: {river: [{version, address,
 * block}]}`), as a table for `knownVersion`'s `extra`.
 *
 * @example
 * implementationsFromDevnet({ river: [{ version: '1.2.1', address: '0xabc...', block: 3 }] })[0].contract // 'River'
 */
export function implementationsFromDevnet(raw: DevnetImplementations | undefined): KnownImplementation[] {
  return Object.entries(raw ?? {}).flatMap(([key, list]) =>
    list.map((entry) => ({
      contract: PROTOCOL_CONTRACT_OF[key as ProxiedContractKey] ?? key,
      version: entry.version,
      address: toAddress(entry.address, `implementations.${key}`),
      block: entry.block === undefined || entry.block === null ? null : BigInt(entry.block),
    })),
  )
}

/** What `implementationAt` needs of a viem client. */
export interface StorageReader {
  getStorageAt(args: { address: Address; slot: Hex; blockNumber?: bigint }): Promise<Hex | undefined>
}

/**
 * The implementation behind an EIP-1967 proxy (its implementation slot), at a block or at the head; null when
 * the slot is empty (not an EIP-1967 proxy, or no code there).
 *
 * @example
 * await implementationAt(client, contracts.river) // '0x34e4617764cc94620170aa0e6652ad328d196d58'
 */
export async function implementationAt(
  client: StorageReader,
  proxy: Address,
  blockNumber?: bigint,
): Promise<Address | null> {
  const word = await client.getStorageAt({
    address: proxy,
    slot: EIP1967_IMPLEMENTATION_SLOT,
    ...(blockNumber === undefined ? {} : { blockNumber }),
  })
  if (!word || /^0x0*$/.test(word)) return null
  return decodedAddress(`0x${word.slice(2).padStart(64, '0').slice(24)}`)
}
