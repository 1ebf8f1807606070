import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { groupBy } from '../../../common/group.ts'
import { storedAmounts, zeroWalletAmounts } from '../../../engine/index.ts'
import { feeModelOf, setFeeModelHeaders } from '../../fee-model-headers.ts'
import type { Unit } from '../../record-fields.ts'
import { FormatQuery, jsonOrCsv, sendCsv, wantsCsv } from '../../reporting/csv.ts'
import { parseDate, reportOr404 } from '../../reporting/dates.ts'
import { answeredFromCache, setReportHeaders } from '../../reporting/etag.ts'
import { rejectUnit } from '../../reporting/inputs.ts'
import { readingOrg } from '../../reporting/reads.ts'
import { errorResponses } from '../../schemas.ts'
import { presentStoredWallet } from '../../wallet-presentation.ts'
import { checkCount, type RewardContext, type RewardRead } from './context.ts'
import { csvFields, totalsInFiat, totalsOf, walletInFiat } from './presenting.ts'
import {
  AsOf,
  accountRecordSchema,
  DateString,
  eitherUnit,
  ImpersonateHeaders,
  UnitSchema,
} from './schemas.ts'

/**
 * POST /eth/v1/rewards/accounts and POST /eth/v0/rewards/accounts: the account reward records of a date (the
 * reading organization's accounts), v0 with the discount fields and a `unit`.
 */
export function accountRoutes(app: FastifyInstance, ctx: RewardContext) {
  const { rewards, tags } = ctx
  const accountsBody = Type.Object({
    accounts: Type.Array(Type.String({ minLength: 1 }), {
      minItems: 1,
      description: 'account ids (or keys)',
    }),
    date: DateString,
  })

  app.post(
    '/eth/v1/rewards/accounts',
    {
      ...rewards,
      schema: {
        tags,
        summary: "Account reward records of a date (the reading organization's accounts)",
        description:
          'Unknown accounts and accounts of other organizations are omitted. An account without wallets ' +
          'holding LsETH that day has zero totals and no wallets. At most 1000 accounts.',
        headers: ImpersonateHeaders,
        body: accountsBody,
        querystring: Type.Object({ ...AsOf.properties, ...FormatQuery }),
        response: {
          200: jsonOrCsv(Type.Array(accountRecordSchema('v1', 'lseth'))),
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (request, reply) => {
      rejectUnit(request)
      return accountsRead(ctx, request, reply, 'v1', 'lseth')
    },
  )

  app.post(
    '/eth/v0/rewards/accounts',
    {
      ...rewards,
      schema: {
        tags,
        summary: 'Account reward records of a date with the v0 fields (discount and rebates)',
        headers: ImpersonateHeaders,
        querystring: Type.Object({ ...AsOf.properties, ...FormatQuery }),
        body: Type.Object({
          accounts: accountsBody.properties.accounts,
          date: DateString,
          unit: Type.Optional(UnitSchema),
        }),
        response: {
          200: jsonOrCsv(Type.Array(eitherUnit('v0', accountRecordSchema))),
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (request, reply) => {
      const { unit } = request.body as { unit?: Unit }
      return accountsRead(ctx, request, reply, 'v0', unit ?? 'lseth')
    },
  )
}

/** The answer of POST /eth/{v1,v0}/rewards/accounts: the records of the caller's accounts on the date. */
const accountsRead: RewardRead = async (ctx, request, reply, version, unit) => {
  const { repos, readsOf } = ctx
  const body = request.body as { accounts: string[]; date: string }
  checkCount(body.accounts, 'accounts')
  const date = parseDate(body.date, 'date')
  const orgId = readingOrg(request)
  const day = await reportOr404(readsOf(request), date)
  const model = feeModelOf(day)
  // before the answer memo is looked in: a kept answer carries the headers too
  setReportHeaders(reply, day)
  setFeeModelHeaders(request, reply, new Set([model]))
  const csv = wantsCsv(request)
  const ids = await ctx.accountsOf(orgId, body.accounts)
  if (answeredFromCache(request, reply, [day], { orgId, ids, unit, csv })) return reply
  const [accounts, wallets] = await readsOf(request).cached([day], `accounts:${ids.join(',')}`, () =>
    Promise.all([repos.reports.accountRecords(day, ids), repos.reports.accountWalletRecords(day, ids)]),
  )
  const storedOf = new Map(accounts.map((a) => [a.account_id, a]))
  const walletsOf = groupBy(wallets, (w) => w.account_id)
  const fiat = await ctx.fiatOf(request, [day])
  const records = ids.map((id) => {
    const stored = storedOf.get(id)
    const amounts = stored ? storedAmounts(stored) : zeroWalletAmounts()
    return {
      account_id: id,
      fee_model: model,
      totals: totalsInFiat(
        fiat,
        day.report_epoch,
        amounts,
        totalsOf(amounts, version, unit, new Set([model])),
      ),
      date: day.date,
      wallets: (walletsOf.get(id) ?? []).map((w) =>
        walletInFiat(fiat, w, presentStoredWallet(w, orgId, version, unit)),
      ),
    }
  })
  if (csv) {
    const rows = records.flatMap((r) => r.wallets)
    return sendCsv(reply, `accounts-${day.date}`, csvFields(version, unit, fiat), rows)
  }
  return records
}
