import { type CopyRows, createCopyRows } from '../../db/copy-rows.ts'
import {
  type AttributionRow,
  type DayKey,
  type PeriodFlowRow,
  PREVIOUS_ROW_COLUMNS,
} from '../../db/repos/records.ts'
import {
  addToFeeSummary,
  computeDormantAmounts,
  computeWalletRecord,
  type DormantClass,
  EngineError,
  type FeeSummary,
  prepareDormantClass,
  type ReportContext,
  type WalletRecord,
  type WalletTotals,
} from '../../engine/index.ts'
import type { ContentTree } from './content-hash.ts'
import { DayDataError } from './errors.ts'
import { createWalletLines, type WalletLines } from './wallet-lines.ts'

/** What a shard's records are computed from (all of it in memory: the shard's share of the day). */
export interface ShardRowsInput {
  key: DayKey
  ctx: ReportContext
  /** Names the day in error messages (`describeReport`). */
  day: string
  /**
   * The previous day's rows of the shard as COPY text of whole lines (`PREVIOUS_ROW_COLUMNS`, byte order of
   * the address), read as they are consumed; empty for the chain's first day.
   */
  previous: AsyncIterable<string> | Iterable<string>
  /** The shard's period flows, in byte order of the address. */
  flows: readonly PeriodFlowRow[]
  /** Registered wallets of the shard at the report, by address. */
  attributions: ReadonlyMap<string, AttributionRow>
  /** Target fee rates in force at the report, by account. */
  targets: ReadonlyMap<string, string>
}

/** What producing a shard's lines adds up as it goes. */
export interface ShardRowsOutput {
  /** The content hash (`content-hash.ts`): each line without its version, in the tree of the output's shard. */
  tree: ContentTree
  /** The shard's fee summary (`addToFeeSummary` of every record). */
  summary: FeeSummary
  /** Wallets written so far. */
  wallets: number
}

/** Lines per chunk of COPY text written (about 60 KB). */
const CHUNK_ROWS = 100

/** A kind of wallet at a report: its attribution, the middle of its lines and its dormant class. */
interface WalletKind {
  /** The target fee rate of its account at the report (null: none, or unregistered). */
  target: string | null
  onPlatform: boolean
  orgId: string | null
  originator: string | null
  middle: string
  dormant: DormantClass
}

/**
 * The COPY text chunks of the wallet records of one or more consecutive shards: every address that held LsETH
 * at the previous report (its row in `previous`) or moved LsETH since (in `flows`), in address order. The rows
 * of an address below `bounds[0]` count in `outs[0]` (its hash, fee summary and count), from `bounds[i - 1]`
 * and below `bounds[i]` in `outs[i]` (`outs` has one more entry than `bounds`; a chunk never holds rows of two
 * of them). A dormant wallet (no flow) takes the dormant path: its amounts from `computeDormantAmounts` on its
 * previous balance, its unchanged totals copied from the previous row. A wallet with a flow goes through
 * `computeWalletRecord` with balance = previous balance + the period's net transfers and rewards on the
 * shares held right before the report transaction. Both paths give the same lines (property-tested in
 * shard-rows.test.ts). Each chunk is a string of whole lines (a rope of the lines until it is hashed, as it
 * is taken).
 */
