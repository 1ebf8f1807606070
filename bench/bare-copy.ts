/**
 * The storage's limit for the benchmarks' ratios: the same wallet records, copied out of the database into
 * a file, then COPY'd into an empty clone of `wallet_records` (same columns and indexes) on the same
 * Postgres, timed alone. A pipeline's rows/s over this rows/s, measured in the same run, is its ratio.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { pipeline } from 'node:stream/promises'
import pg from 'pg'
import { from as copyFrom, to as copyTo } from 'pg-copy-streams'
import { WALLET_RECORD_COLUMNS } from '../db/records/columns.ts'
import { postgresCpuMeter } from './postgres-cpu.ts'

/** What a bare COPY measured. */
export interface BareCopy {
  rows: number
  seconds: number
  rows_per_second: number
  mb: number
  postgres_cpu_seconds: number
  postgres_background_cpu_seconds: number
  load_average: number[]
}

/**
 * Times a bare COPY of the wallet records matching `where` (SQL over `wallet_records`, written by the
 * benchmark itself) into an empty clone of the table, in one transaction.
 *
 * @example
 * const bare = await bareCopy(url, 'chain_id = 31337 and report_epoch = 400450')
 * const ratio = pipelineRowsPerSecond / bare.rows_per_second
 */
export async function bareCopy(url: string, where: string): Promise<BareCopy> {
  const file = path.join(os.tmpdir(), `lsreport-bench-bare-${process.pid}.tsv`)
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const columns = WALLET_RECORD_COLUMNS.map((c) => `"${c}"`).join(', ')
    const out = client.query(
      copyTo(`COPY (select ${columns} from wallet_records where ${where} order by address) TO STDOUT`),
    )
    await pipeline(out, fs.createWriteStream(file))
    await client.query('create table wallet_records_bare (like wallet_records including all)')
    await client.query('checkpoint')
    const bytes = fs.statSync(file).size
    const database = new URL(url).pathname.slice(1)
    const cpu = postgresCpuMeter(database)
    const started = performance.now()
    await client.query('BEGIN')
    const copy = client.query(copyFrom(`COPY wallet_records_bare (${columns}) FROM STDIN`))
    await pipeline(fs.createReadStream(file, { highWaterMark: 64 * 1024 }), copy)
    await client.query('COMMIT')
    const seconds = (performance.now() - started) / 1000
    const cpuUsed = cpu.total()
    const rows = Number(copy.rowCount)
    await client.query('drop table wallet_records_bare')
    return {
      rows,
      seconds: Number(seconds.toFixed(2)),
      rows_per_second: Math.round(rows / seconds),
      mb: Number((bytes / 2 ** 20).toFixed(1)),
      postgres_cpu_seconds: cpuUsed.backends,
      postgres_background_cpu_seconds: cpuUsed.background,
      load_average: os.loadavg().map((l) => Number(l.toFixed(2))),
    }
  } finally {
    await client.end()
    fs.rmSync(file, { force: true })
  }
}
