import { createHash } from 'node:crypto'
import { Writable } from 'node:stream'
import { parse } from 'csv-parse/sync'
import DecimalJs from 'decimal.js'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { kindOf } from '../engine/index.ts'
import { buildExport, type ExportSpec } from '../jobs/exports/build.ts'
import { http } from './helpers/api.ts'
import { type CustodianBooks, custodianBooks } from './helpers/custodian-history.ts'
import { postgresAvailable } from './helpers/services.ts'

const pgOk = await postgresAvailable()
const Decimal = DecimalJs.clone({ precision: 120 })
type Row = Record<string, string | null>
type Summary = { totals: Row; days: Row[]; periods: (Row & { wallets?: Row[]; accounts?: Row[] })[] }

/** Half-even to 8 places of a decimal product, as the service rounds fiat values (engine/fiat.ts). */
const fiat = (eth: string, price: string) =>
  new Decimal(eth).mul(price).toDecimalPlaces(8, DecimalJs.ROUND_HALF_EVEN).toFixed()
const sum = (values: (string | null | undefined)[]) =>
  values.reduce((s, v) => s.plus(v ?? '0'), new Decimal(0)).toFixed()
/** The served period fields that are flows: amounts summed over the days (not a stock, rate or fiat). */
const FLOWS = ['rewards_eth', 'fees_eth', 'mints_lseth', 'mints_eth', 'burns_eth', 'platform_fees_eth']
/** Stocks the served records carry (by unit), given at the period's close. */
const STOCKS = ['balance_lseth', 'balance_eth', 'total_rewards_eth', 'total_fees_eth', 'conversion_rate']

/** A Writable that keeps what it is given, `slow`: a tiny buffer and a pause per write (backpressure). */
function sink(slow = false) {
  const chunks: Buffer[] = []
  let drains = 0
  const stream = new Writable({
    highWaterMark: slow ? 16 : 1 << 20,
    write(chunk: Buffer, _enc, done) {
      chunks.push(chunk)
      if (slow) setTimeout(done, 1)
      else done()
    },
  })
  stream.on('drain', () => {
    drains += 1
  })
  return { stream, text: () => Buffer.concat(chunks).toString('utf8'), drains: () => drains }
}

const key = (r: Row) => `${r.period}|${r.account_id}`

/**
 * Statements finance can book (issue 38), over one custodian's devnet history from April to June crossing the
 * fee-model cutover, with prices from day 2 (test/helpers/custodian-history.ts):
 * - the wallet, account and organization summaries serve the stock/flow rule (engine/rollup.ts) in JSON and
 *   CSV: flows are the sums of the days the default summary lists, stocks the last day's values, `balance_usd`
 *   the closing balance at the closing price (never the sum of the days), rates their days' when all served
 *   one, `group_by=month|quarter|year` periods that add up to the totals, the organization its accounts
 *   together;
 * - the export builder (jobs/exports/build.ts): a `records` export's rows are the organization summary's CSV
 *   rows for the same read, cell for cell (v1 and v0, USD and EUR, month and day); a `journal` export balances
 *   per account and period to the wei and in fiat and ties to the summary; a slow reader gets the same bytes.
 */
