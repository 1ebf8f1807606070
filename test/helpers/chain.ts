import { type Address, createWalletClient, encodeFunctionData, type Hex, http as viemHttp } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { allowlistAbi, PERMISSION } from '../../chain/abi.ts'
import { createChainClient, createWriteClient } from '../../chain/client.ts'
import { createLogFetcher } from '../../chain/log-fetcher.ts'
import { setupFromDevnet } from '../../cli/chain-setup.ts'
import { createLogger, type Logger } from '../../common/logger.ts'
import type { Db } from '../../db/index.ts'
import { EVENT_TABLES } from '../../db/repos/chain.ts'
import { type DevRole, devAccount } from '../../devnet/accounts.ts'
import type { DevnetHandle } from '../../devnet/index.ts'
import { createAllowlistWriter } from '../../jobs/allowlist-writer.ts'
import { createFollower } from '../../jobs/follower/index.ts'
import { createInlineRunner } from '../../jobs/runner.ts'

/** A follower over `rpcUrl` reading the devnet's contracts into `db`. */
export function devnetFollower(db: Db, devnet: DevnetHandle, rpcUrl = devnet.rpcUrl, confirmations = 0) {
  const client = createChainClient({ rpcUrl, chainId: devnet.chainId })
  return createFollower({
    db,
    client,
    fetcher: createLogFetcher({ client, baseDelayMs: 20, maxDelayMs: 200 }),
    chainId: devnet.chainId,
    contracts: setupFromDevnet(devnet).contracts,
    confirmations,
    logger: createLogger({ level: 'silent' }),
  })
}

/**
 * The service's allowlist writer for the devnet's Allowlist, signing as its allower, over `rpcUrl` (the
 * devnet's own, or a faulty proxy in front of it); silent unless a logger is given.
 */
export function devnetAllowlistWriter(
  db: Db,
  devnet: DevnetHandle,
  options: { rpcUrl?: string; batchSize?: number; receiptTimeoutMs?: number; logger?: Logger } = {},
) {
  const rpcUrl = options.rpcUrl ?? devnet.rpcUrl
  return createAllowlistWriter({
    db,
    client: createChainClient({ rpcUrl, chainId: devnet.chainId }),
    wallet: createWriteClient({ rpcUrl, privateKey: devnet.allowerPrivateKey, chainId: devnet.chainId }),
    allowlist: devnet.contracts.allowlist as Address,
    logger: options.logger ?? createLogger({ level: 'silent' }),
    ...(options.batchSize !== undefined ? { batchSize: options.batchSize } : {}),
    receiptTimeoutMs: options.receiptTimeoutMs ?? 10_000,
    receiptPollMs: 100,
  })
}

/**
 * An inline runner that runs the allowlist writer and the follower every `everyMs` (default 150 ms), started;
 * the caller closes it.
 */
export async function runWriterAndFollower(
  writer: { runOnce(): Promise<unknown> },
  follower: { syncOnce(): Promise<unknown> },
  logger: Logger,
  everyMs = 150,
) {
  const runner = createInlineRunner(
    {
      allowlist: async () => {
        await writer.runOnce()
      },
      sync: async () => {
        await follower.syncOnce()
      },
    },
    logger,
  )
  await runner.start()
  await runner.every('allowlist', everyMs)
  await runner.every('sync', everyMs)
  return runner
}

/** Every indexed row of every event table, in key order (for exact comparisons between databases). */
export async function dumpEvents(db: Db): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {}
  for (const table of EVENT_TABLES) {
    out[table] = await db(table)
      .select('*')
      .orderBy(
        ['block_number', 'log_index'].concat(
          table === 'allowlist_permissions'
            ? ['position']
            : table === 'report_operators'
              ? ['operator_index']
              : [],
        ),
      )
  }
  return out
}

/**
 * Sends `data` (an encoded Allowlist call) to the devnet's Allowlist from the dev account of `role`; returns the
 * mined transaction's receipt status.
 */
export async function sendToAllowlist(
  devnet: DevnetHandle,
  role: DevRole,
  data: Hex,
): Promise<'success' | 'reverted'> {
  return sendFrom(devnet, role, devnet.contracts.allowlist as Address, data)
}

/** Sends `data` to the devnet's AllowlistFirewall from a dev role; returns the mined transaction's receipt status. */
export async function sendToFirewall(
  devnet: DevnetHandle,
  role: DevRole,
  data: Hex,
): Promise<'success' | 'reverted'> {
  return sendFrom(devnet, role, devnet.firewall as Address, data)
}

async function sendFrom(
  devnet: DevnetHandle,
  role: DevRole,
  to: Address,
  data: Hex,
): Promise<'success' | 'reverted'> {
  const wallet = createWalletClient({
    account: privateKeyToAccount(devAccount(role).privateKey),
    transport: viemHttp(devnet.rpcUrl),
  })
  const hash = await wallet.sendTransaction({
    chain: null,
    to,
    data,
    gas: 200_000n,
  })
  const client = createChainClient({ rpcUrl: devnet.rpcUrl, chainId: devnet.chainId })
  return (await client.waitForTransactionReceipt({ hash, timeout: 30_000, pollingInterval: 100 })).status
}

/** The devnet's denier sets the DENY bit on `address`; returns the mined transaction's receipt status. */
export async function denyOnChain(devnet: DevnetHandle, address: Address): Promise<'success' | 'reverted'> {
  const data = encodeFunctionData({
    abi: allowlistAbi,
    functionName: 'setDenyPermissions',
    args: [[address], [PERMISSION.DENY]],
  })
  return sendToAllowlist(devnet, 'denier', data)
}
