import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { FEE_RATE_COLUMNS } from '../../db/records/columns.ts'
import { FEE_AMOUNT_COLUMNS } from '../../db/records/columns.ts'
import type { Repos } from '../../db/repos/index.ts'
import type { FeeKind, FeeRecordRow, OperatorFeeRecordRow, ReportDay } from '../../db/repos/reports.ts'
import { type FeeModel, formatUnits18, isOtherModelField, V3_CUTOVER_ISO } from '../../engine/index.ts'
import { feeModelOf, setFeeModelHeaders } from '../fee-model-headers.ts'
import { CurrencyQuery, currencyOf, priceIn, withFiat, withFiatSchema } from '../fiat-view.ts'
import { presentProtocolRecord } from '../protocol-presentation.ts'
import { parseDate, reportOr404 } from '../reporting/dates.ts'
import { answeredFromCache, KEPT_ANSWERS, setReportHeaders } from '../reporting/etag.ts'
import { rejectUnit } from '../reporting/inputs.ts'
import { AsOfQuery, readingOrg, readsFor } from '../reporting/reads.ts'
import { errorResponses, Nullable, StringEnum } from '../schemas.ts'

/**
 * Fee records (platform: by the org owning the account; originator: by the org that added the wallet;
 * operators: the day's operator fees split by active validators) and the public protocol record.
 * Platform and originator records are the reading organization's own: other organizations' fees are
 * never shown.
 */

/** The V3 parts in LsETH: the v0 record names its parts in ETH only. */
const LSETH_PARTS: ReadonlySet<string> = new Set(['period_lc_fees_lseth', 'period_tech_provider_fees_lseth'])
/**
 * The fee record's amount fields of each version (stored columns, in their order): every part of both models,
 * so a record of either model sums to its fee in either version (a part of the other model: null).
 */
const FEE_AMOUNTS = {
  v1: FEE_AMOUNT_COLUMNS,
  v0: FEE_AMOUNT_COLUMNS.filter((c) => !LSETH_PARTS.has(c)),
}
/** The fee record's rate fields of each version (stored columns, in the interface's order). */
const FEE_RATES: Record<'v0' | 'v1', readonly (typeof FEE_RATE_COLUMNS)[number][]> = {
  v1: [
    'lc_fees_rate',
    'tech_provider_fees_rate',
    'operator_fees_rate',
    'platform_fees_rate',
    'rebate_rate',
    'platform_fees_at_discount_rate_rate',
  ],
  v0: [
    'operator_fees_rate',
    'platform_fees_rate',
    'rebate_rate',
    'platform_fees_at_discount_rate_rate',
    'lc_fees_rate',
    'tech_provider_fees_rate',
  ],
}

const Str = Type.String()
const NullableStr = Nullable('string')

function feeRecordSchema(version: 'v0' | 'v1') {
  const amounts = FEE_AMOUNTS[version]
  const rates = FEE_RATES[version]
  const field = NullableStr
  return Type.Object({
    oracle_report: Str,
    date: Str,
    org_id: Str,
    fee_model: StringEnum(['v0', 'v3']),
    data_as_of: Type.String({ description: "when the day's version became visible (X-Report-Data-As-Of)" }),
    wallets: Type.Integer(),
    ...withFiatSchema(Object.fromEntries(amounts.map((f) => [f, field])), FEE_SOURCES),
    ...Object.fromEntries(rates.map((f) => [f, field])),
  })
}

/** The stored ETH amounts of each record kind fiat values are made from. */
const FEE_SOURCES: ReadonlySet<string> = new Set(FEE_AMOUNT_COLUMNS)
const OPERATOR_SOURCES: ReadonlySet<string> = new Set(['operator_fees_eth'])
const PROTOCOL_SOURCES: ReadonlySet<string> = new Set(['rewards_eth'])

const OperatorRecordSchema = Type.Object(
  withFiatSchema(
    {
      oracle_report: Str,
      date: Str,
      fee_model: StringEnum(['v0', 'v3']),
      operator_id: Str,
      active_validators: Type.Integer(),
      operator_fees_eth: NullableStr,
      operator_fees_rate: NullableStr,
    },
    OPERATOR_SOURCES,
  ),
)

const ProtocolRecordSchema = Type.Object(
  withFiatSchema(
    {
      oracle_report: Str,
      date: Str,
      total_protocol_mints_lseth: Str,
      total_protocol_burns_lseth: Str,
      total_protocol_active_keys_count: Type.Integer(),
      rewards_eth: Str,
      gross_fee_rate: Str,
      gross_fee_lseth: Str,
      conversion_rate: Str,
      total_lseth_supply: Str,
      a_srr_7d: NullableStr,
    },
    PROTOCOL_SOURCES,
  ),
)

/**
 * A fee record in a version: the one rule of the reward reads (a part of the other fee model is null, the
 * parts of the record's model sum to `fees_eth`; engine/fee-model-fields.ts).
 */
