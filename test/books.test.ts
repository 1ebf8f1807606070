import { parse } from 'csv-parse/sync'
import Decimal from 'decimal.js'
import { parseUnits } from 'viem'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { WITHHELD_FROM_OTHERS } from '../api/wallet-presentation.ts'
import { createClient } from '../cli/admin.ts'
import type { Db, DbHandle } from '../db/index.ts'
import { createRepos } from '../db/repos/index.ts'
import { FEE_PART_TOTALS, FEE_PARTS_OF_MODEL, isOtherModelField } from '../engine/index.ts'
import { createPlatformService } from '../platform/service.ts'
import { clientToken, http, startTestApi, type TestApi } from './helpers/api.ts'
import { type ComputedHistory, computedHistory } from './helpers/days.ts'
import { postgresAvailable } from './helpers/services.ts'

const pgOk = await postgresAvailable()
const CUTOVER = '2026-05-01'
/** Wei of an amount string (null: none). */
const wei = (value: string | null | undefined): bigint => (value ? parseUnits(value, 18) : 0n)
type Row = Record<string, string | null>

/**
 * Books that close (issue 23): over a 62-day devnet history crossing the 2026-05-01 fee-model cutover, every
 * wallet-day and account-day the platform reads, in v0 and v1, JSON and CSV (parsed with csv-parse), names
 * its day's fee model, nulls the other model's period parts and has parts that sum to its fee; the running
 * totals of every part sum to the total fee; `unit=eth` totals are the sums of the daily ETH flows; the v1
 * wallet read's rebates are the v0 account read's.
 */
