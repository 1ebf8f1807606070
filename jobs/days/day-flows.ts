import type { Address } from '../../common/address.ts'
import type { Db } from '../../db/index.ts'
import { createRepos } from '../../db/repos/index.ts'
import type { AddressRange, DayKey, PeriodFlowRow } from '../../db/repos/records.ts'
import type { DayInputs } from './inputs.ts'

/** The period flows of a run's shards, read once per run and process. */
export interface DayFlows {
  /** The flows of `range` in the run `key` of the day of `inputs`, in byte order of the address. */
  forShard(inputs: DayInputs, key: DayKey, range: AddressRange): Promise<readonly PeriodFlowRow[]>
}

/** The first index of `rows` (sorted by address) whose address is >= `address`. */
function lowerBound(rows: readonly PeriodFlowRow[], address: string): number {
  let lo = 0
  let hi = rows.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if ((rows[mid] as PeriodFlowRow).address < address) lo = mid + 1
    else hi = mid
  }
  return lo
}

/**
 * The period flows of the day a process is computing: read once for the whole day (through the transfers'
 * block range, a plan that does not grow with the history) and cut by address range for each shard. Only
 * the latest run is kept; a new run (a retry after a data error, a recompute) reads again. The chain's first
 * day, whose period is the whole history, is read shard by shard instead (through the address indexes), so
 * it never holds every holder's flows at once.
 *
 * @example
 * const flows = createDayFlows(db, burnAddresses)
 * const mine = await flows.forShard(inputs, key, shardRange(3, 16))
 */
export function createDayFlows(db: Db, burnAddresses: readonly Address[]): DayFlows {
  let latest: { id: string; rows: Promise<PeriodFlowRow[]> } | undefined
  return {
    async forShard(inputs, key, range) {
      const repos = createRepos(db)
      if (inputs.window.after === null) {
        return repos.records.periodFlows(key.chainId, inputs.window, range, burnAddresses)
      }
      const id = `${key.chainId}:${key.epoch}:${key.version}:${inputs.report.block_hash}`
      let entry = latest
      if (entry?.id !== id) {
        const read = repos.records.dayFlows(key.chainId, inputs.window, burnAddresses).then((rows) =>
          // byte order, as the shard merges them (the query orders them so already: this only checks)
          rows.every((row, i) => i === 0 || (rows[i - 1] as PeriodFlowRow).address < row.address)
            ? rows
            : rows.sort((a, b) => (a.address < b.address ? -1 : 1)),
        )
        const created = { id, rows: read }
        entry = created
        latest = created
        // a failed read is not kept: the shard's retry reads again
        read.catch(() => {
          if (latest === created) latest = undefined
        })
      }
      const rows = await entry.rows
      const from = lowerBound(rows, range.lo)
      const to = range.hi === null ? rows.length : lowerBound(rows, range.hi)
      return rows.slice(from, to)
    },
  }
}
