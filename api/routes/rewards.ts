import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { type TSchema, Type } from 'typebox'
import { toAddress as normalizeAddress } from '../../common/address.ts'
import { groupBy } from '../../common/group.ts'
import { isUuid } from '../../db/repos/accounts.ts'
import type { Price, Repos } from '../../db/repos/index.ts'
import type { ReportDay, WalletRecordRow } from '../../db/repos/reports.ts'
import {
  computeLotRewards,
  type FeeModel,
  type PresentedWalletRecord,
  presentTotals,
  summarizeRange,
  WALLET_AMOUNT_FIELDS,
  type WalletAmountField,
  type WalletAmounts,
  zeroWalletAmounts,
} from '../../engine/index.ts'
import { ApiError } from '../errors.ts'
import { feeModelOf, feeModelsOf, setFeeModelHeaders } from '../fee-model-headers.ts'
import {
  type Currency,
  CurrencyQuery,
  currencyOf,
  fieldsWithFiat,
  priceIn,
  sumFiat,
  withFiat,
} from '../fiat-view.ts'
import {
  AsOfQuery,
  answeredFromCache,
  dataAsOfDays,
  engineErrorToApi,
  jsonOrCsv,
  KEPT_ANSWERS,
  MAX_REPORT_ITEMS,
  noReport,
  parseDate,
  readingOrg,
  readsFor,
  rejectUnit,
  reportOr404,
  sendCsv,
  setReportHeaders,
  summaryDates,
  summaryRange,
  walletRecordsOr404,
  wantsCsv,
} from '../reporting.ts'
import { errorResponses, Nullable, StringEnum } from '../schemas.ts'
import {
  amountsOf,
  presentStoredWallet,
  type RecordVersion,
  sendStoredWallets,
  totalsSchema,
  type Unit,
  WITHHELD_FROM_OTHERS,
  walletFields,
  walletRecordSchema,
} from '../wallet-presentation.ts'

const DateString = Type.String({ description: 'YYYY-MM-DD (UTC date of the report block)' })
const ImpersonateHeaders = Type.Object({
  'impersonate-org': Type.Optional(
    Type.String({
      description:
        'read as this organization: needs the impersonate:org scope and that organization naming yours a delegate (or an operator organization); audited',
    }),
  ),
})
const UnitSchema = Type.Union([Type.Literal('lseth'), Type.Literal('eth')], {
  description:
    'lseth (default): as stored; eth: every *_lseth amount replaced by its *_eth counterpart, valued at each ' +
    "day's rate (totals: the running sums of the daily ETH flows); rebate_lseth fields left out",
})
const AsOf = Type.Object({ ...AsOfQuery, ...CurrencyQuery })
const FeeModelSchema = StringEnum(['v0', 'v3'])
const FeeModels = Type.Array(FeeModelSchema, {
  description: 'the fee models of the days covered (both: the range crosses the 2026-05-01 cutover)',
})

const LotRequest = Type.Object({
  balance: Type.String({ description: 'LsETH, decimal string (at most 18 decimals)' }),
  from: DateString,
  to: Type.Optional(DateString),
})
const LotResult = Type.Object({
  balance: Type.String(),
  from: Type.String(),
  to: Type.String(),
  start_conversion_rate: Type.String(),
  end_conversion_rate: Type.String(),
  accrued_rewards: Type.String(),
})
const LotsResponse = Type.Object({
  balance: Type.String(),
  accrued_rewards: Type.String(),
  lots: Type.Array(LotResult),
})

function accountRecordSchema(version: RecordVersion, unit: Unit) {
  return Type.Object({
    account_id: Type.String(),
    fee_model: FeeModelSchema,
    totals: totalsSchema(version, unit),
    date: Type.String(),
    wallets: Type.Array(walletRecordSchema(version, unit)),
  })
}

const DataAsOf = Type.String({
  description: "when the newest of the days' versions became visible (X-Report-Data-As-Of)",
})
const Requested = Type.Object(
  { from: Type.String(), to: Type.String() },
  { description: 'the range asked for (from / to are the dates of the reports it covers)' },
)

/** What a summary says of the range it covers (`coverage`). */
const Coverage = {
  from: Type.String({ description: 'the date of the first report covered' }),
  to: Type.String({ description: 'the date of the last report covered' }),
  requested: Requested,
  fee_models: FeeModels,
  data_as_of: DataAsOf,
}

function walletSummarySchema(version: RecordVersion, unit: Unit) {
  return Type.Object({
    address: Type.String(),
    account_id: Nullable('string'),
    ...Coverage,
    totals: totalsSchema(version, unit),
    days: Type.Array(walletRecordSchema(version, unit)),
  })
}

