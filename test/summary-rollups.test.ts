import { parse } from 'csv-parse/sync'
import DecimalJs from 'decimal.js'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { createClient } from '../cli/admin.ts'
import type { Db, DbHandle } from '../db/index.ts'
import { createRepos } from '../db/repos/index.ts'
import { createPlatformService } from '../platform/service.ts'
import { clientToken, http, startTestApi, type TestApi } from './helpers/api.ts'
import { type ComputedHistory, computedHistory } from './helpers/days.ts'
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

/**
 * Summaries and rollups over HTTP (issue 38): over a devnet history from April to June crossing the fee-model
 * cutover, with prices from day 2, the wallet, account and organization summaries serve the stock/flow rule
 * (engine/rollup.ts) in JSON and CSV: flows are the sums of the days the default summary lists, stocks the
 * last day's values, `balance_usd` the closing balance at the closing price (never the sum of the days),
 * `group_by=month|quarter|year` periods that add up to the totals, and the organization its accounts
 * together.
 */
describe.runIf(pgOk)('summary rollups (Postgres, anvil, HTTP)', () => {
  let history: ComputedHistory
  let api: TestApi
  let call: ReturnType<typeof http>
  let token: string
  let before = ''
  let from = ''
  let to = ''
  const accounts: { id: string; wallets: string[] }[] = []

  beforeAll(async () => {
    let orgId = ''
    history = await computedHistory({
      backends: ['postgres'],
      before: 3,
      after: 40, // 2026-04-20 .. 2026-06-01
      startDate: '2026-04-20',
      walletCount: 16,
      simulator: { pricesFromDay: 2 },
      onboard: async (db: Db, _backend, devnet) => {
        const repos = createRepos(db)
        const platform = createPlatformService(db)
        const org = await repos.orgs.create({ name: 'custodian', canAllowlist: true })
        orgId = org.id
        const holding = devnet.simulator
          .state()
          .wallets.filter((w) => w.shares > 0n)
          .map((w) => w.address.toLowerCase())
        const a = await platform.createAccount(org.id, 'omnibus', 'test')
        const b = await platform.createAccount(org.id, 'segregated', 'test')
        for (const address of holding.slice(0, 2)) {
          await platform.createWallet(org, a.id, { address, type: 'ETH', allowlisted: false }, 'test')
        }
        const third = holding[2] as string
        await platform.createWallet(org, b.id, { address: third, type: 'ETH', allowlisted: false }, 'test')
        await platform.addDiscountRate(org.id, a.id, '0.05', 'test')
        accounts.push({ id: a.id, wallets: holding.slice(0, 2) }, { id: b.id, wallets: [third] })
      },
    })
    const dbh = history.databases.get('postgres') as DbHandle
    api = await startTestApi('postgres', {}, { dbh })
    token = await clientToken(api.url, await createClient(dbh.db, { orgId, scopes: 'read:eth-rewards' }))
    call = http(api.url, token)
    const dates = (await createRepos(dbh.db).days.list(history.devnet.chainId)).map((d) => d.date).sort()
    before = dates[4] as string
    from = dates[5] as string // registered and priced from here on
    to = dates.at(-1) as string
  }, 600_000)

  afterAll(async () => {
    await api?.close()
    await history?.close()
  })

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
})
