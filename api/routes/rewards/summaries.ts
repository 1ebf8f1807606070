import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { toAddress as normalizeAddress } from '../../../common/address.ts'
import { groupBy } from '../../../common/group.ts'
import { isUuid } from '../../../db/repos/accounts.ts'
import type { ReportDay } from '../../../db/repos/reports.ts'
import { summarizeRange, zeroWalletAmounts } from '../../../engine/index.ts'
import { ApiError } from '../../errors.ts'
import { feeModelOf, feeModelsOf, setFeeModelHeaders } from '../../fee-model-headers.ts'
import { CurrencyQuery, sumFiat } from '../../fiat-view.ts'
import { type Unit, WALLET_AMOUNTS } from '../../record-fields.ts'
import { jsonOrCsv, sendCsv, wantsCsv } from '../../reporting/csv.ts'
import { summaryDates, summaryRange, walletRecordsOr404 } from '../../reporting/dates.ts'
import { answeredFromCache, setReportHeaders } from '../../reporting/etag.ts'
import { rejectUnit } from '../../reporting/inputs.ts'
import { AsOfQuery, readingOrg } from '../../reporting/reads.ts'
import { errorResponses } from '../../schemas.ts'
import { amountsOf, presentStoredWallet } from '../../wallet-presentation.ts'
import type { RewardContext, RewardRead } from './context.ts'
import { coverage, csvFields, totalsInFiat, totalsOf, walletInFiat } from './presenting.ts'
import {
  accountSummarySchema,
  eitherUnit,
  ImpersonateHeaders,
  UnitSchema,
  walletSummarySchema,
} from './schemas.ts'

/**
 * GET /eth/{v1,v0}/rewards/{wallets,accounts}/:idOrKey/summary: a wallet's or an account's rewards over a
 * range of dates, the totals and the daily series.
 */
