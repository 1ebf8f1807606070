import { fc, test } from '@fast-check/vitest'
import { describe, expect } from 'vitest'
import { copyText } from '../../db/bulk.ts'
import { WALLET_RECORD_COLUMNS } from '../../db/records/columns.ts'
import {
  type AttributionRow,
  type DayKey,
  type PeriodFlowRow,
  PREVIOUS_ROW_COLUMNS,
} from '../../db/repos/records.ts'
import {
  computeWalletRecord,
  ENGINE_VERSION,
  emptyFeeSummary,
  encodeFeeSummary,
  type FeeSummaryItem,
  prepareReport,
  type ReportInput,
  summarizeFees,
  type WalletRecord,
  walletTotalsOf,
} from '../../engine/index.ts'
import { arbRealisticReport, arbTarget, E } from '../../fixtures/engine/arbitraries.ts'
import { runs } from '../../fixtures/property-runs.ts'
import { contentHashOfLines, createContentTree } from './content-hash.ts'
import { shardChunks } from './shard-rows.ts'

/** One wallet's movements in one period (the shard reads them as a flow row). */
interface Movement {
  /** a share of the previous balance sent away (per mille), or received when negative */
  out: number
  received: bigint
  mints: bigint
  burns: bigint
  /** the report transaction's own part of the movement */
  reportDelta: bigint
}

interface History {
  reports: ReportInput[]
  addresses: string[]
  /** movements[day][wallet]: null when the wallet moved nothing that day */
  movements: (Movement | null)[][]
  registrations: ({ account: number; org: number; originator: number | null; onPlatform: boolean } | null)[]
  targets: (string | null)[]
}

const arbMovement: fc.Arbitrary<Movement> = fc.record({
  out: fc.integer({ min: 0, max: 1000 }),
  received: fc.oneof(fc.constant(0n), fc.bigInt({ min: 0n, max: 1000n * E })),
  mints: fc.oneof(fc.constant(0n), fc.bigInt({ min: 0n, max: 100n * E })),
  burns: fc.oneof(fc.constant(0n), fc.bigInt({ min: 0n, max: 100n * E })),
  reportDelta: fc.oneof(fc.constant(0n), fc.bigInt({ min: -10n * E, max: 10n * E })),
})

const arbHistory: fc.Arbitrary<History> = fc
  .record({
    reports: fc.array(arbRealisticReport(), { minLength: 2, maxLength: 4 }),
    ids: fc.uniqueArray(fc.bigInt({ min: 1n, max: 2n ** 160n - 1n }), { minLength: 1, maxLength: 8 }),
  })
  .chain(({ reports, ids }) =>
    fc.record({
      reports: fc.constant(reports),
      addresses: fc.constant(ids.map((id) => `0x${id.toString(16).padStart(40, '0')}`)),
      movements: fc.array(
        fc.array(fc.option(arbMovement, { freq: 2 }), { minLength: ids.length, maxLength: ids.length }),
        { minLength: reports.length, maxLength: reports.length },
      ),
      registrations: fc.array(
        fc.option(
          fc.record({
            account: fc.integer({ min: 0, max: 2 }),
            org: fc.integer({ min: 0, max: 1 }),
            originator: fc.option(fc.integer({ min: 0, max: 2 })),
            onPlatform: fc.boolean(),
          }),
        ),
        { minLength: ids.length, maxLength: ids.length },
      ),
      targets: fc.array(arbTarget, { minLength: 3, maxLength: 3 }),
    }),
  )

/** The line the pipeline wrote before the dormant path: every column's value through `copyText`. */
function referenceLine(key: DayKey, record: WalletRecord, originator: string | null): string {
  const source = record as unknown as Record<string, string | bigint | boolean | null>
  return WALLET_RECORD_COLUMNS.map((column) => {
    switch (column) {
      case 'chain_id':
        return copyText(key.chainId)
      case 'report_epoch':
        return copyText(key.epoch)
      case 'version':
        return copyText(key.version)
      case 'originator_org_id':
        return copyText(originator)
      case 'engine_version':
        return copyText(ENGINE_VERSION)
      default:
        return copyText(source[column] ?? null)
    }
  }).join('\t')
}

/** A stored line as the next day reads it back (`PREVIOUS_ROW_COLUMNS` of it). */
function previousRow(line: string): string {
  const values = line.split('\t')
  return PREVIOUS_ROW_COLUMNS.map((c) => values[WALLET_RECORD_COLUMNS.indexOf(c)]).join('\t')
}