export async function* shardChunks(
  input: ShardRowsInput,
  outs: readonly ShardRowsOutput[],
  bounds: readonly string[] = [],
): AsyncGenerator<string> {
  if (outs.length !== bounds.length + 1) throw new Error(`${outs.length} outputs for ${bounds.length} bounds`)
  const { ctx, previous, flows, attributions } = input
  const lines = createWalletLines(input.key)
  const { hashHead, copyHead } = lines
  const kindOf = createKinds(input, lines)

  // the lines of the chunk being built (a rope, flattened once when it is hashed), for output `outs[current]`
  let chunk = ''
  let lineCount = 0
  let current = 0
  let out = outs[0] as ShardRowsOutput
  let bound = bounds[0]
  let last = ''
  // every line starts with the copy head; the hash sees the hash head in its place
  const copyLineStart = `\n${copyHead}`
  const hashLineStart = `\n${hashHead}`
  // how much of the chunk the content tree has: lines of one bucket go to it together, at the bucket's end or
  // at the chunk's (a bucket of the tree is a few hundred lines at 1M wallets, a chunk 100)
  let hashed = 0
  const hashRest = () => {
    if (chunk.length === hashed) return
    const text = hashed === 0 ? chunk : chunk.slice(hashed)
    out.tree.update(hashHead + text.slice(copyHead.length).replaceAll(copyLineStart, hashLineStart))
    hashed = chunk.length
  }
  const emitted = (address: string) => {
    if (address <= last) throw new Error(`shard rows out of address order at ${address}`)
    last = address
    if (out.tree.changes(address)) {
      hashRest()
      out.tree.enter(address)
    }
    out.wallets += 1
    lineCount += 1
  }
  const take = () => {
    hashRest()
    const taken = chunk
    chunk = ''
    hashed = 0
    lineCount = 0
    return taken
  }
  /** Moves to the output of `address`: the chunk of the output it leaves, if it has lines. */
  const enter = (address: string): string | undefined => {
    if (bound === undefined || address < bound) return undefined
    const left = lineCount > 0 ? take() : undefined
    while (bound !== undefined && address >= bound) {
      current += 1
      out = outs[current] as ShardRowsOutput
      bound = bounds[current]
    }
    return left
  }

  /** An active wallet (with a flow), its previous day's row if it has one: through the engine. */
  const active = (flow: PeriodFlowRow, before: CopyRows | null) => {
    const balance = (before ? BigInt(before.field(1)) : 0n) + BigInt(flow.delta)
    const reportDelta = BigInt(flow.report_delta)
    const shares = balance - reportDelta
    if (balance < 0n || shares < 0n) {
      throw new DayDataError(
        `${input.day}: the balance of ${flow.address} would be negative (${shares} shares ` +
          `before the report transaction, ${balance} after it): transfers are missing or the previous day ` +
          'is inconsistent',
        { details: { address: flow.address, shares: shares.toString(), balance: balance.toString() } },
      )
    }
    const who = attributions.get(flow.address)
    const kind = kindOf(flow.address, who)
    const record = engineRecord(input, flow.address, {
      shares,
      report_delta: reportDelta,
      mints: BigInt(flow.mints),
      burns: BigInt(flow.burns),
      previous: before ? totalsOf(before) : null,
      who,
      target: kind.target,
    })
    addToFeeSummary(out.summary, record, record.on_platform, record.org_id, kind.originator)
    emitted(flow.address)
    chunk += copyHead + lines.record(record, kind.middle)
  }
  /** A dormant wallet: its previous balance earns the report's rewards, nothing else moved. */
  const dormant = (row: CopyRows, address: string) => {
    const balanceText = row.field(1)
    if (balanceText.charCodeAt(0) === 45 /* '-' */) {
      throw new DayDataError(`${input.day}: the previous balance of ${address} is negative`, {
        details: { address },
      })
    }
    const kind = kindOf(address, attributions.get(address))
    const amounts = computeDormantAmounts(ctx, kind.dormant, BigInt(balanceText))
    addToFeeSummary(out.summary, amounts, kind.onPlatform, kind.orgId, kind.originator)
    emitted(address)
    chunk += copyHead + lines.dormant(address, row, kind.middle, amounts)
  }

  // merge the previous rows and the flows, both in address order
  let f = 0
  for await (const text of previous) {
    const rows = createCopyRows(text, PREVIOUS_ROW_COLUMNS.length)
    while (rows.next()) {
      const address = rows.field(0)
      for (let flow = flows[f]; flow !== undefined && flow.address < address; flow = flows[f]) {
        const left = enter(flow.address)
        if (left !== undefined) yield left
        active(flow, null)
        f += 1
        if (lineCount >= CHUNK_ROWS) yield take()
      }
      const left = enter(address)
      if (left !== undefined) yield left
      const flow = flows[f]
      if (flow !== undefined && flow.address === address) {
        active(flow, rows)
        f += 1
      } else {
        dormant(rows, address)
      }
      if (lineCount >= CHUNK_ROWS) yield take()
    }
  }
  for (let flow = flows[f]; flow !== undefined; flow = flows[++f]) {
    const left = enter(flow.address)
    if (left !== undefined) yield left
    active(flow, null)
    if (lineCount >= CHUNK_ROWS) yield take()
  }
  if (lineCount > 0) yield take()
}

/**
 * The kind of a wallet at the report, by its attribution (`who`, none when unregistered): made once per
 * attribution, from a record the engine computes for it (the middle columns as the engine fills them, and
 * its checks).
 */
function createKinds(
  input: ShardRowsInput,
  lines: WalletLines,
): (address: string, who: AttributionRow | undefined) => WalletKind {
  const kinds = new Map<string, WalletKind>()
  return (address, who) => {
    const target = who ? (input.targets.get(who.account_id) ?? null) : null
    const id = who
      ? `${who.account_id}\t${who.org_id}\t${who.originator_org_id}\t${who.on_platform}\t${target}`
      : ''
    let kind = kinds.get(id)
    if (kind === undefined) {
      const sample = engineRecord(input, address, {
        shares: 0n,
        mints: 0n,
        burns: 0n,
        previous: null,
        who,
        target,
      })
      const originator = who?.originator_org_id ?? null
      kind = {
        target,
        onPlatform: sample.on_platform,
        orgId: sample.org_id,
        originator,
        middle: lines.middle(sample, originator),
        dormant: prepareDormantClass(input.ctx, sample.on_platform, sample.target_fee_rate),
      }
      kinds.set(id, kind)
    }
    return kind
  }
}

/** The previous row's totals as bigints (an active wallet's `previous`). */
function totalsOf(row: CopyRows): WalletTotals {
  const totals = {} as Record<string, bigint>
  for (let i = 2; i < PREVIOUS_ROW_COLUMNS.length; i++) {
    totals[PREVIOUS_ROW_COLUMNS[i] as string] = BigInt(row.field(i))
  }
  return totals as unknown as WalletTotals
}

/** `computeWalletRecord` with the shard's attribution, its engine errors as the day's data errors. */
function engineRecord(
  input: ShardRowsInput,
  address: string,
  wallet: {
    shares: bigint
    report_delta?: bigint
    mints: bigint
    burns: bigint
    previous: WalletTotals | null
    who: AttributionRow | undefined
    target: string | null
  },
): WalletRecord {
  const { who } = wallet
  try {
    return computeWalletRecord(input.ctx, {
      address,
      shares: wallet.shares,
      report_delta: wallet.report_delta ?? 0n,
      mints: wallet.mints,
      burns: wallet.burns,
      previous: wallet.previous,
      account_id: who?.account_id ?? null,
      org_id: who?.org_id ?? null,
      on_platform: who?.on_platform ?? false,
      target_fee_rate: who ? wallet.target : null,
    })
  } catch (err) {
    if (err instanceof EngineError) {
      throw new DayDataError(`${input.day}: wallet ${address}: ${err.message}`, {
        details: { address, code: err.code },
        cause: err,
      })
    }
    throw err
  }
}
