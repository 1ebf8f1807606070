import {
  type Address,
  BaseError,
  ContractFunctionRevertedError,
  encodeFunctionData,
  getAddress,
  keccak256,
} from 'viem'
import { allowlistAbi } from '../chain/abi.ts'
import type { ChainClient, WriteClient } from '../chain/client.ts'
import { isTransientRpcError } from '../chain/retry.ts'
import type { Logger } from '../common/logger.ts'
import type { Db } from '../db/index.ts'
import { type AllowlistChangeRow, createRepos } from '../db/repos/index.ts'

export interface AllowlistWriterDeps {
  db: Db
  client: ChainClient
  wallet: WriteClient
  allowlist: Address
  logger: Logger
  /** Addresses per transaction (default 100). */
  batchSize?: number
  /** Receipt wait (default 120 s). */
  receiptTimeoutMs?: number
}

export interface WriterResult {
  sent: { txHash: string; addresses: number }[]
  failed: { address: string; reason: string }[]
}

/** The revert reason of a failed simulation/transaction, in words. */
export function revertReason(err: unknown): string {
  if (err instanceof BaseError) {
    const revert = err.walk((e) => e instanceof ContractFunctionRevertedError)
    if (revert instanceof ContractFunctionRevertedError) {
      return revert.data?.errorName ?? revert.reason ?? revert.shortMessage
    }
    return err.shortMessage
  }
  return (err as Error).message
}

/**
 * The allowlist writer: batches pending permission changes into `setAllowPermissions` transactions,
 * simulating first so a batch with one bad address is split until the bad one is isolated and recorded
 * (failed, with the revert reason on the wallet) while the rest go through. Transient RPC failures are
 * thrown so the job is retried; rows already sent are reconciled by receipt on the next run.
 */
export function createAllowlistWriter(deps: AllowlistWriterDeps) {
  const { db, client, wallet, allowlist, logger } = deps
  const repos = createRepos(db)

  async function fail(rows: AllowlistChangeRow[], reason: string, result: WriterResult) {
    await repos.allowlistChanges.mark(
      rows.map((r) => r.id),
      { state: 'failed', error: reason, attempts: (rows[0]?.attempts ?? 0) + 1 },
    )
    for (const row of rows) {
      await repos.wallets.update(row.wallet_id, {
        status_reason: `allowlist change (${row.reason}) reverted: ${reason}`,
      })
      result.failed.push({ address: row.address, reason })
    }
    logger.warn({ addresses: rows.map((r) => r.address), reason }, 'allowlist change reverted')
  }

  /** Simulates a batch; splits it on revert until the failing addresses are isolated. */
  async function sendable(rows: AllowlistChangeRow[], result: WriterResult): Promise<AllowlistChangeRow[]> {
    try {
      await client.simulateContract({
        account: wallet.account,
        address: allowlist,
        abi: allowlistAbi,
        functionName: 'setAllowPermissions',
        args: [rows.map((r) => getAddress(r.address)), rows.map((r) => BigInt(r.permissions))],
      })
      return rows
    } catch (err) {
      if (isTransientRpcError(err)) throw err
      if (rows.length === 1) {
        await fail(rows, revertReason(err), result)
        return []
      }
      const mid = Math.ceil(rows.length / 2)
      return [...(await sendable(rows.slice(0, mid), result)), ...(await sendable(rows.slice(mid), result))]
    }
  }

  /** Rows sent earlier whose receipt was not seen (a crash or timeout): settle them by receipt. */
  async function reconcileSubmitted() {
    const submitted = await repos.allowlistChanges.submitted()
    const byTx = new Map<string, AllowlistChangeRow[]>()
    for (const row of submitted) byTx.set(row.tx_hash ?? '', [...(byTx.get(row.tx_hash ?? '') ?? []), row])
    for (const [hash, rows] of byTx) {
      const receipt = hash
        ? await client.getTransactionReceipt({ hash: hash as `0x${string}` }).catch(() => undefined)
        : undefined
      if (receipt?.status === 'success') {
        await repos.allowlistChanges.mark(
          rows.map((r) => r.id),
          { state: 'confirmed' },
        )
      } else if (receipt?.status === 'reverted') {
        await repos.allowlistChanges.mark(
          rows.map((r) => r.id),
          { state: 'pending' },
        )
      } else {
        const tx = hash
          ? await client.getTransaction({ hash: hash as `0x${string}` }).catch(() => undefined)
          : undefined
        if (!tx)
          await repos.allowlistChanges.mark(
            rows.map((r) => r.id),
            { state: 'pending', tx_hash: null },
          ) // dropped
      }
    }
  }

  return {
    async runOnce(): Promise<WriterResult> {
      const result: WriterResult = { sent: [], failed: [] }
      await reconcileSubmitted()
      for (;;) {
        const pending = await repos.allowlistChanges.pending(deps.batchSize ?? 100)
        if (pending.length === 0) break
        const rows = await sendable(pending, result)
        if (rows.length === 0) continue
        // Sign first and record the hash before sending: a send whose answer is lost is then settled by
        // its hash on the next run (receipt, or back to pending if the node never saw it), never sent twice.
        const request = await wallet.prepareTransactionRequest({
          to: allowlist,
          data: encodeFunctionData({
            abi: allowlistAbi,
            functionName: 'setAllowPermissions',
            args: [rows.map((r) => getAddress(r.address)), rows.map((r) => BigInt(r.permissions))],
          }),
        })
        const signed = await wallet.signTransaction(request as never)
        const hash = keccak256(signed)
        await repos.allowlistChanges.mark(
          rows.map((r) => r.id),
          { state: 'submitted', tx_hash: hash, attempts: (rows[0]?.attempts ?? 0) + 1 },
        )
        await wallet.sendRawTransaction({ serializedTransaction: signed }).catch((err: unknown) => {
          // the node already has it (a retried send): fine
          if (!/already known|known transaction|nonce too low/i.test((err as Error).message)) throw err
        })
        const receipt = await client.waitForTransactionReceipt({
          hash,
          timeout: deps.receiptTimeoutMs ?? 120_000,
        })
        if (receipt.status === 'success') {
          await repos.allowlistChanges.confirmSubmitted(rows.map((r) => r.id))
          result.sent.push({ txHash: hash, addresses: rows.length })
          logger.info({ tx_hash: hash, addresses: rows.length }, 'allowlist permissions sent')
        } else {
          await fail(rows, `transaction ${hash} reverted`, result)
        }
      }
      return result
    },
  }
}

export type AllowlistWriter = ReturnType<typeof createAllowlistWriter>