function presentFeeRecord(
  row: FeeRecordRow | undefined,
  day: ReportDay,
  orgId: string,
  version: 'v0' | 'v1',
): Record<string, string | number | null> {
  const model = row?.fee_model ?? feeModelOf(day)
  const out: Record<string, string | number | null> = {
    oracle_report: day.report_epoch,
    date: day.date,
    org_id: orgId,
    fee_model: model,
    data_as_of: day.data_as_of.toISOString(),
    wallets: row?.wallets ?? 0,
  }
  const stopped = stoppedInV0(version, model)
  for (const f of FEE_AMOUNTS[version]) {
    const hidden = (stopped && !V0_KEPT_AFTER_CUTOVER.has(f)) || isOtherModelField(f, model)
    out[f] = hidden ? null : formatUnits18(BigInt(row?.[f] ?? 0))
  }
  for (const f of FEE_RATES[version])
    out[f] = stopped || isOtherModelField(f, model) ? null : (row?.[f] ?? '0')
  return out
}

/** v0 fee fields still populated after the V3 cutover: what is not a fee. */
const V0_KEPT_AFTER_CUTOVER = new Set(['balance_lseth', 'gross_rewards_eth', 'rewards_eth'])

/**
 * The interface's one explicit exception to the fee-model rule: the v0 platform and operator endpoints "stop
 * populating platform fees and rates" from the cutover (every fee and rate field null, a Link to v1).
 */
function stoppedInV0(version: 'v0' | 'v1', model: FeeModel): boolean {
  return version === 'v0' && model === 'v3'
}

function presentOperator(
  row: OperatorFeeRecordRow,
  day: ReportDay,
  version: 'v0' | 'v1',
): Record<string, string | number | null> {
  const model = feeModelOf(day)
  const stopped = stoppedInV0(version, model)
  return {
    oracle_report: row.report_epoch,
    date: row.date,
    fee_model: model,
    operator_id: row.operator_id,
    active_validators: Number(row.active_validators),
    operator_fees_eth: stopped ? null : formatUnits18(BigInt(row.operator_fees_eth)),
    operator_fees_rate: stopped ? null : row.operator_fees_rate,
  }
}

/** From the cutover on, a v0 fee read links its v1 successor (where the V3 parts have their LsETH forms). */
function linkSuccessor(reply: FastifyReply, day: ReportDay, path: string): void {
  if (feeModelOf(day) === 'v3') reply.header('link', `<${path}>; rel="successor-version"`)
}