export function summaryRoutes(app: FastifyInstance, ctx: RewardContext) {
  const { rewards, tags } = ctx
  const rangeQuery = {
    from: Type.Optional(Type.String({ description: 'YYYY-MM-DD; default: 29 days before to' })),
    to: Type.Optional(Type.String({ description: 'YYYY-MM-DD; default: the latest computed date' })),
  }
  const IdOrKey = Type.Object({ idOrKey: Type.String({ minLength: 1, maxLength: 256 }) })

  for (const version of ['v1', 'v0'] as const) {
    const query =
      version === 'v1'
        ? Type.Object({ ...rangeQuery, ...AsOfQuery, ...CurrencyQuery })
        : Type.Object({ ...rangeQuery, ...AsOfQuery, ...CurrencyQuery, unit: Type.Optional(UnitSchema) })
    const unitOf = (request: FastifyRequest): Unit => {
      if (version === 'v1') {
        rejectUnit(request)
        return 'lseth'
      }
      return (request.query as { unit?: Unit }).unit ?? 'lseth'
    }
    const summaries = [
      {
        what: 'wallets',
        whose: "A wallet's",
        idOrKey: 'a wallet id of the reading organization, or any 0x address',
        schema: eitherUnit(version, walletSummarySchema),
        handler: walletSummary,
      },
      {
        what: 'accounts',
        whose: "An account's",
        idOrKey: 'an account id or key of the reading organization',
        schema: eitherUnit(version, accountSummarySchema),
        handler: accountSummary,
      },
    ]
    for (const summary of summaries) {
      app.get(
        `/eth/${version}/rewards/${summary.what}/:idOrKey/summary`,
        {
          ...rewards,
          schema: {
            tags,
            summary: `${summary.whose} rewards over a range of dates: totals and the daily series (${version} fields)`,
            description:
              `idOrKey: ${summary.idOrKey}. totals: period amounts summed over the range, ` +
              'balance_lseth and total_* as of the last report. At most 366 days.',
            params: IdOrKey,
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

/** What both summaries start with: the request's id or key, its reading org, its range query. */
function summaryRequest(request: FastifyRequest) {
  const { idOrKey } = request.params as { idOrKey: string }
  const query = request.query as { from?: string; to?: string }
  return { idOrKey, query, orgId: readingOrg(request), csv: wantsCsv(request) }
}

/**
 * Report and fee model headers of a summary's days (set before the answer memo is looked in: a kept answer
 * carries them too); true once answered from it (304 on a matching If-None-Match, or the kept bytes).
 */
function summaryAnsweredFromCache(
  request: FastifyRequest,
  reply: FastifyReply,
  days: readonly ReportDay[],
  inputs: Record<string, unknown>,
): boolean {
  setReportHeaders(reply, days)
  setFeeModelHeaders(request, reply, feeModelsOf(days))
  return answeredFromCache(request, reply, days, inputs)
}

/** GET /eth/{v1,v0}/rewards/wallets/:idOrKey/summary. */
const walletSummary: RewardRead = async (ctx, request, reply, version, unit) => {
  const { readsOf } = ctx
  const { idOrKey, query, orgId, csv } = summaryRequest(request)
  const address = await summaryAddress(ctx, orgId, idOrKey)
  const { from, to } = await summaryDates(readsOf(request), query)
  const { days, rows } = await walletRecordsOr404(readsOf(request), from, to, [address])
  if (summaryAnsweredFromCache(request, reply, days, { orgId, address, from, to, unit, csv })) return reply
  const models = feeModelsOf(days)
  const fiat = await ctx.fiatOf(request, days)
  const presented = rows.map((row) => walletInFiat(fiat, row, presentStoredWallet(row, orgId, version, unit)))
  if (csv) return sendCsv(reply, `wallet-${address}-${from}-${to}`, csvFields(version, unit, fiat), presented)
  const last = rows[rows.length - 1]
  const own = rows.every((row) => row.org_id === orgId)
  const totals = totalsOf(
    rows.length > 0 ? summarizeRange(rows.map(amountsOf)) : zeroWalletAmounts(),
    version,
    unit,
    models,
    own,
  )
  return {
    address,
    account_id: own ? (last?.account_id ?? null) : null,
    ...coverage(days, from, to, models),
    totals: fiat ? sumFiat(totals, presented, WALLET_AMOUNTS, fiat.currency) : totals,
    days: presented,
  }
}

/** GET /eth/{v1,v0}/rewards/accounts/:idOrKey/summary. */
const accountSummary: RewardRead = async (ctx, request, reply, version, unit) => {
  const { repos, readsOf } = ctx
  const { idOrKey, query, orgId, csv } = summaryRequest(request)
  const account = await repos.accounts.findByIdOrKey(orgId, idOrKey)
  if (!account) throw new ApiError('IR3000', `account ${JSON.stringify(idOrKey)} not found`)
  const { from, to, days } = await summaryRange(readsOf(request), query)
  if (summaryAnsweredFromCache(request, reply, days, { orgId, account: account.id, from, to, unit, csv })) {
    return reply
  }
  const series = await readsOf(request).cached(days, `account-series:${account.id}`, () =>
    repos.reports.accountSeries(days, account.id),
  )
  const dayOf = new Map(days.map((d) => [d.report_epoch, d]))
  const walletsOn = groupBy(series.wallets, (w) => w.report_epoch)
  const models = feeModelsOf(days)
  const fiat = await ctx.fiatOf(request, days)
  const daily = series.accounts.map((row) => {
    const model = feeModelOf(dayOf.get(row.report_epoch) as ReportDay)
    const amounts = amountsOf(row)
    return {
      oracle_report: row.report_epoch,
      date: row.date,
      fee_model: model,
      amounts,
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
  const totals = totalsOf(
    daily.length > 0 ? summarizeRange(daily.map((d) => d.amounts)) : zeroWalletAmounts(),
    version,
    unit,
    models,
  )
  return {
    account_id: account.id,
    ...coverage(days, from, to, models),
    totals: fiat
      ? sumFiat(
          totals,
          daily.map((d) => d.totals),
          WALLET_AMOUNTS,
          fiat.currency,
        )
      : totals,
    days: daily.map((d) => ({
      oracle_report: d.oracle_report,
      date: d.date,
      fee_model: d.fee_model,
      totals: d.totals,
      wallets: d.wallets,
    })),
  }
}
