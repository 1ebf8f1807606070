import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { toAddress as normalizeAddress } from '../../../common/address.ts'
import { groupBy } from '../../../common/group.ts'
import { isUuid } from '../../../db/repos/accounts.ts'
import type { ReportDay } from '../../../db/repos/reports.ts'
import { rollRange, rollUp, storedAmounts, zeroWalletAmounts } from '../../../engine/index.ts'
import { ApiError } from '../../errors.ts'
import { feeModelOf, feeModelsOf } from '../../fee-model-headers.ts'
import { CurrencyQuery } from '../../fiat-view.ts'
import type { RecordVersion, Unit } from '../../record-fields.ts'
import { FormatQuery, jsonOrCsv, sendCsv } from '../../reporting/csv.ts'
import { summaryDates, summaryRange, walletRecordsOr404 } from '../../reporting/dates.ts'
import { rejectUnit } from '../../reporting/inputs.ts'
import { AsOfQuery } from '../../reporting/reads.ts'
import { errorResponses } from '../../schemas.ts'
import { presentStoredWallet } from '../../wallet-presentation.ts'
import type { RewardContext, RewardRead } from './context.ts'
import { organizationSummary } from './organization-summary.ts'
import { coverage, csvFields, totalsInFiat, totalsOf, walletInFiat } from './presenting.ts'
import {
  periodFields,
  periodHead,
  periodHeadCells,
  presentPeriod,
  rollupDays,
  rollupPrices,
} from './rollup-presenting.ts'
import {
  accountSummarySchema,
  eitherUnit,
  GroupByQuery,
  ImpersonateHeaders,
  organizationSummarySchema,
  UnitSchema,
  walletSummarySchema,
} from './schemas.ts'
import {
  periodCsvFields,
  summaryAnsweredFromCache,
  summaryRequest,
  withReportBefore,
} from './summary-reads.ts'

/**
 * GET /eth/{v1,v0}/rewards/{wallets,accounts}/:idOrKey/summary and /eth/{v1,v0}/rewards/organization/summary:
 * a wallet's, an account's or the reading organization's rewards over a range of dates by the stock/flow
 * rule (engine/field-kinds.ts, engine/rollup.ts): the totals, and the daily series or, with `group_by`, the
 * UTC calendar periods.
 */
export function summaryRoutes(app: FastifyInstance, ctx: RewardContext) {
  const { rewards, tags } = ctx
  const rangeQuery = {
    from: Type.Optional(Type.String({ description: 'YYYY-MM-DD; default: 29 days before to' })),
    to: Type.Optional(Type.String({ description: 'YYYY-MM-DD; default: the latest computed date' })),
  }
  const IdOrKey = Type.Object({ idOrKey: Type.String({ minLength: 1, maxLength: 256 }) })
  const totalsRule =
    'totals: flows summed over the range; stocks (balances, conversion_rate, total_*) at the last report, ' +
    'and opening_* at the close of the report before the first; rates from the summed amounts. At most 366 days.'

  for (const version of ['v1', 'v0'] as const) {
    const common = { ...rangeQuery, ...AsOfQuery, ...CurrencyQuery, ...GroupByQuery, ...FormatQuery }
    const query =
      version === 'v1' ? Type.Object(common) : Type.Object({ ...common, unit: Type.Optional(UnitSchema) })
    const unitOf = (request: FastifyRequest): Unit => {
      if (version === 'v1') {
        rejectUnit(request)
        return 'lseth'
      }
      return (request.query as { unit?: Unit }).unit ?? 'lseth'
    }
    const summaries = [
      {
        path: 'wallets/:idOrKey/summary',
        whose: "A wallet's",
        what: 'idOrKey: a wallet id of the reading organization, or any 0x address. ',
        params: IdOrKey,
        schema: eitherUnit(version, walletSummarySchema),
        handler: walletSummary,
      },
      {
        path: 'accounts/:idOrKey/summary',
        whose: "An account's",
        what: 'idOrKey: an account id or key of the reading organization. ',
        params: IdOrKey,
        schema: eitherUnit(version, accountSummarySchema),
        handler: accountSummary,
      },
      {
        path: 'organization/summary',
        whose: "The reading organization's",
        what: 'Its accounts together (group_by default: day); CSV: one row per period and account. ',
        params: undefined,
        schema: eitherUnit(version, organizationSummarySchema),
        handler: organizationSummary,
      },
    ]
    for (const summary of summaries) {
      app.get(
        `/eth/${version}/rewards/${summary.path}`,
        {
          ...rewards,
          schema: {
            tags,
            summary: `${summary.whose} rewards over a range of dates: totals and the daily series or periods (${version} fields)`,
            description: summary.what + totalsRule,
            ...(summary.params ? { params: summary.params } : {}),
            querystring: query,
            headers: ImpersonateHeaders,
            response: { 200: jsonOrCsv(summary.schema), ...errorResponses(400, 401, 403, 404) },
          },
        },
        async (request, reply) => summary.handler(ctx, request, reply, version, unitOf(request)),
      )
    }
  }
}