describe.runIf(pgOk)('books across the fee-model cutover (Postgres, anvil, HTTP)', () => {
  let history: ComputedHistory
  let api: TestApi
  let call: ReturnType<typeof http>
  let token: string
  let dates: string[] = []
  const accounts: { id: string; wallets: string[] }[] = []

  beforeAll(async () => {
    let orgId = ''
    history = await computedHistory({
      backends: ['postgres'],
      before: 3,
      after: 59, // 2026-04-01 .. 2026-06-01
      startDate: '2026-04-01',
      walletCount: 24,
      // the price feeds get their first round on day 2: the first days have no price
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
        expect(holding.length).toBeGreaterThanOrEqual(4)
        const omnibus = await platform.createAccount(org.id, 'omnibus', 'test')
        const segregated = await platform.createAccount(org.id, 'segregated', 'test')
        for (const address of holding.slice(0, 3)) {
          await platform.createWallet(org, omnibus.id, { address, type: 'ETH', allowlisted: false }, 'test')
        }
        await platform.createWallet(
          org,
          segregated.id,
          { address: holding[3] as string, type: 'ETH', allowlisted: false },
          'test',
        )
        await platform.addDiscountRate(org.id, omnibus.id, '0.05', 'test')
        accounts.push(
          { id: omnibus.id, wallets: holding.slice(0, 3) },
          { id: segregated.id, wallets: [holding[3] as string] },
        )
      },
    })
    const dbh = history.databases.get('postgres') as DbHandle
    api = await startTestApi('postgres', {}, { dbh })
    token = await clientToken(api.url, await createClient(dbh.db, { orgId, scopes: 'read:eth-rewards' }))
    call = http(api.url, token)
    dates = [...new Set((await createRepos(dbh.db).days.list(history.devnet.chainId)).map((d) => d.date))]
    expect(dates.length).toBeGreaterThanOrEqual(60)
    expect((dates[0] as string) < CUTOVER && (dates.at(-1) as string) > CUTOVER).toBe(true)
  }, 900_000)

  afterAll(async () => {
    await api?.close()
    await history?.close()
  })

  /** The model of a date. */
  const modelOf = (date: string) => (date < CUTOVER ? 'v0' : 'v3')

  /**
   * One rule, on a presented record or totals object of a date's model. A wallet record not attributed to
   * the reader (before its onboarding) withholds the platform part and the one that absorbs it: its other
   * parts are still checked, not their sum.
   */
  function checkRule(record: Row, model: 'v0' | 'v3', where: string) {
    const whole = !('org_id' in record) || record.org_id !== null
    for (const [field, value] of Object.entries(record)) {
      if (isOtherModelField(field, model)) expect(value, `${field} of ${where}`).toBeNull()
      else if (!whole && WITHHELD_FROM_OTHERS.has(field)) expect(value, `${field} of ${where}`).toBeNull()
    }
    const parts = FEE_PARTS_OF_MODEL[model].filter(
      (p) => p in record && (whole || !WITHHELD_FROM_OTHERS.has(p)),
    )
    for (const p of parts) expect(record[p], `${p} of ${where}`).not.toBeNull()
    if (whole && 'fees_eth' in record) {
      expect(
        parts.reduce((s, p) => s + wei(record[p]), 0n),
        `parts of ${where}`,
      ).toBe(wei(record.fees_eth))
    }
    const totals = FEE_PART_TOTALS.filter((t) => t in record)
    if (whole && totals.length === FEE_PART_TOTALS.length) {
      expect(
        totals.reduce((s, t) => s + wei(record[t]), 0n),
        `part totals of ${where}`,
      ).toBe(wei(record.total_fees_eth))
    }
  }

  /** CSV cells as the JSON record has them (an empty cell is null). */
  function csvRows(text: string): Row[] {
    const rows = parse(text, { columns: true }) as Record<string, string>[]
    return rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v === '' ? null : v])))
  }

  /** A POST answered as CSV, parsed. */
  async function postCsv(url: string, body: unknown): Promise<Row[]> {
    const res = await fetch(`${api.url}${url}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'text/csv' },
      body: JSON.stringify(body),
    })
    expect(res.status).toBe(200)
    return csvRows(await res.text())
  }

  test('behavior: every wallet-day and account-day, v0 and v1, JSON and CSV, names its model and sums to its fee', async () => {
    const ids = accounts.map((a) => a.id)
    let walletDays = 0
    let rebated = 0
    for (const date of dates) {
      const model = modelOf(date)
      const body = { accounts: ids, date }
      const v1 = await call('POST', '/eth/v1/rewards/accounts', body)
      const v0 = await call('POST', '/eth/v0/rewards/accounts', body)
      expect([v1.status, v0.status], date).toEqual([200, 200])
      expect(v1.headers.get('x-fee-models')).toBe(model)
      for (const [version, answer] of [
        ['v1', v1.body],
        ['v0', v0.body],
      ] as const) {
        for (const account of answer as { fee_model: string; totals: Row; wallets: Row[] }[]) {
          expect(account.fee_model, date).toBe(model)
          checkRule(account.totals, model, `${version} account totals on ${date}`)
          for (const w of account.wallets) {
            expect(w.fee_model).toBe(model)
            checkRule(w, model, `${version} ${w.address} on ${date}`)
            walletDays += 1
          }
        }
        // CSV: the same wallet-days, the same rule (an empty cell is null)
        const rows = await postCsv(`/eth/${version}/rewards/accounts`, body)
        const json = (answer as { wallets: Row[] }[]).flatMap((a) => a.wallets)
        expect(rows).toEqual(json)
      }
      // the v1 wallet read carries the discount: its rebates are the v0 account read's, wallet by wallet
      const wallets = accounts.flatMap((a) => a.wallets)
      const read = await call('POST', '/eth/v1/rewards/wallets', { addresses: wallets, date })
      const v0Wallets = new Map(
        (v0.body as { wallets: Row[] }[]).flatMap((a) => a.wallets).map((w) => [w.address, w]),
      )
      for (const w of read.body as Row[]) {
        checkRule(w, model, `wallet read ${w.address} on ${date}`)
        const same = v0Wallets.get(w.address as string)
        if (!same) continue
        for (const field of ['rebate_eth', 'total_rebate_eth', 'rebate_lseth', 'discount_rate']) {
          expect(w[field], `${field} of ${w.address} on ${date}`).toBe(same[field])
        }
        if (wei(w.rebate_eth) > 0n) rebated += 1
      }
      // the platform's fee record of the day, in both versions
      // (the v0 fee endpoint stops populating fees from the cutover, as the interface says: all null)
      for (const version of ['v1', 'v0']) {
        const fees = await call('GET', `/eth/${version}/platforms/${date}`)
        expect(fees.body.fee_model).toBe(model)
        if (version === 'v0' && model === 'v3') {
          expect([fees.body.fees_eth, fees.body.platform_fees_eth, fees.body.lc_fees_eth]).toEqual([
            null,
            null,
            null,
          ])
          expect(fees.headers.get('link')).toContain(`/eth/v1/platforms/${date}`)
        } else checkRule(fees.body, model, `${version} platform fees on ${date}`)
      }
    }
    expect(walletDays).toBeGreaterThan(dates.length * 4)
    expect(rebated).toBeGreaterThan(0)
  }, 600_000)

  test('behavior: a summary across the cutover says so, links the other version and sums both models', async () => {
    const omnibus = accounts[0] as { id: string }
    const from = dates[0] as string
    const to = dates.at(-1) as string
    for (const version of ['v1', 'v0']) {
      const res = await call(
        'GET',
        `/eth/${version}/rewards/accounts/${omnibus.id}/summary?from=${from}&to=${to}`,
      )
      expect(res.status).toBe(200)
      expect(res.body.fee_models).toEqual(['v0', 'v3'])
      expect(res.headers.get('x-fee-models')).toBe('v0, v3')
      const other = version === 'v1' ? 'v0' : 'v1'
      expect(res.headers.get('link')).toContain(`/eth/${other}/rewards/accounts/${omnibus.id}/summary`)
      // both models' parts are present over the range, and all of them sum to the range's fee
      const parts = [...new Set([...FEE_PARTS_OF_MODEL.v0, ...FEE_PARTS_OF_MODEL.v3])].filter(
        (p) => p in res.body.totals,
      )
      for (const p of parts) expect(res.body.totals[p], p).not.toBeNull()
      expect(parts.reduce((s, p) => s + wei(res.body.totals[p]), 0n)).toBe(wei(res.body.totals.fees_eth))
      for (const day of res.body.days as { date: string; fee_model: string; totals: Row }[]) {
        expect(day.fee_model).toBe(modelOf(day.date))
        checkRule(day.totals, modelOf(day.date) as 'v0' | 'v3', `summary day ${day.date}`)
      }
    }
    // within one model: the other model's period parts are null in the totals
    const before = await call(
      'GET',
      `/eth/v1/rewards/accounts/${omnibus.id}/summary?from=${from}&to=2026-04-30`,
    )
    expect(before.body.fee_models).toEqual(['v0'])
    expect(before.body.totals.lc_fees_eth).toBeNull()
    expect(before.headers.get('link')).toBeNull()
  })

  test('behavior: unit=eth names every amount in ETH and its totals are the sums of the daily ETH flows', async () => {
    const from = dates[0] as string
    const to = dates.at(-1) as string
    // U and S after each report, from the stored protocol records (as finalized from chain reads)
    const pools: { report_epoch: string; total_underlying_eth: string; total_lseth_supply: string }[] =
      await (history.databases.get('postgres') as DbHandle)
        .db('protocol_records as p')
        .join('days as d', function () {
          this.on('d.report_epoch', 'p.report_epoch').andOn('d.visible_version', 'p.version')
        })
        .select('p.report_epoch', 'p.total_underlying_eth', 'p.total_lseth_supply')
    const poolOf = new Map(
      pools.map((p) => [
        String(p.report_epoch),
        { U: BigInt(p.total_underlying_eth), S: BigInt(p.total_lseth_supply) },
      ]),
    )
    for (const account of accounts) {
      for (const wallet of account.wallets) {
        const eth = await call(
          'GET',
          `/eth/v0/rewards/wallets/${wallet}/summary?from=${from}&to=${to}&unit=eth`,
        )
        const lseth = await call('GET', `/eth/v0/rewards/wallets/${wallet}/summary?from=${from}&to=${to}`)
        expect([eth.status, lseth.status]).toEqual([200, 200])
        const days = eth.body.days as Row[]
        expect(days.length).toBeGreaterThan(50)
        for (const day of days) {
          expect(Object.keys(day).filter((k) => k.endsWith('_lseth'))).toEqual([])
          checkRule(day, modelOf(day.date as string) as 'v0' | 'v3', `eth ${wallet} ${day.date}`)
        }
        // the wallet's whole history is in the range: its ETH totals are the running sums of its ETH flows
        let mints = 0n
        let burns = 0n
        for (const day of days) {
          mints += wei(day.mints_eth)
          burns += wei(day.burns_eth)
          expect(wei(day.total_mints_eth), `total_mints_eth of ${wallet} on ${day.date}`).toBe(mints)
          expect(wei(day.total_burns_eth), `total_burns_eth of ${wallet} on ${day.date}`).toBe(burns)
        }
        expect(wei(eth.body.totals.mints_eth)).toBe(mints)
        expect(wei(eth.body.totals.total_mints_eth)).toBe(mints)
        // each day's flow at that day's rate, never re-priced: ETH = floor(LsETH x U / S) of its own day
        const lsethOf = new Map((lseth.body.days as Row[]).map((d) => [d.date, d]))
        for (const day of days) {
          const same = lsethOf.get(day.date) as Row
          const pool = poolOf.get(day.oracle_report as string) as { U: bigint; S: bigint }
          expect(wei(day.rewards_eth)).toBe(wei(same.rewards_eth))
          expect(wei(day.mints_eth)).toBe((wei(same.mints_lseth) * pool.U) / pool.S)
          expect(wei(day.balance_eth)).toBe((wei(same.balance_lseth) * pool.U) / pool.S)
        }
      }
    }
  })

  test("behavior: currency=usd adds amount x price (half-even, 8 places) from the report's on-chain price; CSV carries it; no price is null with a reason", async () => {
    const ids = accounts.map((a) => a.id)
    let priced = 0
    let missing = 0
    for (const date of dates) {
      const res = await call('POST', '/eth/v1/rewards/accounts?currency=usd', { accounts: ids, date })
      expect(res.status, date).toBe(200)
      for (const account of res.body as { totals: Row; wallets: Row[] }[]) {
        for (const record of [account.totals, ...account.wallets]) {
          if (record.price_usd === null) {
            missing += 1
            expect(record.price_usd_missing_reason, date).toMatch(/\w/)
            expect(record.rewards_usd).toBeNull()
            continue
          }
          priced += 1
          expect(record.price_usd_feed).toMatch(/^0x[0-9a-fA-F]{40}$/)
          expect(Date.parse(record.price_usd_time as string)).toBeLessThanOrEqual(
            Date.parse(`${date}T23:59:59Z`),
          )
          // independently: the exact product, rounded half-even to 8 places (decimal.js)
          const price = new Decimal(record.price_usd as string)
          for (const [name, amount] of [
            ['rewards_usd', 'rewards_eth'],
            ['fees_usd', 'fees_eth'],
          ] as const) {
            const expected = new Decimal(record[amount] as string)
              .times(price)
              .toDecimalPlaces(8, Decimal.ROUND_HALF_EVEN)
            expect(new Decimal(record[name] as string).equals(expected), `${name} on ${date}`).toBe(true)
          }
          expect('total_rewards_usd' in record).toBe(false) // a running total is never re-priced
        }
      }
      // CSV: the same values, one row per wallet-day
      const csv = await fetch(`${api.url}/eth/v1/rewards/accounts?currency=usd`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'text/csv' },
        body: JSON.stringify({ accounts: ids, date }),
      })
      const rows = csvRows(await csv.text())
      expect(rows).toEqual((res.body as { wallets: Row[] }[]).flatMap((a) => a.wallets))
    }
    expect(priced).toBeGreaterThan(100)
    expect(missing).toBeGreaterThan(0)
    // a summary's fiat totals are the sums of its days' values, each at its own day's price
    const account = accounts[0] as { id: string }
    const from = dates[3] as string
    const summary = await call(
      'GET',
      `/eth/v0/rewards/accounts/${account.id}/summary?from=${from}&currency=usd`,
    )
    expect(summary.status).toBe(200)
    const sum = (summary.body.days as { totals: Row }[]).reduce(
      (s, d) => s.plus(d.totals.rewards_usd as string),
      new Decimal(0),
    )
    expect(new Decimal(summary.body.totals.rewards_usd).equals(sum)).toBe(true)
  })
})
