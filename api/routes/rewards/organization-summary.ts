import { groupBy } from '../../../common/group.ts'
import type { AccountRecordRow, WalletRecordRow } from '../../../db/repos/reports.ts'
import { rollRange, rollUp } from '../../../engine/index.ts'
import { ApiError } from '../../errors.ts'
import { feeModelsOf } from '../../fee-model-headers.ts'
import { sendCsv } from '../../reporting/csv.ts'
import { summaryRange } from '../../reporting/dates.ts'
import { MAX_REPORT_ITEMS } from '../../reporting/inputs.ts'
import type { RewardRead } from './context.ts'
import { coverage } from './presenting.ts'
import { periodHead, periodHeadCells, presentPeriod, rollupDays, rollupPrices } from './rollup-presenting.ts'
import {
  periodCsvFields,
  summaryAnsweredFromCache,
  summaryRequest,
  withReportBefore,
} from './summary-reads.ts'

/**
 * GET /eth/{v1,v0}/rewards/organization/summary: the reading organization's accounts together over a range
 * of dates, by the stock/flow rule (engine/rollup.ts). An organization's day is the sum of its accounts'
 * records of that report (so its fiat values are that sum at the report's price); `group_by` defaults to
 * `day` (there is no daily wallet listing). Each period lists its accounts (`accounts[]`, each rolled by the
 * same rule); CSV: one row per (period, account). At most 1000 accounts (400 IR1006 beyond).
 */
export const organizationSummary: RewardRead = async (ctx, request, reply, version, unit) => {
  const { repos, readsOf } = ctx
  const { query, orgId, csv, groupBy: asked } = summaryRequest(request)
  const by = asked ?? 'day'
  const { from, to, days } = await summaryRange(readsOf(request), query)
  const { rows: accounts, total } = await repos.accounts.list(orgId, { offset: 0, limit: MAX_REPORT_ITEMS })
  if (total > MAX_REPORT_ITEMS) {
    throw new ApiError(
      'IR1006',
      `an organization summary covers at most ${MAX_REPORT_ITEMS} accounts (the organization has ${total})`,
    )
  }
  const ids = accounts.map((a) => a.id).sort()
  const priced = await withReportBefore(readsOf(request), days)
  const inputs = { orgId, accounts: ids, from, to, unit, csv, by }
  if (summaryAnsweredFromCache(request, reply, days, priced, inputs)) return reply
  const series = await Promise.all(
    ids.map((id) =>
      readsOf(request).cached(priced, `account-series:${id}`, () => repos.reports.accountSeries(priced, id)),
    ),
  )
  const rows: AccountRecordRow[] = series.flatMap((s) => s.accounts)
  const wallets: WalletRecordRow[] = series.flatMap((s) => s.wallets)
  const models = feeModelsOf(days)
  const fiat = await ctx.fiatOf(request, priced)
  const currency = fiat?.currency
  const prices = rollupPrices(fiat, priced)
  const orgDays = rollupDays(rows, wallets, priced, days, prices)
  const byAccount = groupBy(rows, (r) => r.account_id)
  const periods = rollUp(orgDays, from, to, by).map((p) => ({
    ...periodHead(p),
    ...presentPeriod(p, version, unit, currency),
    accounts: ids.flatMap((id, i) =>
      rollUp(
        rollupDays(byAccount.get(id) ?? [], series[i]?.wallets ?? [], priced, days, prices),
        p.from,
        p.to,
        by,
      ).map((a) => ({
        account_id: id,
        ...presentPeriod(a, version, unit, currency),
      })),
    ),
  }))
  if (csv) {
    const cells = periods.flatMap((p) => p.accounts.map((a) => ({ ...periodHeadCells(p), ...a })))
    const fields = periodCsvFields(version, unit, currency, 'account_id')
    return sendCsv(reply, `organization-${orgId}-${from}-${to}-${by}`, fields, cells)
  }
  if (orgDays.length === 0) {
    throw new ApiError('IR4000', `the organization's accounts have no record from ${from} to ${to}`)
  }
  return {
    org_id: orgId,
    ...coverage(days, from, to, models),
    group_by: by,
    totals: presentPeriod(rollRange(orgDays, from, to), version, unit, currency),
    periods,
  }
}
