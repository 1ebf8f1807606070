import {
  type Address,
  encodeFunctionData,
  getAddress,
  type Hash,
  type Hex,
  keccak256,
  TransactionNotFoundError,
  TransactionReceiptNotFoundError,
} from 'viem'
import { allowlistAbi, allowlistLegacyAbi } from '../chain/abi.ts'
import { type AllowlistWriteRoute, resolveAllowlistWriteRoute } from '../chain/allowlist-route.ts'
import type { ChainClient, WriteClient } from '../chain/client.ts'
import { AllowlistWriteRefusedError, ReceiptTimeoutError } from '../chain/errors.ts'
import { isTransientRpcError } from '../chain/retry.ts'
import { revertVerdictOf } from '../chain/revert-reasons.ts'
import type { Logger } from '../common/logger.ts'
import { createExclusive } from '../db/exclusive.ts'
import type { Db } from '../db/index.ts'
import { type AllowlistChangeRow, createRepos, inTransaction } from '../db/repos/index.ts'
import { createAllowlistOutcomes, type WriterResult } from './allowlist-outcomes.ts'

export type { WriterResult } from './allowlist-outcomes.ts'

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
  /** How often the receipt is asked for while waiting (default 1 s; viem's own default is 4 s). */
  receiptPollMs?: number
}

/** One allowlist writer at a time across every worker: the key of its transaction-scoped advisory lock ('lsal'). */
export const WRITER_LOCK_KEY = 0x6c73616c

/** The Allowlist's permission writes of every version (`allow` before 1.2.1, `setAllowPermissions` from it). */
const writesAbi = [...allowlistAbi, ...allowlistLegacyAbi]

/**
 * The allowlist writer: batches pending permission changes into `setAllowPermissions` transactions (`allow` on an
 * Allowlist before 1.2.1), sent to the Allowlist when the key is its allower or through the protocol's firewall
 * when that is the allower (as on mainnet; `chain/allowlist-route.ts` detects which at the first pass with work
 * and refuses a key that can do neither with AllowlistWriteRefusedError, naming the key and both contracts),
 * simulating first. A revert is diagnosed: the route and the Allowlist's version are detected anew (an upgrade
 * or a role change since they were read) and the batch simulated again; a batch that still reverts is split
 * until the reverting addresses are isolated, while the rest go through. An isolated change whose revert no
 * retry can change (chain/revert-reasons.ts: the zero address, a denied address) fails; any other (a role, a
 * paused proxy, a revert without a reason) stays pending and is tried again after a delay
 * (`retryDelayMs`), as is a change whose mined transaction reverted. Either way the wallet says so at once
 * (`jobs/allowlist-outcomes.ts`). Transient RPC failures are thrown so the job is retried; rows already sent
 * are reconciled by receipt on the next run. Only the latest intent of an address is ever sent (see
 * `AllowlistChangesRepo`).
 */