function accountSummarySchema(version: RecordVersion, unit: Unit) {
  return Type.Object({
    account_id: Type.String(),
    ...Coverage,
    totals: totalsSchema(version, unit),
    days: Type.Array(
      Type.Object({
        oracle_report: Type.String(),
        date: Type.String(),
        fee_model: FeeModelSchema,
        totals: totalsSchema(version, unit),
        wallets: Type.Array(walletRecordSchema(version, unit)),
      }),
    ),
  })
}

/** The union of the schemas of the stored unit and the ETH view (v0 reads take `unit`). */
function eitherUnit<T extends TSchema>(version: RecordVersion, schema: (v: RecordVersion, u: Unit) => T) {
  return version === 'v1'
    ? schema(version, 'lseth')
    : Type.Union([schema(version, 'lseth'), schema(version, 'eth')])
}

function checkCount(items: readonly unknown[], what: string): void {
  if (items.length > MAX_REPORT_ITEMS) {
    throw new ApiError('IR1006', `at most ${MAX_REPORT_ITEMS} ${what} per request (got ${items.length})`)
  }
}

/** A read's currency and the price of each of its reports. */
type Fiat = { currency: Currency; priceOf: (epoch: string) => Price }
/** The stored ETH amounts fiat values of wallet records are made from. */
const WALLET_SOURCES: ReadonlySet<string> = new Set(WALLET_AMOUNT_FIELDS)

/** A presented wallet record with its fiat values when the read asks for a currency. */
function walletInFiat(
  fiat: Fiat | undefined,
  row: WalletRecordRow,
  presented: Readonly<PresentedWalletRecord>,
) {
  if (!fiat) return presented
  const price = fiat.priceOf(row.report_epoch)
  return withFiat(presented, (s) => BigInt(row[s as WalletAmountField]), WALLET_SOURCES, price, fiat.currency)
}

/** An account's presented totals of one report with their fiat values when the read asks for a currency. */
function totalsInFiat(
  fiat: Fiat | undefined,
  epoch: string,
  amounts: WalletAmounts,
  totals: Record<string, string | null>,
) {
  if (!fiat) return totals
  const price = fiat.priceOf(epoch)
  return withFiat(totals, (s) => amounts[s as WalletAmountField], WALLET_SOURCES, price, fiat.currency)
}

/** The CSV header of wallet records of a version, unit and currency. */
function csvFields(version: RecordVersion, unit: Unit, fiat: Fiat | undefined): readonly string[] {
  return fieldsWithFiat(walletFields(version, unit), WALLET_SOURCES, fiat?.currency)
}

/** Summed amounts as a read's totals; `own` false: the fields withheld from a reader are null. */
function totalsOf(
  amounts: WalletAmounts,
  version: RecordVersion,
  unit: Unit,
  models: ReadonlySet<FeeModel>,
  own = true,
): Record<string, string | null> {
  const totals = presentTotals(amounts, version, unit, models)
  if (!own) for (const field of Object.keys(totals)) if (WITHHELD_FROM_OTHERS.has(field)) totals[field] = null
  return totals
}

