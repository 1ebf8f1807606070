/**
 * Prints the journal export (jobs/exports/build.ts, kind=journal) of the demo account of `lsreport up` for
 * one month, in USD, from the embedded database of a data directory (stop `npm start` first: PGlite allows
 * one process). The lines of docs/finance.md were made with it:
 *
 *   npm start            # until "live", then Ctrl-C
 *   npx tsx tools/demo-journal.ts [data dir (./data)] [month (2026-05)]
 */
import path from 'node:path'
import { openDb } from '../db/index.ts'
import { createRepos } from '../db/repos/index.ts'
import { calendarPeriod } from '../engine/index.ts'
import { buildExport } from '../jobs/exports/build.ts'

const dataDir = process.argv[2] ?? 'data'
const month = process.argv[3] ?? '2026-05'
const dbh = await openDb({ pgliteDir: path.join(dataDir, 'pg') })
try {
  const repos = createRepos(dbh.db)
  const account = await dbh.db('accounts').where({ key: 'demo' }).first()
  const [day] = await repos.reports.visibleDays()
  if (!account || !day) throw new Error(`no demo account or no computed day in ${dataDir}`)
  const { first, last } = calendarPeriod(`${month}-01`, 'month')
  await buildExport(
    repos,
    {
      chainId: day.chain_id,
      orgId: account.org_id,
      accountIds: [account.id],
      from: first,
      to: last,
      granularity: 'month',
      currency: 'usd',
      kind: 'journal',
      apiVersion: 'v1',
    },
    process.stdout,
  )
} finally {
  await dbh.close()
}