export function createAllowlistWriter(deps: AllowlistWriterDeps) {
  const { db, client, wallet, allowlist, logger } = deps
  const repos = createRepos(db)
  const outcomes = createAllowlistOutcomes(db, logger)
  let resolved: AllowlistWriteRoute | undefined

  /**
   * Where writes go and which function they call: detected at the first batch of each pass (an upgrade of the
   * Allowlist or a change of the firewall's roles between passes is seen at the next one).
   */
  async function route(): Promise<AllowlistWriteRoute> {
    if (resolved) return resolved
    resolved = await resolveAllowlistWriteRoute(client, allowlist, wallet.account.address)
    logger.info(
      { route: resolved.kind, to: resolved.to, function: resolved.functionName, role: resolved.role ?? null },
      'allowlist write route detected',
    )
    return resolved
  }

  /** The call of a batch: its function and arguments, for simulation and encoding alike. */
  function callOf(via: AllowlistWriteRoute, rows: AllowlistChangeRow[]) {
    return {
      abi: writesAbi,
      functionName: via.functionName,
      args: [rows.map((r) => getAddress(r.address)), rows.map((r) => BigInt(r.permissions))],
    } as const
  }

  /**
   * Simulates a batch. On a revert, the first of the pass detects the route anew and simulates again (the
   * Allowlist upgraded from `allow` to `setAllowPermissions`, or the firewall's roles changed, since the route was
   * read); a batch that still reverts is split until each reverting change is isolated and settled by its
   * verdict: failed for good, or deferred for a retry.
   */
  async function sendable(
    rows: AllowlistChangeRow[],
    pass: { result: WriterResult; rerouted: boolean },
  ): Promise<AllowlistChangeRow[]> {
    // outside the try: a key that may not write is the writer's failure, not the batch's revert
    const via = await route()
    try {
      await client.simulateContract({ account: wallet.account, address: via.to, ...callOf(via, rows) })
      return rows
    } catch (err) {
      if (isTransientRpcError(err)) throw err
      if (!pass.rerouted) {
        pass.rerouted = true
        resolved = undefined
        return sendable(rows, pass)
      }
      if (rows.length === 1) {
        const verdict = revertVerdictOf(err)
        if (verdict.final) await outcomes.failed(rows, verdict.reason, pass.result)
        else await outcomes.deferred(rows, verdict.reason, pass.result)
        return []
      }
      const mid = Math.ceil(rows.length / 2)
      return [...(await sendable(rows.slice(0, mid), pass)), ...(await sendable(rows.slice(mid), pass))]
    }
  }

  /** The receipt of `hash`, or undefined while the node has none (any other RPC failure is thrown). */
  async function receiptOf(hash: Hash) {
    try {
      return await client.getTransactionReceipt({ hash })
    } catch (err) {
      if (err instanceof TransactionReceiptNotFoundError) return undefined
      throw err
    }
  }

  /**
   * The receipt of `hash` once mined, asked for every `receiptPollMs`; ReceiptTimeoutError after
   * `receiptTimeoutMs` (the pass fails, and the next one settles the transaction by its hash). Asked directly
   * rather than through viem's `waitForTransactionReceipt`, whose block watcher was seen to miss a receipt mined
   * at once and wait out its whole timeout (120 s by default) while every other change waited behind it.
   */
  async function awaitReceipt(hash: Hash) {
    const deadline = Date.now() + (deps.receiptTimeoutMs ?? 120_000)
    for (;;) {
      const receipt = await receiptOf(hash)
      if (receipt) return receipt
      if (Date.now() >= deadline) {
        throw new ReceiptTimeoutError(`no receipt for allowlist transaction ${hash} yet`, {
          details: { hash },
        })
      }
      await new Promise((resolve) => setTimeout(resolve, deps.receiptPollMs ?? 1_000))
    }
  }

  /** Whether the node knows transaction `hash` (mined or waiting in its pool); RPC failures are thrown. */
  async function nodeKnows(hash: Hash): Promise<boolean> {
    try {
      await client.getTransaction({ hash })
      return true
    } catch (err) {
      if (err instanceof TransactionNotFoundError) return false
      throw err
    }
  }

  /**
   * Rows sent earlier whose outcome was not recorded (a crash, a lost answer, a timeout): settled by
   * receipt. A transaction that reverted is requeued for a retry after a delay, noted on its wallets; one the
   * node never saw is requeued at once: superseded when its address has a newer change (that one is sent
   * instead, never both), else pending again. A transaction still in the node's pool keeps its rows submitted.
   * RPC failures are thrown (the job is retried): an unanswered query is never taken for a dropped transaction.
   */
  async function reconcileSubmitted(result: WriterResult) {
    const submitted = await repos.allowlistChanges.submitted()
    const byTx = new Map<string, AllowlistChangeRow[]>()
    for (const row of submitted) byTx.set(row.tx_hash ?? '', [...(byTx.get(row.tx_hash ?? '') ?? []), row])
    for (const [hash, rows] of byTx) {
      const receipt = hash ? await receiptOf(hash as Hash) : undefined
      if (receipt?.status === 'success') {
        await outcomes.landed(rows)
      } else if (receipt?.status === 'reverted') {
        await outcomes.reverted(rows, hash, result)
      } else if (!hash || !(await nodeKnows(hash as Hash))) {
        const settled = await repos.allowlistChanges.requeue(rows.map((r) => r.id))
        logger.info({ tx_hash: hash || null, ...settled }, 'unsent allowlist changes requeued')
      }
    }
  }

  /**
   * Signs one transaction for `rows`, then claims them (still pending, still the latest intent of their
   * address, not held by another transaction) and records the hash in one transaction: all or nothing.
   * Returns undefined when some row was taken meanwhile (a newer change, an API transaction holding it).
   */
  async function signAndClaim(rows: AllowlistChangeRow[]) {
    const via = await route()
    const request = await wallet.prepareTransactionRequest({
      to: via.to,
      data: encodeFunctionData(callOf(via, rows)),
    })
    const signed = await wallet.signTransaction(request as never)
    const hash = keccak256(signed)
    const claimed = await inTransaction(db, async (txRepos) => {
      const locked = await txRepos.allowlistChanges.claim(rows.map((r) => r.id))
      if (locked.length !== rows.length) return false
      await txRepos.allowlistChanges.mark(
        rows.map((r) => r.id),
        { state: 'submitted', tx_hash: hash, attempts: (rows[0]?.attempts ?? 0) + 1 },
      )
      return true
    })
    return claimed ? { signed, hash } : undefined
  }

  /** Sends a signed transaction; a node that already has it is fine. */
  async function send(signed: Hex, hash: Hash) {
    try {
      await wallet.sendRawTransaction({ serializedTransaction: signed })
    } catch (err) {
      const message = (err as Error).message
      if (/already known|known transaction|already imported/i.test(message)) return
      // the nonce is used: by this very transaction (mined already), else by another one; then the rows
      // stay submitted and the next run requeues them once the node does not know this hash
      if (/nonce too low/i.test(message) && (await receiptOf(hash))) return
      throw err
    }
  }

  async function runExclusive(): Promise<WriterResult> {
    const result: WriterResult = { sent: [], failed: [], retrying: [], busy: false }
    resolved = undefined
    await reconcileSubmitted(result)
    await repos.allowlistChanges.supersedeStale()
    const pass = { result, rerouted: false }
    for (;;) {
      const pending = await repos.allowlistChanges.pending(deps.batchSize ?? 100)
      if (pending.length === 0) break
      const rows = await sendable(pending, pass).catch(async (err) => {
        // the key cannot write the Allowlist: the waiting changes say so on their wallets, the pass fails
        if (err instanceof AllowlistWriteRefusedError) await outcomes.waiting(pending, err.message)
        throw err
      })
      if (rows.length === 0) continue
      // Sign, then record the hash before sending: a send whose answer is lost (or a crash right after the
      // record) is settled by its hash on the next run, never sent twice and never sent after a newer change.
      const claimed = await signAndClaim(rows)
      if (!claimed) break // a newer change or an API transaction took a row: the next run sees it settled
      const { signed, hash } = claimed
      await send(signed, hash)
      const receipt = await awaitReceipt(hash)
      const sent = rows.map((r) => ({ ...r, attempts: r.attempts + 1 }))
      if (receipt.status === 'success') {
        await outcomes.landed(sent)
        result.sent.push({ txHash: hash, addresses: rows.length })
        logger.info({ tx_hash: hash, addresses: rows.length }, 'allowlist permissions sent')
      } else {
        // the chain changed between the simulation and the block (an upgrade, a role): detected anew next time
        resolved = undefined
        await outcomes.reverted(sent, hash, result)
      }
    }
    return result
  }

  const alone = createExclusive(db, [WRITER_LOCK_KEY, 0])
  return {
    /**
     * One pass: settles earlier transactions, then sends the pending changes in batches. One pass at a
     * time, in this process and across processes (db/exclusive.ts); a pass that finds another running
     * returns at once with `busy`.
     */
    async runOnce(): Promise<WriterResult> {
      return (await alone(runExclusive, 'skip')) ?? { sent: [], failed: [], retrying: [], busy: true }
    },
  }
}

export type AllowlistWriter = ReturnType<typeof createAllowlistWriter>
