import type { Address } from '../../common/address.ts'
import type { Queryable } from '../index.ts'

/** Tables holding indexed events (all keyed by chain_id, block_number, log_index). */
export const EVENT_TABLES = [
  'lseth_transfers',
  'user_deposits',
  'oracle_reports',
  'rewards_earned',
  'global_fee_changes',
  'redeem_requests',
  'withdrawal_events',
  'redeem_satisfactions',
  'redeem_claims',
  'allowlist_permissions',
  'report_operators',
] as const
/** The name of one indexed-event table (one of `EVENT_TABLES`). */
export type EventTable = (typeof EVENT_TABLES)[number]

/** Where an event sits on chain: its natural key (chain, block, log index) plus tx and block identity and time. */
export interface EventPosition {
  chain_id: number
  block_number: bigint
  log_index: number
  tx_index: number
  block_hash: string
  tx_hash: string
  block_time: Date
}

/** One row of the follower's cursors: the last block read for a stream and contract address. */
export interface CursorRow {
  chain_id: number
  stream: string
  address: string
  block_number: string
  block_hash: string | null
}

/** bigint -> string for numeric columns; everything else as is. */
function toDbRow(row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(row)) out[k] = typeof v === 'bigint' ? v.toString() : v
  return out
}

/** Indexed chain data: idempotent inserts, cursors, block hashes and reorg rollback. */
export function createChainRepo(db: Queryable) {
  return {
    /** Inserts event rows; rows already present (same natural key) are left as they are. */
    async insertEvents(table: EventTable, rows: Record<string, unknown>[]): Promise<void> {
      if (rows.length === 0) return
      const key =
        table === 'allowlist_permissions'
          ? ['chain_id', 'block_number', 'log_index', 'position']
          : table === 'report_operators'
            ? ['chain_id', 'block_number', 'log_index', 'operator_index']
            : ['chain_id', 'block_number', 'log_index']
      for (let i = 0; i < rows.length; i += 1000) {
        await db(table)
          .insert(rows.slice(i, i + 1000).map(toDbRow))
          .onConflict(key)
          .ignore()
      }
    },

    /** The follower's cursor of one stream on a chain, or undefined before its first block. */
    async cursor(chainId: number, stream: string): Promise<CursorRow | undefined> {
      return db<CursorRow>('chain_cursors').where({ chain_id: chainId, stream }).first()
    },
    /** Every cursor of a chain, by stream name. */
    async cursors(chainId: number): Promise<CursorRow[]> {
      return db<CursorRow>('chain_cursors').where({ chain_id: chainId }).orderBy('stream')
    },
    /** Inserts or moves a stream's cursor to the given block (and contract address). */
    async setCursor(c: {
      chainId: number
      stream: string
      address: string
      blockNumber: bigint
      blockHash: string | null
    }): Promise<void> {
      await db('chain_cursors')
        .insert({
          chain_id: c.chainId,
          stream: c.stream,
          address: c.address,
          block_number: c.blockNumber.toString(),
          block_hash: c.blockHash,
        })
        .onConflict(['chain_id', 'stream'])
        .merge({
          address: c.address,
          block_number: c.blockNumber.toString(),
          block_hash: c.blockHash,
          updated_at: db.fn.now(),
        })
    },

    /** Records the head block the follower saw: the chain's clock (see `chainClock`). */
    async setHead(chainId: number, head: { number: bigint; time: Date }): Promise<void> {
      await db('chain_heads')
        .insert({ chain_id: chainId, block_number: head.number.toString(), time: head.time })
        .onConflict('chain_id')
        .merge({ block_number: head.number.toString(), time: head.time, updated_at: db.fn.now() })
    },

    /** Stores block numbers, hashes and times (upsert by number, 1,000 rows a statement) for reorg checks. */
    async saveBlocks(chainId: number, blocks: { number: bigint; hash: string; time: Date }[]): Promise<void> {
      if (blocks.length === 0) return
      const rows = blocks.map((b) => ({
        chain_id: chainId,
        number: b.number.toString(),
        hash: b.hash,
        time: b.time,
      }))
      for (let i = 0; i < rows.length; i += 1000) {
        await db('chain_blocks')
          .insert(rows.slice(i, i + 1000))
          .onConflict(['chain_id', 'number'])
          .merge(['hash', 'time'])
      }
    },
    /** Stored blocks at or below `atOrBelow`, newest first. */
    async recentBlocks(chainId: number, atOrBelow: bigint, limit: number) {
      const rows: { number: string; hash: string }[] = await db('chain_blocks')
        .where({ chain_id: chainId })
        .where('number', '<=', atOrBelow.toString())
        .orderBy('number', 'desc')
        .limit(limit)
      return rows.map((r) => ({ number: BigInt(r.number), hash: r.hash }))
    },

    /**
     * Rolls back everything at or after `fromBlock`: event rows, block hashes, and cursors past it.
     * Returns the addresses whose Allowlist rows were removed (their wallet state must be recomputed).
     */
    async rollbackFrom(chainId: number, fromBlock: bigint): Promise<{ allowlistAddresses: Address[] }> {
      const from = fromBlock.toString()
      // stored in one form (the follower stores the decoder's Address)
      const touched: { address: Address }[] = await db('allowlist_permissions')
        .distinct('address')
        .where({ chain_id: chainId })
        .where('block_number', '>=', from)
      for (const table of EVENT_TABLES) {
        await db(table).where({ chain_id: chainId }).where('block_number', '>=', from).delete()
      }
      await db('chain_blocks').where({ chain_id: chainId }).where('number', '>=', from).delete()
      const below = (fromBlock - 1n).toString()
      await db('chain_cursors')
        .where({ chain_id: chainId })
        .where('block_number', '>=', from)
        .update({ block_number: below, block_hash: null, updated_at: db.fn.now() })
      return { allowlistAddresses: touched.map((r) => r.address) }
    },

    /** LsETH share balances from ingested transfers (all holders, or up to and including a block). */
    async balances(chainId: number, options: { atBlock?: bigint } = {}) {
      const upTo = options.atBlock?.toString()
      const rows = await db
        .select('address')
        .sum({ balance: 'delta' })
        .from(
          db
            .select({ address: 'to_address', delta: 'value' })
            .from('lseth_transfers')
            .where({ chain_id: chainId })
            .modify((q) => {
              if (upTo) q.where('block_number', '<=', upTo)
            })
            .unionAll((u) => {
              u.select({ address: 'from_address', delta: db.raw('-value') })
                .from('lseth_transfers')
                .where({ chain_id: chainId })
                .modify((q) => {
                  if (upTo) q.where('block_number', '<=', upTo)
                })
            })
            .as('moves'),
        )
        .groupBy('address')
      const out = new Map<string, bigint>()
      for (const r of rows as { address: string; balance: string }[]) {
        if (r.address === '0x0000000000000000000000000000000000000000') continue
        const balance = BigInt(r.balance)
        if (balance !== 0n) out.set(r.address, balance)
      }
      return out
    },

    /** The protocol's global fee (bps) as last seen on chain (SetGlobalFee, else the latest report); undefined before any. */
    async latestGlobalFeeBps(): Promise<number | undefined> {
      const change: { fee_bps: number } | undefined = await db('global_fee_changes')
        .select('fee_bps')
        .orderBy([
          { column: 'block_number', order: 'desc' },
          { column: 'log_index', order: 'desc' },
        ])
        .first()
      if (change) return change.fee_bps
      const report: { global_fee_bps: number } | undefined = await db('oracle_reports')
        .select('global_fee_bps')
        .orderBy([
          { column: 'block_number', order: 'desc' },
          { column: 'log_index', order: 'desc' },
        ])
        .first()
      return report?.global_fee_bps
    },

    /** The number of indexed events of one table on a chain. */
    async count(table: EventTable, chainId: number): Promise<number> {
      const [row] = await db(table).where({ chain_id: chainId }).count<{ count: string }[]>({ count: '*' })
      return Number(row?.count ?? 0)
    },

    /** Every indexed oracle report of a chain, in chain order. */
    async oracleReports(chainId: number) {
      return db('oracle_reports')
        .where({ chain_id: chainId })
        .orderBy([{ column: 'block_number' }, { column: 'log_index' }])
    },

    /** Latest permission of each address as ingested (for wallet state recomputation). */
    async latestPermissions(chainId: number, addresses: string[]): Promise<Map<string, bigint>> {
      const out = new Map<string, bigint>()
      if (addresses.length === 0) return out
      const rows: { address: string; permissions: string }[] = await db('allowlist_permissions')
        .distinctOn('address')
        .select('address', 'permissions')
        .where({ chain_id: chainId })
        .whereIn('address', addresses)
        .orderBy([
          { column: 'address' },
          { column: 'block_number', order: 'desc' },
          { column: 'log_index', order: 'desc' },
          { column: 'position', order: 'desc' },
        ])
      for (const r of rows) out.set(r.address, BigInt(r.permissions))
      return out
    },
  }
}
/** The chain repository `createChainRepo` returns. */
export type ChainRepo = ReturnType<typeof createChainRepo>
