import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { toAddress as normalizeAddress } from '../../../common/address.ts'
import type { ReportDay, WalletRecordRow } from '../../../db/repos/reports.ts'
import { currencyOf } from '../../fiat-view.ts'
import { FormatQuery, jsonOrCsv, sendCsv, wantsCsv } from '../../reporting/csv.ts'
import { noReport, parseDate, walletRecordsOr404 } from '../../reporting/dates.ts'
import { answerEtag, answeredFromCache, answeredWithEtag, setReportHeaders } from '../../reporting/etag.ts'
import { rejectUnit } from '../../reporting/inputs.ts'
import { readingOrg } from '../../reporting/reads.ts'
import { errorResponses } from '../../schemas.ts'
import { presentStoredWallet, sendStoredWallets, walletRecordSchema } from '../../wallet-presentation.ts'
import { checkCount, type RewardContext } from './context.ts'
import { csvFields, walletInFiat } from './presenting.ts'
import { AsOf, DateString, ImpersonateHeaders } from './schemas.ts'

/** POST /eth/v1/rewards/wallets: the wallet reward records of a date, by address (any LsETH holder). */
export function walletRoutes(app: FastifyInstance, ctx: RewardContext) {
  const { rewards, tags, readsOf } = ctx
  const walletsBody = Type.Object({
    addresses: Type.Array(Type.String(), { minItems: 1 }),
    date: DateString,
  })

  app.post(
    '/eth/v1/rewards/wallets',
    {
      // its records' bytes are kept beside them already (sendStoredWallets): no second copy
      onRequest: rewards.onRequest,
      schema: {
        tags,
        summary: 'Wallet reward records of a date, by address (any LsETH holder)',
        description:
          'Addresses without a record that day are omitted. account_id / org_id (and discount data) are shown ' +
          "only for the reading organization's wallets. At most 1000 addresses.",
        headers: ImpersonateHeaders,
        body: walletsBody,
        querystring: Type.Object({ ...AsOf.properties, ...FormatQuery }),
        response: {
          200: jsonOrCsv(Type.Array(walletRecordSchema('v1'))),
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    (request, reply) => {
      rejectUnit(request)
      const body = request.body as { addresses: string[]; date: string }
      checkCount(body.addresses, 'addresses')
      // one address (the common read): no set to drop duplicates from
      const addresses =
        body.addresses.length === 1
          ? [normalizeAddress(body.addresses[0] as string, 'addresses[0]')]
          : [...new Set(body.addresses.map((a, i) => normalizeAddress(a, `addresses[${i}]`)))]
      const date = parseDate(body.date, 'date')
      const orgId = readingOrg(request)
      // the date's report and the records of the addresses on it: from memory once read, and then answered
      // with no promise at all
      const held = readsOf(request).heldWalletRows(date, addresses)
      if (held) {
        const sent = walletsReply(ctx, request, reply, orgId, addresses, held.days[0] as ReportDay, held.rows)
        // a CSV or fiat answer is sent once the day's prices are read
        return sent instanceof Promise ? sent : undefined
      }
      return (async () => {
        const {
          days: [day],
          rows,
        } = await walletRecordsOr404(readsOf(request), date, date, addresses)
        if (!day) throw await noReport(readsOf(request), date)
        return walletsReply(ctx, request, reply, orgId, addresses, day, rows)
      })()
    },
  )
}

/** The answer of POST /eth/v1/rewards/wallets: `rows`, the records of `addresses` on `day`. */
function walletsReply(
  ctx: RewardContext,
  request: FastifyRequest,
  reply: FastifyReply,
  orgId: string,
  addresses: readonly string[],
  day: ReportDay,
  rows: readonly WalletRecordRow[],
) {
  setReportHeaders(reply, day)
  const csv = wantsCsv(request)
  const row = rows.length === 1 ? (rows[0] as WalletRecordRow) : undefined
  if (
    day.status === 'computed' &&
    !csv &&
    row !== undefined &&
    addresses.length === 1 &&
    row.address === addresses[0] &&
    currencyOf(request) === undefined
  ) {
    // the hot path, one record of a computed day in ETH: its ETag is kept beside it (the route keeps no
    // answers: its records' bytes are kept beside them)
    if (answeredWithEtag(request, reply, walletEtag(request, day, row, orgId), false)) return reply
    return sendStoredWallets(reply, rows, orgId, 'v1')
  }
  if (answeredFromCache(request, reply, [day], { orgId, addresses, csv })) return reply
  // rows: the records of addresses on this day, in request order (walletRows): the answer
  const currency = currencyOf(request)
  if (csv || currency !== undefined) {
    // the fiat values need the day's prices: sent when they are read (the promise ends with the reply)
    return (async () => {
      const fiat = await ctx.fiatOf(request, [day])
      const records = rows.map((row) => walletInFiat(fiat, row, presentStoredWallet(row, orgId, 'v1')))
      if (!csv) return reply.send(records)
      return sendCsv(reply, `wallets-${day.date}`, csvFields('v1', 'lseth', fiat), records)
    })()
  }
  return sendStoredWallets(reply, rows, orgId, 'v1')
}

/** The ETags of one-record JSON answers, beside their record (one day version's), by reading organization. */
const walletEtags = new WeakMap<WalletRecordRow, Map<string, string>>()

/**
 * The ETag `answeredFromCache` gives the JSON answer of `row` alone on `day` read by `orgId` (inputs
 * `{ orgId, addresses: [row.address], csv: false }`, no currency), worked out once per record and organization:
 * building and hashing its identity text on every request was the read's largest own cost (bench:api).
 */
function walletEtag(request: FastifyRequest, day: ReportDay, row: WalletRecordRow, orgId: string): string {
  let byOrg = walletEtags.get(row)
  let etag = byOrg?.get(orgId)
  if (etag === undefined) {
    etag = answerEtag(request, [day], { orgId, addresses: [row.address], csv: false })
    if (!byOrg) {
      byOrg = new Map()
      walletEtags.set(row, byOrg)
    }
    byOrg.set(orgId, etag)
  }
  return etag
}