describe.runIf(pgOk)('statements: summaries, rollups and export files (Postgres, anvil, HTTP)', () => {
  let books: CustodianBooks
  let call: ReturnType<typeof http>
  let token = ''
  let before = ''
  let from = ''
  let to = ''
  let accounts: CustodianBooks['accounts'] = []
  let api: CustodianBooks['api']

  beforeAll(async () => {
    books = await custodianBooks()
    ;({ token, before, from, to, accounts, api } = books)
    call = http(api.url, token)
  }, 600_000)

  afterAll(async () => {
    await books?.close()
  })

  let uniformRates = 0

  /** Checks a period (or totals) against the days it covers, as the default summary lists them. */
  function checkAgainstDays(p: Row, days: Row[], where: string, before: Row | undefined) {
    const first = days[0] as Row
    const last = days.at(-1) as Row
    for (const f of FLOWS.filter((f) => f in first)) {
      expect(p[f], `${where} ${f}`).toBe(sum(days.map((d) => d[f])))
    }
    expect(p.rewards_usd, where).toBe(sum(days.map((d) => d.rewards_usd)))
    for (const f of STOCKS.filter((f) => f in last)) expect(p[f], `${where} ${f}`).toBe(last[f])
    expect(p.opening_conversion_rate).toBe(first.previous_conversion_rate)
    // issue 38: a fee part's rate every day served alike is the period's, exactly (0.035, not 0.034999...)
    for (const f of Object.keys(first).filter((f) => f.endsWith('_rate') && kindOf(f) === 'rate')) {
      const served = new Set(days.map((d) => d[f]))
      // (g and the discount are configured figures; a fee part's rate is the share x the fee charged)
      if (served.size !== 1 || !f.startsWith('period_')) continue
      expect(p[f], `${where} ${f}`).toBe(first[f])
      uniformRates++
    }
    // opening balances: the record of the report before the period (transfers move a balance too)
    for (const f of ['balance_lseth', 'balance_eth'].filter((f) => f in first)) {
      expect(p[`opening_${f}`], `${where} opening_${f}`).toBe(before?.[f] ?? '0')
    }
    expect(p.opening_price_usd, where).toBe(before?.price_usd ?? null)
    expect(p.opening_total_rewards_eth, where).toBe(
      new Decimal(first.total_rewards_eth as string).minus(first.rewards_eth as string).toFixed(),
    )
    // the closing balance in fiat: the last day's balance at the last day's price
    expect(p.price_usd).toBe(last.price_usd)
    expect(p.balance_usd, where).toBe(last.balance_usd)
    // by hand (the ETH view shows balance_eth): balance x price, half-even to 8 places
    if ('balance_eth' in last) {
      expect(p.balance_usd, where).toBe(fiat(last.balance_eth as string, last.price_usd as string))
    }
  }

  test.each([
    ['v1', ''],
    ['v0', ''],
    ['v0', '&unit=eth'],
  ])(
    'behavior: a wallet summary and its rollups serve the stock/flow rule (%s%s, usd, JSON and CSV)',
    async (version, unit) => {
      const wallet = accounts[0]?.wallets[0] as string
      const base = `/eth/${version}/rewards/wallets/${wallet}/summary?from=${from}&to=${to}&currency=usd${unit}`
      const daily = await call('GET', base)
      expect(daily.status, JSON.stringify(daily.body)).toBe(200)
      const { days, totals } = daily.body as Summary
      expect(days.length).toBeGreaterThan(20)
      // the same wallet's records from the report before the range on (that report's record opens it)
      const wider = await call('GET', base.replace(`from=${from}`, `from=${before}`))
      const all = (wider.body as Summary).days
      expect(all.slice(1)).toEqual(days)
      checkAgainstDays(totals, days, 'totals', all[0])
      // issue 38: balance_usd is the closing balance's value, not the sum of the days' balances
      expect(totals.balance_usd).not.toBe(sum(days.map((d) => d.balance_usd)))
      for (const by of ['month', 'quarter', 'year'] as const) {
        const rolled = await call('GET', `${base}&group_by=${by}`)
        expect(rolled.status, JSON.stringify(rolled.body)).toBe(200)
        const { periods } = rolled.body as Summary
        expect(rolled.body.totals).toEqual(totals)
        let at = 0
        for (const p of periods) {
          const own = days.slice(at, at + Number(p.days))
          at += Number(p.days)
          expect(
            own.every(
              (d) => (d.date as string) >= (p.from as string) && (d.date as string) <= (p.to as string),
            ),
          ).toBe(true)
          checkAgainstDays(p, own, `${by} ${p.period}`, all[at - own.length])
        }
        expect(at).toBe(days.length)
        expect(uniformRates).toBeGreaterThan(0)
        expect(periods[0]?.partial).toBe(true) // the range starts after the 1st
        const csv = await fetch(`${api.url}${base}&group_by=${by}&format=csv`, {
          headers: { authorization: `Bearer ${token}` },
        })
        expect(csv.headers.get('content-type')).toMatch(/text\/csv/)
        const rows = parse(await csv.text(), { columns: true }) as Row[]
        expect(rows.map((r) => [r.period, r.rewards_eth, r.balance_usd])).toEqual(
          periods.map((p) => [p.period, p.rewards_eth, p.balance_usd]),
        )
      }
    },
  )

  test('behavior: the account and organization rollups are their wallets and accounts together', async () => {
    const q = `from=${from}&to=${to}&currency=usd&group_by=month`
    const summaries: Summary[] = []
    for (const account of accounts) {
      const res = await call('GET', `/eth/v1/rewards/accounts/${account.id}/summary?${q}`)
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      const body = res.body as Summary
      for (const p of body.periods) {
        const wallets = p.wallets as Row[]
        expect(p.rewards_eth).toBe(sum(wallets.map((w) => w.rewards_eth)))
        expect(p.balance_lseth).toBe(sum(wallets.map((w) => w.balance_lseth)))
      }
      summaries.push(body)
    }
    const org = await call('GET', `/eth/v1/rewards/organization/summary?${q}`)
    expect(org.status, JSON.stringify(org.body)).toBe(200)
    for (const f of [
      'rewards_eth',
      'fees_eth',
      'balance_lseth',
      'opening_balance_lseth',
      'total_rewards_eth',
    ]) {
      expect(org.body.totals[f], f).toBe(sum(summaries.map((s) => s.totals[f])))
    }
    const months = org.body.periods as (Row & { accounts: Row[] })[]
    expect(months.map((m) => m.period)).toEqual(['2026-04', '2026-05', '2026-06'])
    for (const m of months) {
      expect(m.rewards_eth).toBe(sum(m.accounts.map((a) => a.rewards_eth)))
    }
    const csv = await fetch(`${api.url}/eth/v1/rewards/organization/summary?${q}`, {
      headers: { authorization: `Bearer ${token}`, accept: 'text/csv' },
    })
    const rows = parse(await csv.text(), { columns: true }) as Row[]
    expect(rows.map((r) => [r.period, r.account_id, r.rewards_eth])).toEqual(
      months.flatMap((m) => m.accounts.map((a) => [m.period, a.account_id, a.rewards_eth])),
    )
    const eth = await call('GET', `/eth/v0/rewards/organization/summary?${q}&unit=eth`)
    expect(eth.status, JSON.stringify(eth.body)).toBe(200)
    expect(eth.body.totals.mints_eth).toBeDefined()
    const bad = await call('GET', `/eth/v1/rewards/organization/summary?${q.replace('month', 'week')}`)
    expect(bad.status).toBe(400)
  })

  const spec = (over: Partial<ExportSpec>): ExportSpec => ({
    chainId: books.history.devnet.chainId,
    orgId: books.orgId,
    accountIds: null,
    from,
    to,
    granularity: 'month',
    currency: 'usd',
    kind: 'records',
    apiVersion: 'v1',
    ...over,
  })

  async function build(s: ExportSpec, slow = false) {
    const out = sink(slow)
    const result = await buildExport(books.repos, s, out.stream)
    const text = out.text()
    return { result, text, rows: parse(text, { columns: true }) as Row[], drains: out.drains() }
  }

  async function summaryCsv(path: string) {
    const res = await fetch(`${api.url}${path}`, { headers: { authorization: `Bearer ${token}` } })
    expect(res.status).toBe(200)
    const text = await res.text()
    return { header: text.split('\r\n')[0], rows: parse(text, { columns: true }) as Row[] }
  }

  test.each([
    ['v1', 'month', 'usd'],
    ['v0', 'day', 'eur'],
    ['v1', 'quarter', null],
  ] as const)(
    'behavior: a records export (%s, %s, %s) is the organization summary CSV, row for row',
    async (version, by, currency) => {
      const q = `from=${from}&to=${to}&group_by=${by}&format=csv${currency ? `&currency=${currency}` : ''}`
      const served = await summaryCsv(`/eth/${version}/rewards/organization/summary?${q}`)
      const { text, rows, result } = await build(spec({ apiVersion: version, granularity: by, currency }))
      expect(text.split('\r\n')[0]).toBe(served.header)
      expect(rows.length).toBeGreaterThan(0)
      expect(result.rows).toBe(rows.length)
      const byKey = new Map(served.rows.map((r) => [key(r), r]))
      expect(rows.map(key).sort()).toEqual([...byKey.keys()].sort())
      for (const row of rows) expect(row, key(row)).toEqual(byKey.get(key(row)))
      expect(result.bytes).toBe(Buffer.byteLength(text))
      expect(result.sha256).toBe(createHash('sha256').update(text).digest('hex'))
    },
  )

  test('behavior: a quarter journal balances per account and period and ties to the summary (v0 ETH, USD)', async () => {
    const { rows } = await build(
      spec({
        kind: 'journal',
        granularity: 'quarter',
        journalAccounts: { fee_expense: '6100 Staking fees' },
      }),
    )
    const served = await summaryCsv(
      `/eth/v0/rewards/organization/summary?from=${from}&to=${to}&group_by=quarter&currency=usd&unit=eth&format=csv`,
    )
    expect(served.rows.length).toBe(2)
    for (const s of served.rows) {
      const lines = rows.filter((l) => l.account_id === s.account_id && l.period === s.period)
      expect(lines.length).toBeGreaterThan(4)
      const net = (ledger: string | null, unit: 'wei' | 'eth' | 'usd') =>
        lines
          .filter((l) => ledger === null || l.ledger_account === ledger)
          .reduce(
            (acc, l) => acc.plus(l[`debit_${unit}`] || '0').minus(l[`credit_${unit}`] || '0'),
            new Decimal(0),
          )
          .toFixed()
      // balanced to the wei and to the 10^-8 of a dollar
      expect(net(null, 'wei')).toBe('0')
      expect(net(null, 'usd')).toBe('0')
      // the holdings move by the closing less the opening balance, in ETH and USD
      expect(net('holdings', 'eth')).toBe(
        new Decimal(s.balance_eth as string).minus(s.opening_balance_eth as string).toFixed(),
      )
      expect(net('holdings', 'usd')).toBe(
        new Decimal(s.balance_usd as string).minus(s.opening_balance_usd || '0').toFixed(),
      )
      expect(new Decimal(net('staking_income', 'eth')).neg().toFixed()).toBe(s.gross_rewards_eth)
      expect(new Decimal(net('staking_income', 'usd')).neg().toFixed()).toBe(s.gross_rewards_usd)
      expect(net('fee_expense', 'eth')).toBe(
        new Decimal(s.fees_eth as string).minus(s.rebate_eth as string).toFixed(),
      )
      expect(net('rebate_receivable', 'eth')).toBe(s.rebate_eth)
      // the fee parts: the summary's, both fee models (the quarter crosses the 2026-05-01 cutover)
      const parts = lines.filter((l) => l.movement?.startsWith('fee:') && l.ledger_account === 'fee_expense')
      expect(sum(parts.map((l) => l.debit_eth))).toBe(s.fees_eth)
      expect(new Set(parts.map((l) => l.movement))).toContain('fee:dao')
      expect(new Set(parts.map((l) => l.movement))).toContain('fee:lc')
      for (const l of lines) {
        expect(l.date).toBe(s.to)
        expect(l.report_versions).toBe('1')
        expect(l.ledger_account_name).not.toBe('')
        if (l.ledger_account === 'fee_expense') expect(l.ledger_account_name).toBe('6100 Staking fees')
      }
    }
    expect(rows.some((l) => l.movement === 'rebate')).toBe(true)
  })

  test('behavior: a slow reader gets the same file (the builder waits for drain)', async () => {
    const fast = await build(spec({ kind: 'journal', granularity: 'day' }))
    const slow = await build(spec({ kind: 'journal', granularity: 'day' }), true)
    expect(slow.drains).toBeGreaterThan(0)
    expect(slow.text).toBe(fast.text)
    expect(slow.result).toEqual(fast.result)
  })

  test('behavior: listed accounts only, and never another organization’s', async () => {
    const { rows } = await build(spec({ accountIds: [accounts[1]?.id as string, books.otherAccount] }))
    expect(rows.length).toBeGreaterThan(0)
    expect(new Set(rows.map((r) => r.account_id))).toEqual(new Set([accounts[1]?.id]))
  })
})
