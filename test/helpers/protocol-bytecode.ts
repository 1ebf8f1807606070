/**
 * The protocol's bytecode fixtures (`fixtures/protocol/<chain>/bytecode/`) for tests: read them, take a runtime
 * code from a creation code, and deploy creation codes on an anvil in one batch (every transaction sent, then
 * every receipt awaited). Tests and the local devnet only (BUSL-1.1: see fixtures/protocol/README.md).
 */
import fs from 'node:fs'
import path from 'node:path'
import {
  type Abi,
  type Address,
  createPublicClient,
  createWalletClient,
  encodeDeployData,
  type Hex,
  http,
  keccak256,
  type TransactionReceipt,
} from 'viem'
import type { BytecodeFixture, BytecodeIndex, Extracted } from '../../fixtures/protocol/extract.ts'

/** Where the fixtures are. */
export const PROTOCOL_FIXTURES = path.resolve(import.meta.dirname, '../../fixtures/protocol')

/** The chains whose deployments the fixtures keep. */
export const PROTOCOL_CHAINS = ['mainnet', 'hoodi'] as const
export type ProtocolChain = (typeof PROTOCOL_CHAINS)[number]

/** One kept creation code: its fixture and its `bytecode/index.json` entry. */
export interface BytecodeArtifact {
  chain: ProtocolChain
  /** `RiverV1_Implementation_1_2_1`, `TUPProxy`, `Firewall` */
  name: string
  fixture: BytecodeFixture
  entry: BytecodeIndex['artifacts'][string]
}

/** A fixture file's JSON. */
export function readProtocolFixture<T>(...parts: string[]): T {
  return JSON.parse(fs.readFileSync(path.join(PROTOCOL_FIXTURES, ...parts), 'utf8')) as T
}

/**
 * Every artifact of both chains, in `bytecode/index.json`'s order.
 *
 * @example
 * bytecodeArtifacts().filter((a) => a.chain === 'hoodi').length // 10
 */
export function bytecodeArtifacts(): BytecodeArtifact[] {
  return PROTOCOL_CHAINS.flatMap((chain) =>
    Object.entries(readProtocolFixture<BytecodeIndex>(chain, 'bytecode', 'index.json').artifacts).map(
      ([name, entry]) => ({
        chain,
        name,
        entry,
        fixture: readProtocolFixture<BytecodeFixture>(chain, 'bytecode', `${name}.json`),
      }),
    ),
  )
}

/** One artifact's fixture. */
export function bytecodeFixture(chain: ProtocolChain, name: string): BytecodeFixture {
  return readProtocolFixture<BytecodeFixture>(chain, 'bytecode', `${name}.json`)
}

/**
 * The runtime code of an implementation or a firewall as its deployments file has it (immutables zero): the
 * tail of its creation code, checked against the fixture's hash (mainnet's TUPProxy is not a tail: throws).
 *
 * @example
 * runtimeCodeOf('mainnet', 'RiverV1_Implementation_1_2_1').length // 2 + 2 * 22752
 */
export function runtimeCodeOf(chain: ProtocolChain, name: string): Hex {
  const fixture = bytecodeFixture(chain, name)
  const code: Hex = `0x${fixture.creation.slice(-fixture.runtimeCodeSize * 2)}`
  if (keccak256(code) !== fixture.runtimeCodeHash)
    throw new Error(`${chain} ${name}: no runtime code at its tail`)
  return code
}

/**
 * The creation transaction's data of an artifact: its creation code, followed for the TUPProxy
 * ([implementation, admin, data]) and the Firewall ([governor, executor, destination, selectors]) by `args`
 * encoded with the constructor of the deployments file it was taken from.
 */
export function creationData(chain: ProtocolChain, name: string, args: readonly unknown[] = []): Hex {
  const fixture = bytecodeFixture(chain, name)
  if (!args.length) return fixture.creation as Hex
  const abi = readProtocolFixture<Extracted>(chain, fixture.source).abi as unknown as Abi
  return encodeDeployData({ abi, bytecode: fixture.creation as Hex, args } as never)
}

/** A deployed creation code: its receipt, address and the code `eth_getCode` returns there. */
export interface Deployed {
  receipt: TransactionReceipt
  address: Address
  code: Hex
}

/** anvil's first dev account (unlocked), which deploys. */
const DEPLOYER = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266'

/**
 * Deploys creation codes on an anvil (automining) from its first dev account: sends every transaction, then
 * awaits every receipt and reads each code. Gas 29M each, under anvil's 30M block limit (River 1.0.0 needs
 * about 5.4M). Throws when one reverts.
 *
 * @example
 * const [river] = await deployCreations(anvil.rpcUrl, [creationData('mainnet', 'RiverV1_Implementation_1_2_1')])
 */
export async function deployCreations(rpcUrl: string, datas: readonly Hex[]): Promise<Deployed[]> {
  const client = createPublicClient({ transport: http(rpcUrl) })
  const wallet = createWalletClient({ account: DEPLOYER, transport: http(rpcUrl) })
  const hashes: Hex[] = []
  for (const data of datas) hashes.push(await wallet.sendTransaction({ data, gas: 29_000_000n, chain: null }))
  const receipts = await Promise.all(hashes.map((hash) => client.waitForTransactionReceipt({ hash })))
  return Promise.all(
    receipts.map(async (receipt, i) => {
      if (receipt.status !== 'success' || !receipt.contractAddress) {
        throw new Error(`creation ${i} reverted (tx ${receipt.transactionHash})`)
      }
      const address = receipt.contractAddress
      return { receipt, address, code: (await client.getCode({ address })) ?? '0x' }
    }),
  )
}