/** Reward reads: lots, wallets, accounts and their summaries (v1, and v0 with the discount fields). */
export function rewardRoutes(app: FastifyInstance, deps: { repos: Repos }) {
  const { repos } = deps
  // the answers of these reads are kept under their ETag (api/answer-memo.ts)
  const rewards = { onRequest: app.requireScope('read:eth-rewards'), ...KEPT_ANSWERS }
  /** The request's reporting reads (the app's, or as of its `as_of`). */
  const readsOf = (request: FastifyRequest) => readsFor(request, repos)

  /** The currency a read asks for and the prices of its days (undefined: none asked). */
  async function fiatOf(request: FastifyRequest, days: readonly ReportDay[]): Promise<Fiat | undefined> {
    const currency = currencyOf(request)
    if (currency === undefined) return undefined
    const prices = await readsOf(request).cached(days, 'prices', () => repos.prices.ofDays(days))
    return { currency, priceOf: (epoch) => priceIn(prices.get(epoch), currency) }
  }
  const tags = ['rewards']

  /** The caller's accounts among ids / keys, in request order (others: omitted, as unknown ones). */
  async function accountsOf(orgId: string, values: string[]): Promise<string[]> {
    const rows = await repos.reports.accountsByIdsOrKeys(orgId, values)
    const byId = new Map(rows.map((r) => [r.id, r]))
    const byKey = new Map(rows.map((r) => [r.key, r]))
    const ids = new Set<string>()
    for (const value of values) {
      // as id first (when it is a UUID), then as key (README "Accounts")
      const row = (isUuid(value) ? byId.get(value.toLowerCase()) : undefined) ?? byKey.get(value)
      if (row) ids.add(row.id)
    }
    return [...ids]
  }

  async function accountsRead(
    request: FastifyRequest,
    reply: FastifyReply,
    version: RecordVersion,
    unit: Unit,
  ) {
    const body = request.body as { accounts: string[]; date: string }
    checkCount(body.accounts, 'accounts')
    const date = parseDate(body.date, 'date')
    const orgId = await readingOrg(request, repos)
    const day = await reportOr404(readsOf(request), date)
    setReportHeaders(reply, day)
    const csv = wantsCsv(request)
    const ids = await accountsOf(orgId, body.accounts)
    if (answeredFromCache(request, reply, [day], { orgId, ids, unit, csv })) return reply
    const [accounts, wallets] = await readsOf(request).cached([day], `accounts:${ids.join(',')}`, () =>
      Promise.all([repos.reports.accountRecords(day, ids), repos.reports.accountWalletRecords(day, ids)]),
    )
    const storedOf = new Map(accounts.map((a) => [a.account_id, a]))
    const walletsOf = groupBy(wallets, (w) => w.account_id)
    const model = feeModelOf(day)
    setFeeModelHeaders(request, reply, new Set([model]))
    const fiat = await fiatOf(request, [day])
    const records = ids.map((id) => {
      const stored = storedOf.get(id)
      const amounts = stored ? amountsOf(stored) : zeroWalletAmounts()
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

  /** The address a wallet summary is about: a wallet id of the reading org, or any holder's address. */
  async function summaryAddress(orgId: string, idOrKey: string): Promise<string> {
    if (/^0x/i.test(idOrKey)) return normalizeAddress(idOrKey, 'idOrKey')
    const wallet = isUuid(idOrKey) ? await repos.wallets.findByIdOrAddress(orgId, idOrKey) : undefined
    if (!wallet) throw new ApiError('IR3100', `wallet ${JSON.stringify(idOrKey)} not found`)
    return wallet.address
  }

  /** What both summaries start with: the request's id or key, its reading org, its range query. */
  async function summaryRequest(request: FastifyRequest) {
    const { idOrKey } = request.params as { idOrKey: string }
    const query = request.query as { from?: string; to?: string }
    return { idOrKey, query, orgId: await readingOrg(request, repos), csv: wantsCsv(request) }
  }

  /**
   * A summary's `from` / `to` (the dates of the first and last reports covered), the range asked for, the
   * fee models of its days and its data_as_of.
   */
  function coverage(days: readonly ReportDay[], from: string, to: string, models: ReadonlySet<FeeModel>) {
    return {
      from: (days[0] as ReportDay).date,
      to: (days[days.length - 1] as ReportDay).date,
      requested: { from, to },
      fee_models: [...models].sort(),
      data_as_of: dataAsOfDays(days),
    }
  }

  /** Report headers of a summary's last day; true after answering 304 to a matching If-None-Match. */
  function summaryAnsweredFromCache(
    request: FastifyRequest,
    reply: FastifyReply,
    days: readonly ReportDay[],
    inputs: Record<string, unknown>,
  ): boolean {
    setReportHeaders(reply, days)
    return answeredFromCache(request, reply, days, inputs)
  }

  async function walletSummary(
    request: FastifyRequest,
    reply: FastifyReply,
    version: RecordVersion,
    unit: Unit,
  ) {
    const { idOrKey, query, orgId, csv } = await summaryRequest(request)
    const address = await summaryAddress(orgId, idOrKey)
    const { from, to } = await summaryDates(readsOf(request), query)
    const { days, rows } = await walletRecordsOr404(readsOf(request), from, to, [address])
    if (summaryAnsweredFromCache(request, reply, days, { orgId, address, from, to, unit, csv })) return reply
    const models = feeModelsOf(days)
    setFeeModelHeaders(request, reply, models)
    const fiat = await fiatOf(request, days)
    const presented = rows.map((row) =>
      walletInFiat(fiat, row, presentStoredWallet(row, orgId, version, unit)),
    )
    if (csv)
      return sendCsv(reply, `wallet-${address}-${from}-${to}`, csvFields(version, unit, fiat), presented)
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
      totals: fiat ? sumFiat(totals, presented, WALLET_SOURCES, fiat.currency) : totals,
      days: presented,
    }
  }

  async function accountSummary(
    request: FastifyRequest,
    reply: FastifyReply,
    version: RecordVersion,
    unit: Unit,
  ) {
    const { idOrKey, query, orgId, csv } = await summaryRequest(request)
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
    setFeeModelHeaders(request, reply, models)
    const fiat = await fiatOf(request, days)
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
            WALLET_SOURCES,
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

  app.post(
    '/eth/v1/rewards',
    {
      ...rewards,
      schema: {
        tags,
        summary: 'Rewards accrued by lots of LsETH between report dates (omnibus accounts)',
        description:
          'Per lot: start/end rate = post-fee rate of the last report on or before from / to (to defaults to the ' +
          'latest report); accrued = floor18(balance x end) - floor18(balance x start). At most 1000 lots.',
        body: Type.Array(LotRequest, { minItems: 1 }),
        querystring: Type.Object(AsOfQuery),
        response: { 200: LotsResponse, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      rejectUnit(request)
      const lots = request.body as { balance: string; from: string; to?: string }[]
      checkCount(lots, 'lots')
      lots.forEach((lot, i) => {
        parseDate(lot.from, `[${i}].from`)
        if (lot.to !== undefined) parseDate(lot.to, `[${i}].to`)
      })
      const [days, bounds] = await Promise.all([readsOf(request).all(), readsOf(request).bounds()])
      if (!bounds) throw new ApiError('IR4000', 'no computed report yet: lots need at least one')
      setReportHeaders(reply, bounds.latest)
      const rates = days.map((d) => ({
        date: d.date,
        report_epoch: d.report_epoch,
        conversion_rate: d.conversion_rate,
      }))
      const identity = rates.map((r) => `${r.date}|${r.report_epoch}|${r.conversion_rate}`)
      if (answeredFromCache(request, reply, [bounds.latest], { lots, identity })) return reply
      try {
        return computeLotRewards(rates, lots)
      } catch (err) {
        engineErrorToApi(err)
      }
    },
  )

  const walletsBody = Type.Object({
    addresses: Type.Array(Type.String(), { minItems: 1 }),
    date: DateString,
  })
  const accountsBody = Type.Object({
    accounts: Type.Array(Type.String({ minLength: 1 }), {
      minItems: 1,
      description: 'account ids (or keys)',
    }),
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
        querystring: AsOf,
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
      const addresses = [...new Set(body.addresses.map((a, i) => normalizeAddress(a, `addresses[${i}]`)))]
      const date = parseDate(body.date, 'date')
      const org = readingOrg(request, repos)
      // the date's report and the records of the addresses on it: from memory once read, and then answered
      // with no promise at all
      const held = typeof org === 'string' ? readsOf(request).heldWalletRows(date, addresses) : undefined
      if (held && typeof org === 'string') {
        const sent = walletsReply(request, reply, org, addresses, held.days[0] as ReportDay, held.rows)
        // a CSV or fiat answer is sent once the day's prices are read
        return sent instanceof Promise ? sent : undefined
      }
      return (async () => {
        const orgId = await org
        const {
          days: [day],
          rows,
        } = await walletRecordsOr404(readsOf(request), date, date, addresses)
        if (!day) throw await noReport(readsOf(request), date)
        return walletsReply(request, reply, orgId, addresses, day, rows)
      })()
    },
  )

  /** The answer of POST /eth/v1/rewards/wallets: `rows`, the records of `addresses` on `day`. */
  function walletsReply(
    request: FastifyRequest,
    reply: FastifyReply,
    orgId: string,
    addresses: readonly string[],
    day: ReportDay,
    rows: readonly WalletRecordRow[],
  ) {
    setReportHeaders(reply, day)
    const csv = wantsCsv(request)
    if (answeredFromCache(request, reply, [day], { orgId, addresses, csv })) return reply
    // rows: the records of addresses on this day, in request order (walletRows): the answer
    const currency = currencyOf(request)
    if (csv || currency !== undefined) {
      // the fiat values need the day's prices: sent when they are read (the promise ends with the reply)
      return (async () => {
        const fiat = await fiatOf(request, [day])
        const records = rows.map((row) => walletInFiat(fiat, row, presentStoredWallet(row, orgId, 'v1')))
        if (!csv) return reply.send(records)
        return sendCsv(reply, `wallets-${day.date}`, csvFields('v1', 'lseth', fiat), records)
      })()
    }
    return sendStoredWallets(reply, rows, orgId, 'v1')
  }

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
        querystring: AsOf,
        response: {
          200: jsonOrCsv(Type.Array(accountRecordSchema('v1', 'lseth'))),
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (request, reply) => {
      rejectUnit(request)
      return accountsRead(request, reply, 'v1', 'lseth')
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
        querystring: AsOf,
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
      return accountsRead(request, reply, 'v0', unit ?? 'lseth')
    },
  )

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
        async (request, reply) => summary.handler(request, reply, version, unitOf(request)),
      )
    }
  }
}