/** Platform, originator and operator fees (v1 and v0) and the public protocol record. */
export function feeRoutes(app: FastifyInstance, deps: { repos: Repos }) {
  const { repos } = deps
  /** The request's reporting reads (the app's, or as of its `as_of`). */
  const readsOf = (request: FastifyRequest) => readsFor(request, repos)
  // the answers of these reads are kept under their ETag (api/answer-memo.ts)
  const rewards = { onRequest: app.requireScope('read:eth-rewards'), ...KEPT_ANSWERS }
  const tags = ['fees']
  const DateParams = Type.Object({ date: Type.String({ description: 'YYYY-MM-DD' }) })
  const AsOf = Type.Object({ ...AsOfQuery, ...CurrencyQuery })

  /** The day's price in the currency the read asks for (undefined: none asked). */
  async function priceOf(request: FastifyRequest, day: ReportDay) {
    const currency = currencyOf(request)
    if (currency === undefined) return undefined
    const prices = await readsOf(request).cached([day], 'prices', () => repos.prices.ofDays([day]))
    return { currency, price: priceIn(prices.get(day.report_epoch), currency) }
  }
  const ImpersonateHeaders = Type.Object({ 'impersonate-org': Type.Optional(Type.String()) })

  async function orgFees(
    request: FastifyRequest,
    reply: FastifyReply,
    kind: Exclude<FeeKind, 'all'>,
    version: 'v0' | 'v1',
  ) {
    if (version === 'v1') rejectUnit(request)
    const { date } = request.params as { date: string }
    parseDate(date, 'date')
    const orgId = await readingOrg(request, repos)
    const day = await reportOr404(readsOf(request), date)
    setReportHeaders(reply, day)
    setFeeModelHeaders(request, reply, new Set([feeModelOf(day)]))
    if (version === 'v0') linkSuccessor(reply, day, `/eth/v1/${kind}s/${date}`)
    if (answeredFromCache(request, reply, [day], { orgId })) return reply
    const row = await readsOf(request).cached([day], `fee:${kind}:${orgId}`, () =>
      repos.reports.feeRecord(day, kind, orgId),
    )
    const presented = presentFeeRecord(row, day, orgId, version)
    const price = await priceOf(request, day)
    if (!price) return presented
    const amount = (source: string) => BigInt(row?.[source as (typeof FEE_AMOUNT_COLUMNS)[number]] ?? 0)
    return withFiat(presented, amount, FEE_SOURCES, price.price, price.currency)
  }

  async function operators(request: FastifyRequest, reply: FastifyReply, version: 'v0' | 'v1') {
    if (version === 'v1') rejectUnit(request)
    const { date } = request.params as { date: string }
    parseDate(date, 'date')
    const day = await reportOr404(readsOf(request), date)
    setReportHeaders(reply, day)
    setFeeModelHeaders(request, reply, new Set([feeModelOf(day)]))
    if (version === 'v0') linkSuccessor(reply, day, `/eth/v1/operators/${date}`)
    if (answeredFromCache(request, reply, [day], {})) return reply
    const rows = await readsOf(request).cached([day], 'operators', () =>
      repos.reports.operatorFeeRecords(day),
    )
    const price = await priceOf(request, day)
    return rows.map((row) => {
      const presented = presentOperator(row, day, version)
      if (!price) return presented
      const amount = () => BigInt(row.operator_fees_eth)
      return withFiat(presented, amount, OPERATOR_SOURCES, price.price, price.currency)
    })
  }

  const feeDescription = (who: string) =>
    `The reading organization's ${who} fee record for the report of the date (zeros when it had no wallets). ` +
    'Amounts: sums over its wallets; *_rate: part / gross_rewards_eth of those wallets.'
  const v0Note =
    ` From ${V3_CUTOVER_ISO} every fee and rate field is null (the interface: use v1), with a Link to the v1 ` +
    'endpoint; before it, parts of the V3 model are null.'

  app.get(
    '/eth/v1/platforms/:date',
    {
      ...rewards,
      schema: {
        tags,
        summary: 'Platform fees and rates of a date (V3 fields), for the org owning the accounts',
        description: feeDescription('platform'),
        params: DateParams,
        querystring: AsOf,
        headers: ImpersonateHeaders,
        response: { 200: feeRecordSchema('v1'), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => orgFees(request, reply, 'platform', 'v1'),
  )
  app.get(
    '/eth/v1/originators/:date',
    {
      ...rewards,
      schema: {
        tags,
        summary: 'Originator fees and rates of a date (V3 fields), for the org that added the wallets',
        description: feeDescription('originator'),
        params: DateParams,
        querystring: AsOf,
        headers: ImpersonateHeaders,
        response: { 200: feeRecordSchema('v1'), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => orgFees(request, reply, 'originator', 'v1'),
  )
  app.get(
    '/eth/v1/operators/:date',
    {
      ...rewards,
      schema: {
        tags,
        summary: 'Node operator fees of a date: the operator share split by active validators',
        params: DateParams,
        querystring: AsOf,
        response: { 200: Type.Array(OperatorRecordSchema), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => operators(request, reply, 'v1'),
  )
  app.get(
    '/eth/v0/platforms/:date',
    {
      ...rewards,
      schema: {
        tags,
        summary: 'Platform fees and rates of a date (v0 fields; history through 2026-04-30)',
        description: feeDescription('platform') + v0Note,
        params: DateParams,
        querystring: AsOf,
        headers: ImpersonateHeaders,
        response: { 200: feeRecordSchema('v0'), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => orgFees(request, reply, 'platform', 'v0'),
  )
  app.get(
    '/eth/v0/operators/:date',
    {
      ...rewards,
      schema: {
        tags,
        summary: 'Node operator fees of a date (v0; history through 2026-04-30)',
        description: `Operators and their active validators.${v0Note}`,
        params: DateParams,
        querystring: AsOf,
        response: { 200: Type.Array(OperatorRecordSchema), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => operators(request, reply, 'v0'),
  )

  app.get(
    '/eth/v0/protocol/:date',
    {
      ...KEPT_ANSWERS,
      schema: {
        tags: ['protocol'],
        summary: 'Protocol record of a date (public): rewards, fee, rate, supply, a_srr_7d',
        params: DateParams,
        querystring: AsOf,
        response: { 200: Type.Array(ProtocolRecordSchema), ...errorResponses(400, 404) },
      },
    },
    async (request, reply) => {
      const { date } = request.params as { date: string }
      parseDate(date, 'date')
      const day = await reportOr404(readsOf(request), date)
      setReportHeaders(reply, day)
      if (answeredFromCache(request, reply, [day], {})) return reply
      const row = await readsOf(request).cached([day], 'protocol', () => repos.reports.protocolRecord(day))
      if (!row) return []
      const price = await priceOf(request, day)
      const presented = [
        presentProtocolRecord({
          oracle_report: row.report_epoch,
          date: row.block_time.toISOString().replace('.000Z', 'Z'),
          total_protocol_mints_lseth: BigInt(row.total_protocol_mints_lseth),
          total_protocol_burns_lseth: BigInt(row.total_protocol_burns_lseth),
          total_protocol_active_keys_count: row.total_protocol_active_keys_count,
          rewards_eth: BigInt(row.rewards_eth),
          gross_fee_rate: row.gross_fee_rate,
          gross_fee_lseth: BigInt(row.gross_fee_lseth),
          conversion_rate: row.conversion_rate,
          total_lseth_supply: BigInt(row.total_lseth_supply),
          a_srr_7d: row.a_srr_7d,
        }),
      ]
      if (!price) return presented
      const amount = () => BigInt(row.rewards_eth)
      return presented.map((p) => withFiat(p, amount, PROTOCOL_SOURCES, price.price, price.currency))
    },
  )
}
