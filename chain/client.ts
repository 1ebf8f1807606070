import {
  type Chain,
  createPublicClient,
  createWalletClient,
  defineChain,
  type Hex,
  type HttpTransport,
  http,
  type PrivateKeyAccount,
  type PublicClient,
  type WalletClient,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { hoodi, mainnet } from 'viem/chains'

/** A read client over HTTP (the only transport the service uses). */
export type ChainClient = PublicClient<HttpTransport, Chain | undefined>

/** A client that signs locally with one key and sends raw transactions over HTTP. */
export type WriteClient = WalletClient<HttpTransport, Chain, PrivateKeyAccount>

export interface ChainClientOptions {
  rpcUrl: string
  /** Chain id the node is expected to serve (gives viem the chain definition). */
  chainId?: number
  /** Per-request timeout. Default 30 000 ms (a wide `eth_getLogs` range can be slow). */
  timeoutMs?: number
  /**
   * viem's own transport retries. Default 0: `chain/` retries through `withRetry` (chain/retry.ts), which
   * knows which errors are worth it; viem's retries on top would multiply the attempts.
   */
  retryCount?: number
}

/**
 * The viem chain for an id: mainnet and hoodi as viem defines them, any other id (a devnet) as a minimal
 * chain served by `rpcUrl`.
 *
 * @example
 * chainFor(31337, 'http://127.0.0.1:8545').id // 31337
 */
export function chainFor(chainId: number, rpcUrl: string): Chain {
  if (chainId === mainnet.id) return mainnet
  if (chainId === hoodi.id) return hoodi
  return defineChain({
    id: chainId,
    name: `chain-${chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  })
}

/**
 * A viem PublicClient over the plain `http` transport: JSON-RPC batching off (one request per call, so a
 * failure hits one call), an explicit timeout, viem's retries off by default (see `retryCount`), and no cache
 * of the head: viem keeps `getBlockNumber`'s answer for its polling interval (4 s) by default, so a read "at
 * the head" could be pinned to a block from before an upgrade or a role change that is already mined.
 *
 * @example
 * const client = createChainClient({ rpcUrl: 'http://127.0.0.1:8545', chainId: 31337 })
 * await client.getBlockNumber()
 */
export function createChainClient(options: ChainClientOptions): ChainClient {
  const transport = http(options.rpcUrl, {
    batch: false,
    timeout: options.timeoutMs ?? 30_000,
    retryCount: options.retryCount ?? 0,
  })
  if (options.chainId === undefined) return createPublicClient({ transport, cacheTime: 0 })
  return createPublicClient({ chain: chainFor(options.chainId, options.rpcUrl), transport, cacheTime: 0 })
}

export interface WriteClientOptions {
  rpcUrl: string
  /** 0x-prefixed 32-byte key of the sender (the allowlist's allower). Never logged. */
  privateKey: Hex
  /**
   * Chain id the transactions are signed for (EIP-155). viem does not ask the node before signing with a local
   * account: the doctor's chain id check runs at startup (`chain/doctor.ts`).
   */
  chainId: number
  /** Per-request timeout. Default 30 000 ms. */
  timeoutMs?: number
  /** viem's own transport retries. Default 0 (the allowlist writer decides what to retry). */
  retryCount?: number
}

/**
 * A viem WalletClient with a local account (privateKeyToAccount): transactions are signed in-process and
 * sent with `eth_sendRawTransaction`, so the node never holds the key.
 *
 * @example
 * const wallet = createWriteClient({ rpcUrl, privateKey: '0x59c6...', chainId: 31337 })
 * await wallet.writeContract({ address, abi: allowlistAbi, functionName: 'setAllowPermissions', args })
 */
export function createWriteClient(options: WriteClientOptions): WriteClient {
  return createWalletClient({
    account: privateKeyToAccount(options.privateKey),
    chain: chainFor(options.chainId, options.rpcUrl),
    transport: http(options.rpcUrl, {
      batch: false,
      timeout: options.timeoutMs ?? 30_000,
      retryCount: options.retryCount ?? 0,
    }),
  })
}