/** The address a wallet summary is about: a wallet id of the reading org, or any holder's address. */
async function summaryAddress(ctx: RewardContext, orgId: string, idOrKey: string): Promise<string> {
  if (/^0x/i.test(idOrKey)) return normalizeAddress(idOrKey, 'idOrKey')
  const wallet = isUuid(idOrKey) ? await ctx.repos.wallets.findByIdOrAddress(orgId, idOrKey) : undefined
  if (!wallet) throw new ApiError('IR3100', `wallet ${JSON.stringify(idOrKey)} not found`)
  return wallet.address
}

/** GET /eth/{v1,v0}/rewards/wallets/:idOrKey/summary. */
const walletSummary: RewardRead = async (ctx, request, reply, version, unit) => {
  const { readsOf } = ctx
  const { idOrKey, query, orgId, csv, groupBy: by } = summaryRequest(request)
  const address = await summaryAddress(ctx, orgId, idOrKey)
  const { from, to } = await summaryDates(readsOf(request), query)
  const { days, rows } = await walletRecordsOr404(readsOf(request), from, to, [address])
  const priced = await withReportBefore(readsOf(request), days)
  const inputs = { orgId, address, from, to, unit, csv, by }
  if (summaryAnsweredFromCache(request, reply, days, priced, inputs)) return reply
  const models = feeModelsOf(days)
  const fiat = await ctx.fiatOf(request, priced)
  const currency = fiat?.currency
  const own = rows.every((row) => row.org_id === orgId)
  const prices = rollupPrices(fiat, priced)
  const before = priced.length > days.length ? priced.slice(0, 1) : []
  const opening = before.length > 0 ? (await readsOf(request).walletRows(before, [address])).rows : []
  const rolled = rollupDays([...opening, ...rows], rows, priced, days, prices)
  const name = `wallet-${address}-${from}-${to}`
  const periods = (by === undefined ? [] : rollUp(rolled, from, to, by)).map((p) => ({
    ...periodHead(p),
    ...presentPeriod(p, version, unit, currency, own),
  }))
  if (by !== undefined && csv) {
    const cells = periods.map((p) => ({ ...p, ...periodHeadCells(p) }))
    return sendCsv(reply, `${name}-${by}`, periodCsvFields(version, unit, currency), cells)
  }
  const presented = rows.map((row) => walletInFiat(fiat, row, presentStoredWallet(row, orgId, version, unit)))
  if (csv) return sendCsv(reply, name, csvFields(version, unit, fiat), presented)
  const last = rows[rows.length - 1]
  const totals =
    rolled.length > 0
      ? presentPeriod(rollRange(rolled, from, to), version, unit, currency, own)
      : emptyTotals(version, unit, currency, models)
  return {
    address,
    account_id: own ? (last?.account_id ?? null) : null,
    ...coverage(days, from, to, models),
    ...(by !== undefined ? { group_by: by } : {}),
    totals,
    ...(by !== undefined ? { periods } : { days: presented }),
  }
}