/** Every chunk of an async generator. */
async function collect(chunks: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = []
  for await (const chunk of chunks) out.push(chunk)
  return out
}

describe('shardChunks', () => {
  test.prop([arbHistory], { numRuns: runs(150) })(
    'property: over random histories the dormant path and the engine give the lines, hash and fee summary of the engine alone, to the wei',
    async (history) => {
      const attributions = new Map<string, AttributionRow>()
      history.registrations.forEach((r, i) => {
        if (r === null) return
        const address = history.addresses[i] as string
        attributions.set(address, {
          address,
          account_id: `acc-${r.account}`,
          org_id: `org_${r.org}`,
          originator_org_id: r.originator === null ? (null as unknown as string) : `org_${r.originator}`,
          on_platform: r.onPlatform,
          target_fee_rate: history.targets[r.account] ?? null,
        })
      })
      const targets = new Map<string, string>()
      history.targets.forEach((t, i) => {
        if (t !== null) targets.set(`acc-${i}`, t)
      })
      // the reference: every wallet through computeWalletRecord, each day from the previous day's records
      let records = new Map<string, WalletRecord>()
      let stored: string[] | null = null
      for (const [day, report] of history.reports.entries()) {
        const ctx = prepareReport(report)
        const key: DayKey = { chainId: 1, epoch: String(100 + day), version: day + 3 }
        const flows: PeriodFlowRow[] = []
        const next = new Map<string, WalletRecord>()
        const lines: string[] = []
        const items: FeeSummaryItem[] = []
        const order = [...history.addresses].sort()
        for (const address of order) {
          const wallet = history.addresses.indexOf(address)
          const before = records.get(address)
          const move = (history.movements[day] as (Movement | null)[])[wallet]
          if (!before && !move) continue
          const held = before?.balance_lseth ?? 0n
          let delta = 0n
          let reportDelta = 0n
          if (move) {
            delta = move.received - (held * BigInt(move.out)) / 1000n
            // the report transaction's part, never leaving fewer than zero shares before it
            reportDelta = move.reportDelta > held + delta ? held + delta : move.reportDelta
            flows.push({
              address,
              delta: String(delta),
              report_delta: String(reportDelta),
              mints: String(move.mints),
              burns: String(move.burns),
            })
          }
          const who = attributions.get(address)
          const record = computeWalletRecord(ctx, {
            address,
            shares: held + delta - reportDelta,
            report_delta: reportDelta,
            mints: move?.mints ?? 0n,
            burns: move?.burns ?? 0n,
            previous: before ? walletTotalsOf(before) : null,
            account_id: who?.account_id ?? null,
            org_id: who?.org_id ?? null,
            on_platform: who?.on_platform ?? false,
            target_fee_rate: who ? (targets.get(who.account_id) ?? null) : null,
          })
          next.set(address, record)
          lines.push(referenceLine(key, record, who?.originator_org_id ?? null))
          items.push({ record, originator_org_id: who?.originator_org_id ?? null })
        }
        // the pipeline: the previous day's stored rows as COPY text, the dormant path where nothing moved
        const out = { tree: createContentTree(0, 1), summary: emptyFeeSummary(), wallets: 0 }
        // ... in pieces of whole lines, as they stream in
        const previousTexts: string[] =
          stored === null ? [] : stored.map((l, i) => `${previousRow(l)}\n${i % 3 === 2 ? '|' : ''}`)
        const written: string = (
          await collect(
            shardChunks(
              {
                key,
                ctx,
                day: `day ${day}`,
                previous: previousTexts.join('').split('|'),
                flows,
                attributions,
                targets,
              },
              [out],
            ),
          )
        ).join('')
        expect(written).toBe(lines.map((l) => `${l}\n`).join(''))
        expect(out.wallets).toBe(lines.length)
        // the content hash: each line without its version (content-hash.ts)
        const canonical = lines.map((line) => {
          const [chain, epoch, , ...rest] = line.split('\t')
          return `${[chain, epoch, ...rest].join('\t')}\n`
        })
        expect(out.tree.root()).toBe(await contentHashOfLines([canonical.join('')]))
        expect(encodeFeeSummary(out.summary)).toEqual(encodeFeeSummary(summarizeFees(items)))
        records = next
        stored = written.split('\n').filter((l) => l !== '')
      }
    },
  )

  test.prop(
    [
      arbRealisticReport(),
      arbRealisticReport(),
      fc.uniqueArray(fc.bigInt({ min: 1n, max: 2n ** 160n - 1n }), { minLength: 1, maxLength: 12 }),
      fc.array(fc.bigInt({ min: 0n, max: 2n ** 160n - 1n }), { minLength: 1, maxLength: 4 }),
      fc.array(fc.boolean(), { minLength: 12, maxLength: 12 }),
    ],
    { numRuns: runs(100) },
  )(
    'property: a job over consecutive shards gives each shard the lines, hash, fee summary and count of that shard computed alone',
    async (first, second, ids, cuts, moves) => {
      const addresses = ids.map((id) => `0x${id.toString(16).padStart(40, '0')}`).sort()
      const hex = (n: bigint) => `0x${n.toString(16).padStart(40, '0')}`
      const bounds = [...new Set(cuts.map(hex))].sort()
      const empty = () => ({ tree: createContentTree(0, 1), summary: emptyFeeSummary(), wallets: 0 })
      const input = (day: number, report: ReportInput, previous: string[], flows: PeriodFlowRow[]) => ({
        key: { chainId: 1, epoch: String(100 + day), version: 2 },
        ctx: prepareReport(report),
        day: `day ${day}`,
        previous,
        flows,
        attributions: new Map<string, AttributionRow>(),
        targets: new Map<string, string>(),
      })
      // day 1: every wallet mints; day 2: from its rows, some wallets receive more
      const minted = addresses.map((address, i) => {
        const value = String(BigInt(i + 1) * E)
        return { address, delta: value, report_delta: '0', mints: value, burns: '0' }
      })
      const day1 = (await collect(shardChunks(input(1, first, [], minted), [empty()]))).join('')
      const previous = day1
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => `${previousRow(l)}\n`)
      const flows = addresses
        .filter((_, i) => moves[i])
        .map((address) => ({ address, delta: String(E), report_delta: '0', mints: '0', burns: '0' }))
      // one job over every shard, cut at `bounds`
      const outs = [...bounds.map(empty), empty()]
      const chunks = await collect(shardChunks(input(2, second, [previous.join('')], flows), outs, bounds))
      // each shard alone, from its own rows and flows
      const ranges = [undefined, ...bounds].map((lo, i) => ({ lo, hi: bounds[i] }))
      const inRange = (a: string, r: { lo?: string | undefined; hi?: string | undefined }) =>
        (r.lo === undefined || a >= r.lo) && (r.hi === undefined || a < r.hi)
      const alone = await Promise.all(
        ranges.map(async (range) => {
          const out = empty()
          const mine = previous.filter((row) => inRange(row.slice(0, 42), range))
          const own = flows.filter((f) => inRange(f.address, range))
          const text = (await collect(shardChunks(input(2, second, mine, own), [out]))).join('')
          return { out, text }
        }),
      )
      expect(chunks.join('')).toBe(alone.map((a) => a.text).join(''))
      for (const chunk of chunks) {
        const starts = chunk
          .split('\n')
          .filter((l) => l !== '')
          .map((l) => l.split('\t')[3] as string)
        // a chunk never holds lines of two shards
        expect(new Set(starts.map((a) => ranges.findIndex((r) => inRange(a, r)))).size).toBe(1)
      }
      outs.forEach((out, i) => {
        const one = alone[i]?.out as typeof out
        expect(out.wallets).toBe(one.wallets)
        expect(out.tree.root()).toBe(one.tree.root())
        expect(encodeFeeSummary(out.summary)).toEqual(encodeFeeSummary(one.summary))
      })
    },
  )

  test('behavior: rows out of address order are refused, not merged wrongly', async () => {
    const ctx = prepareReport(fc.sample(arbRealisticReport('v3'), { numRuns: 1, seed: 1 })[0] as ReportInput)
    const zeros = '0\t'.repeat(PREVIOUS_ROW_COLUMNS.length - 3)
    const previous = [`0x${'2'.repeat(40)}\t5\t${zeros}0\n0x${'1'.repeat(40)}\t5\t${zeros}0\n`]
    const out = { tree: createContentTree(0, 1), summary: emptyFeeSummary(), wallets: 0 }
    const run = collect(
      shardChunks(
        {
          key: { chainId: 1, epoch: '1', version: 1 },
          ctx,
          day: 'day',
          previous,
          flows: [],
          attributions: new Map(),
          targets: new Map(),
        },
        [out],
      ),
    )
    await expect(run).rejects.toThrow(/out of address order/)
  })
})