/** The totals of a summary with no record in its range (a wallet that held nothing): every amount zero. */
function emptyTotals(
  version: RecordVersion,
  unit: Unit,
  currency: 'usd' | 'eur' | undefined,
  models: ReadonlySet<'v0' | 'v3'>,
): Record<string, string | null> {
  const zero = totalsOf(zeroWalletAmounts(), version, unit, models)
  const out: Record<string, string | null> = {}
  for (const field of periodFields(version, unit, currency)) {
    out[field] = zero[field.replace(/^opening_/, '')] ?? null
  }
  return out
}

/** GET /eth/{v1,v0}/rewards/accounts/:idOrKey/summary. */
const accountSummary: RewardRead = async (ctx, request, reply, version, unit) => {
  const { repos, readsOf } = ctx
  const { idOrKey, query, orgId, csv, groupBy: by } = summaryRequest(request)
  const account = await repos.accounts.findByIdOrKey(orgId, idOrKey)
  if (!account) throw new ApiError('IR3000', `account ${JSON.stringify(idOrKey)} not found`)
  const { from, to, days } = await summaryRange(readsOf(request), query)
  const priced = await withReportBefore(readsOf(request), days)
  const inputs = { orgId, account: account.id, from, to, unit, csv, by }
  if (summaryAnsweredFromCache(request, reply, days, priced, inputs)) return reply
  const series = await readsOf(request).cached(priced, `account-series:${account.id}`, () =>
    repos.reports.accountSeries(priced, account.id),
  )
  const models = feeModelsOf(days)
  const fiat = await ctx.fiatOf(request, priced)
  const currency = fiat?.currency
  const prices = rollupPrices(fiat, priced)
  const rolled = rollupDays(series.accounts, series.wallets, priced, days, prices)
  const totals =
    rolled.length > 0
      ? presentPeriod(rollRange(rolled, from, to), version, unit, currency)
      : emptyTotals(version, unit, currency, models)
  const head = { account_id: account.id, ...coverage(days, from, to, models) }
  if (by !== undefined) {
    const walletDays = groupBy(series.wallets, (w) => w.address)
    const periods = rollUp(rolled, from, to, by).map((p) => ({
      ...periodHead(p),
      ...presentPeriod(p, version, unit, currency),
      wallets: [...walletDays].flatMap(([address, rows]) =>
        rollUp(rollupDays(rows, rows, priced, days, prices), p.from, p.to, by).map((w) => ({
          address,
          ...presentPeriod(w, version, unit, currency),
        })),
      ),
    }))
    if (csv) {
      const cells = periods.flatMap((p) => p.wallets.map((w) => ({ ...periodHeadCells(p), ...w })))
      const name = `account-${account.id}-${from}-${to}-${by}`
      return sendCsv(reply, name, periodCsvFields(version, unit, currency, 'address'), cells)
    }
    return { ...head, group_by: by, totals, periods }
  }
  const dayOf = new Map(days.map((d) => [d.report_epoch, d]))
  const walletsOn = groupBy(series.wallets, (w) => w.report_epoch)
  const daily = series.accounts
    .filter((row) => dayOf.has(row.report_epoch))
    .map((row) => {
      const model = feeModelOf(dayOf.get(row.report_epoch) as ReportDay)
      const amounts = storedAmounts(row)
      return {
        oracle_report: row.report_epoch,
        date: row.date,
        fee_model: model,
        totals: totalsInFiat(
          fiat,
          row.report_epoch,
          amounts,
          totalsOf(amounts, version, unit, new Set([model])),
        ),
        wallets: (walletsOn.get(row.report_epoch) ?? []).map((w) =>
          walletInFiat(fiat, w, presentStoredWallet(w, orgId, version, unit)),
        ),
      }
    })
  if (csv) {
    const rows = daily.flatMap((d) => d.wallets)
    return sendCsv(reply, `account-${account.id}-${from}-${to}`, csvFields(version, unit, fiat), rows)
  }
  return { ...head, totals, days: daily }
}
