import fs from 'node:fs'
import path from 'node:path'
import {
  type Address,
  createPublicClient,
  type Hex,
  formatUnits as viemFormatUnits,
  http as viemHttp,
} from 'viem'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { redeemManagerAbi, riverReportEventsAbi } from '../chain/abi.ts'
import { createClient, delegateOrg } from '../cli/admin.ts'
import type { Db } from '../db/index.ts'
import { createRepos } from '../db/repos/index.ts'
import { computeExitQueue } from '../engine/index.ts'
import { createPlatformService } from '../platform/service.ts'
import { type Backend, startTestApi, type TestApi } from './helpers/api.ts'
import { type ComputedHistory, computedHistory } from './helpers/days.ts'
import { balancesAfterReport, netReward } from './helpers/records.ts'
import { type ChainReportStep, readReportSteps } from './helpers/report-chain.ts'
import { postgresAvailable } from './helpers/services.ts'

const pgOk = await postgresAvailable()
const backends: Backend[] = pgOk ? ['pglite', 'postgres'] : ['pglite']

const E18 = 10n ** 18n
const wei = (value: string) => {
  const [int = '0', frac = ''] = value.replace('-', '').split('.')
  const units = BigInt(int) * E18 + BigInt(frac.padEnd(18, '0') || '0')
  return value.startsWith('-') ? -units : units
}

/** What the onboarding created in one database. */
interface Onboarded {
  orgA: string
  orgB: string
  orgC: string
  seg: { id: string; key: string; wallet: string; walletId: string }
  omnibus: { id: string; key: string; wallets: string[] }
  other: { id: string; key: string; wallet: string; walletId: string }
}

/** A report read from the chain itself (not from our database). */
interface ChainReport extends ChainReportStep {
  epoch: string
  date: string
  /** `balanceOf` each of `addresses` at the end of the report transaction (what `balance_lseth` holds). */
  balancesAfter(addresses: readonly string[]): Promise<bigint[]>
}

describe('reporting endpoints over HTTP with computed devnet days', () => {
  let history: ComputedHistory
  const onboarded = new Map<Backend, Onboarded>()
  const apis = new Map<Backend, TestApi>()
  const reports: ChainReport[] = []
  let holders: string[] = []

  beforeAll(async () => {
    history = await computedHistory({
      backends,
      before: 7,
      after: 9, // 2026-04-25 .. 2026-05-10: crosses the V3 cutover, loss day 2026-05-07
      walletCount: 40,
      simulator: { behavior: { redeem: 0.06 } }, // enough redeem requests for every projection basis
      onboard: async (db: Db, backend, devnet) => {
        const repos = createRepos(db)
        const platform = createPlatformService(db)
        const orgA = await repos.orgs.create({ name: 'platform A', canAllowlist: true })
        const orgB = await repos.orgs.create({ name: 'platform B', canAllowlist: true })
        const orgC = await repos.orgs.create({ name: 'operator desk', canAllowlist: false })
        const holding = devnet.simulator
          .state()
          .wallets.filter((w) => w.shares > 0n)
          .map((w) => w.address.toLowerCase())
        expect(holding.length).toBeGreaterThanOrEqual(6)
        const segAccount = await platform.createAccount(orgA.id, 'customer-1', 'test')
        const omnibusAccount = await platform.createAccount(orgA.id, 'omnibus', 'test')
        const otherAccount = await platform.createAccount(orgB.id, 'customer-1', 'test')
        const attach = (org: typeof orgA, account: string, address: string) =>
          platform.createWallet(org, account, { address, type: 'ETH', allowlisted: false }, 'test')
        const segWallet = await attach(orgA, segAccount.id, holding[0]!)
        for (const a of holding.slice(1, 4)) await attach(orgA, omnibusAccount.id, a)
        const otherWallet = await attach(orgB, otherAccount.id, holding[4]!)
        await platform.addDiscountRate(orgA.id, omnibusAccount.id, '0.05', 'test')
        await platform.addDiscountRate(orgB.id, otherAccount.id, '0.02', 'test')
        onboarded.set(backend, {
          orgA: orgA.id,
          orgB: orgB.id,
          orgC: orgC.id,
          seg: { id: segAccount.id, key: 'customer-1', wallet: holding[0]!, walletId: segWallet.id },
          omnibus: { id: omnibusAccount.id, key: 'omnibus', wallets: holding.slice(1, 4) },
          other: { id: otherAccount.id, key: 'customer-1', wallet: holding[4]!, walletId: otherWallet.id },
        })
      },
    })
    const { devnet } = history
    for (const [backend, dbh] of history.databases) {
      // DATA_DIR: the devnet's, where its consensus facts are (the validator exit queue reads them)
      apis.set(backend, await startTestApi(backend, { DATA_DIR: history.dataDir }, { dbh }))
    }

    // the reports and the pool's U / S, read from the chain
    const client = createPublicClient({ transport: viemHttp(devnet.rpcUrl) })
    const river = devnet.contracts.river as Address
    // the reports of every River version: ConsensusLayerDataUpdate (epoch in its roundId) before 1.0.0
    const logs = await client.getContractEvents({ address: river, abi: riverReportEventsAbi, fromBlock: 0n })
    const steps = await readReportSteps(
      client,
      river,
      logs.map((log) => log.blockNumber as bigint),
    )
    for (const [i, log] of logs.entries()) {
      const step = steps[i] as ChainReportStep
      const time = (await client.getBlock({ blockNumber: step.block })).timestamp
      reports.push({
        ...step,
        epoch:
          log.eventName === 'ConsensusLayerDataUpdate'
            ? BigInt((log.args as { roundId: Hex }).roundId).toString()
            : String((log.args as { report: { epoch: bigint } }).report.epoch),
        date: new Date(Number(time) * 1000).toISOString().slice(0, 10),
        balancesAfter: (addresses) => balancesAfterReport(client, river, step.block, addresses),
      })
    }
    const roles = devnet.simulator.deployment.roles
    holders = [
      ...devnet.simulator.state().wallets.map((w) => w.address.toLowerCase()),
      devnet.contracts.river.toLowerCase(),
      devnet.contracts.redeemManager.toLowerCase(),
      roles.collector.toLowerCase(),
    ]
  }, 600_000)

  afterAll(async () => {
    for (const api of apis.values()) await api.close()
    await history?.close()
  })

  /** Chain-read rate U / S as the interface's 18-decimal string. */
  const rateOf = (U: bigint, S: bigint) => viemFormatUnits((U * E18) / S, 18)

  describe.each(backends)('%s', (backend) => {
    const api = () => apis.get(backend) as TestApi
    const ids = () => onboarded.get(backend) as Onboarded
    const tokens = new Map<string, string>()

    /** A token of `orgId` with `scopes` (clients are created once per org and scope set). */
    async function tokenFor(orgId: string, scopes = 'read:eth-rewards read:platform write:platform') {
      const key = `${orgId} ${scopes}`
      const cached = tokens.get(key)
      if (cached) return cached
      const client = await createClient(api().dbh.db, { orgId, scopes })
      const res = await api().app.inject({
        method: 'POST',
        url: '/oauth/token',
        payload: {
          grant_type: 'client_credentials',
          audience: api().url,
          client_id: client.client_id,
          client_secret: client.client_secret,
        },
      })
      const token = (res.json() as { access_token: string }).access_token
      tokens.set(key, token)
      return token
    }

    /** app.inject with a token; body parsed as JSON when it is JSON. */
    async function call(
      method: 'GET' | 'POST',
      url: string,
      options: { token?: string | undefined; body?: unknown; headers?: Record<string, string> } = {},
    ) {
      const res = await api().app.inject({
        method,
        url,
        headers: {
          ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
          ...options.headers,
        },
        ...(options.body !== undefined ? { payload: options.body as object } : {}),
      })
      const isJson = String(res.headers['content-type'] ?? '').includes('json')
      return {
        status: res.statusCode,
        headers: res.headers,
        text: res.body,
        // biome-ignore lint/suspicious/noExplicitAny: test convenience: bodies are asserted field by field
        body: (isJson ? res.json() : res.body) as any,
      }
    }
    const asA = async () => tokenFor(ids().orgA)

    test('behavior: every wallet record served equals a recomputation from chain reads, to the wei', async () => {
      const token = await asA()
      const running = new Map<string, bigint>()
      let checked = 0
      expect(reports.length).toBe(16)
      for (const report of reports) {
        const res = await call('POST', '/eth/v1/rewards/wallets', {
          token,
          body: { addresses: holders, date: report.date },
        })
        expect(res.status, res.text).toBe(200)
        expect(res.headers['x-report-epoch']).toBe(report.epoch)
        expect(res.headers['x-report-date']).toBe(report.date)
        const served = new Map((res.body as Record<string, string>[]).map((r) => [r.address, r]))
        // the balance at the end of the report transaction (the collector's fee mint, the RedeemManager's
        // burn included); the rewards on the shares held right before it
        const [before, after] = await Promise.all([
          report.balancesBefore(holders),
          report.balancesAfter(holders),
        ])
        holders.forEach((address, i) => {
          const shares = before[i] as bigint
          const balance = after[i] as bigint
          const record = served.get(address)
          if (!record) {
            expect([shares, balance], `${address} on ${report.date} has LsETH but no record`).toEqual([
              0n,
              0n,
            ])
            return
          }
          const where = `${address} on ${report.date}`
          const rewards = netReward(shares, report)
          const total = (running.get(address) ?? 0n) + rewards
          running.set(address, total)
          expect(wei(record.balance_lseth as string), `balance of ${where}`).toBe(balance)
          expect(wei(record.rewards_eth as string), `rewards of ${where}`).toBe(rewards)
          expect(wei(record.total_rewards_eth as string), `total rewards of ${where}`).toBe(total)
          expect(record.conversion_rate, where).toBe(rateOf(report.U, report.S))
          expect(record.previous_conversion_rate, where).toBe(rateOf(report.Up, report.Sp))
          expect(record.oracle_report).toBe(report.epoch)
          expect(record.date).toBe(report.date)
          checked++
        })
      }
      expect(checked).toBeGreaterThan(reports.length * 10)
    })

    test('behavior: lots equal balance x (rate(to) - rate(from)) with the chain rates', async () => {
      const token = await asA()
      const from = reports[2] as ChainReport
      const to = reports[11] as ChainReport
      const last = reports[reports.length - 1] as ChainReport
      const rate = (r: ChainReport) => (r.U * E18) / r.S // 18-decimal integer, rounded down as served
      const res = await call('POST', '/eth/v1/rewards', {
        token,
        body: [
          { balance: '3', from: from.date, to: to.date },
          { balance: '1.5', from: from.date },
        ],
      })
      expect(res.status, res.text).toBe(200)
      expect(res.headers['x-report-epoch']).toBe(last.epoch)
      const [a, b] = res.body.lots
      expect(a.start_conversion_rate).toBe(rateOf(from.U, from.S))
      expect(a.end_conversion_rate).toBe(rateOf(to.U, to.S))
      expect(wei(a.accrued_rewards)).toBe(3n * (rate(to) - rate(from)))
      expect(b.to).toBe(last.date)
      // 1.5 x rate: floor to 18 decimals of each value, then the difference
      const value = (r: ChainReport) => (15n * rate(r)) / 10n
      expect(wei(b.accrued_rewards)).toBe(value(last) - value(from))
      expect(wei(res.body.accrued_rewards)).toBe(wei(a.accrued_rewards) + wei(b.accrued_rewards))
      expect(res.body.balance).toBe('4.5')

      // a date between reports uses the last report on or before it; errors
      const bad = async (body: unknown) => {
        const r = await call('POST', '/eth/v1/rewards', { token, body })
        return [r.status, r.body.status]
      }
      expect(await bad([{ balance: '1', from: to.date, to: from.date }])).toEqual([400, 'IR4001'])
      expect(await bad([{ balance: '1', from: '2026-01-01' }])).toEqual([400, 'IR4001'])
      // from the protocol's first report (a River 0.4.0 report) on, exactly; the day before it is refused
      const first = reports[0] as ChainReport
      const fromFirst = await call('POST', '/eth/v1/rewards', {
        token,
        body: [{ balance: '2', from: first.date, to: to.date }],
      })
      expect(fromFirst.status, fromFirst.text).toBe(200)
      expect(fromFirst.body.lots[0].start_conversion_rate).toBe(rateOf(first.U, first.S))
      expect(wei(fromFirst.body.lots[0].accrued_rewards)).toBe(2n * (rate(to) - rate(first)))
      const dayBefore = new Date(Date.parse(first.date) - 86_400_000).toISOString().slice(0, 10)
      expect(await bad([{ balance: '1', from: dayBefore }])).toEqual([400, 'IR4001'])
      expect(await bad([{ balance: '1', from: from.date, to: '2027-01-01' }])).toEqual([400, 'IR4001'])
      expect(await bad([{ balance: '1', from: '2026-13-01' }])).toEqual([400, 'IR1000'])
      expect(await bad([{ balance: 'abc', from: from.date }])).toEqual([400, 'IR1000'])
      expect(await bad([])).toEqual([400, 'IR1000'])
      expect(await bad(Array.from({ length: 1001 }, () => ({ balance: '1', from: from.date })))).toEqual([
        400,
        'IR1006',
      ])
      const unit = await call('POST', '/eth/v1/rewards?unit=lseth', {
        token,
        body: [{ balance: '1', from: from.date }],
      })
      expect([unit.status, unit.body.status]).toEqual([400, 'IR1000'])
    })

    test('behavior: accounts of the reading org with their wallets; other orgs omitted like unknown ones', async () => {
      const token = await asA()
      const day = reports[12] as ChainReport // after onboarding: attributed
      const { seg, omnibus, other } = ids()
      const res = await call('POST', '/eth/v1/rewards/accounts', {
        token,
        body: {
          accounts: [omnibus.id, seg.key, other.id, '00000000-0000-4000-8000-000000000000', 'nope'],
          date: day.date,
        },
      })
      expect(res.status, res.text).toBe(200)
      expect(res.headers['x-report-epoch']).toBe(day.epoch)
      expect(res.body.map((a: { account_id: string }) => a.account_id)).toEqual([omnibus.id, seg.id])
      const om = res.body[0]
      expect(om.date).toBe(day.date)
      expect(om.wallets.map((w: { address: string }) => w.address).sort()).toEqual(
        [...omnibus.wallets].sort(),
      )
      for (const field of ['balance_lseth', 'rewards_eth', 'total_rewards_eth', 'platform_fees_eth']) {
        const sum = om.wallets.reduce(
          (s: bigint, w: Record<string, string>) => s + wei(w[field] as string),
          0n,
        )
        expect(wei(om.totals[field]), field).toBe(sum)
      }
      expect(Object.keys(om.totals).slice(0, 2)).toEqual(['balance_lseth', 'rewards_eth'])
      for (const w of om.wallets) {
        expect(w.account_id).toBe(omnibus.id)
        expect(w.org_id).toBe(ids().orgA)
        // the record names its model; the other model's period parts are null, its parts sum to the fee
        expect(w.fee_model).toBe('v3')
        expect(w.dao_fees_eth).toBeNull()
        const parts = ['lc_fees_eth', 'tech_provider_fees_eth', 'operator_fees_eth', 'platform_fees_eth']
        expect(parts.reduce((sum, p) => sum + wei(w[p]), 0n)).toBe(wei(w.fees_eth))
      }
      expect(om.fee_model).toBe('v3')
      expect(res.headers['x-fee-models']).toBe('v3')
      // before onboarding the account had no attributed wallets: zero totals, no wallets
      const early = await call('POST', '/eth/v1/rewards/accounts', {
        token,
        body: { accounts: [omnibus.id], date: (reports[1] as ChainReport).date },
      })
      expect(early.body[0].wallets).toEqual([])
      expect(early.body[0].totals.balance_lseth).toBe('0')
      // another org's account: omitted, exactly like an unknown one
      const onlyOther = await call('POST', '/eth/v1/rewards/accounts', {
        token,
        body: { accounts: [other.id], date: day.date },
      })
      const onlyUnknown = await call('POST', '/eth/v1/rewards/accounts', {
        token,
        body: { accounts: ['00000000-0000-4000-8000-000000000001'], date: day.date },
      })
      expect([onlyOther.status, onlyOther.body]).toEqual([onlyUnknown.status, onlyUnknown.body])
      expect(onlyOther.body).toEqual([])
    })

    test("behavior: any holder may be read by address; another org's wallet reads like an unregistered one", async () => {
      const day = reports[12] as ChainReport
      const { other, seg } = ids()
      const asAToken = await asA()
      const asBToken = await tokenFor(ids().orgB)
      const read = async (token: string) =>
        (
          await call('POST', '/eth/v1/rewards/wallets', {
            token,
            body: { addresses: [other.wallet, seg.wallet], date: day.date },
          })
        ).body as Record<string, string | null>[]
      const [byA, byB] = [await read(asAToken), await read(asBToken)]
      const otherByA = byA.find((r) => r.address === other.wallet)!
      const otherByB = byB.find((r) => r.address === other.wallet)!
      expect(otherByB.account_id).toBe(other.id)
      expect(otherByB.org_id).toBe(ids().orgB)
      expect(otherByA.account_id).toBeNull()
      expect(otherByA.org_id).toBeNull()
      expect(otherByA.rewards_eth).toBe(otherByB.rewards_eth) // protocol facts are the same
      // whether it is on a platform's list is not shown: its platform part, the part that takes the platform
      // share off-platform and its discount are withheld (null), like any holder's not the reader's own
      for (const field of ['platform_fees_eth', 'total_platform_fees_eth', 'lc_fees_eth', 'rebate_eth']) {
        expect(otherByA[field], field).toBeNull()
        expect(otherByB[field], field).not.toBeNull()
      }
      expect(otherByA.operator_fees_eth).toBe(otherByB.operator_fees_eth)
      expect(byA.find((r) => r.address === seg.wallet)!.account_id).toBe(seg.id)
      expect(byB.find((r) => r.address === seg.wallet)!.account_id).toBeNull()

      // v0: the discount of another org's account is not shown
      const v0 = await call(
        'GET',
        `/eth/v0/rewards/wallets/${other.wallet}/summary?from=${day.date}&to=${day.date}`,
        {
          token: asAToken,
        },
      )
      expect(v0.status, v0.text).toBe(200)
      expect(v0.body.account_id).toBeNull()
      expect(v0.body.days[0].discount_rate).toBeNull()
      expect(v0.body.days[0].rebate_eth).toBeNull()
      expect(v0.body.totals.platform_fees_eth).toBeNull()
      const v0B = await call(
        'GET',
        `/eth/v0/rewards/wallets/${other.wallet}/summary?from=${day.date}&to=${day.date}`,
        {
          token: asBToken,
        },
      )
      expect(v0B.body.days[0].discount_rate).not.toBe('0')
      expect(v0B.body.totals.platform_fees_eth).not.toBeNull()

      // by id: another org's wallet id answers exactly like an unknown id
      const foreign = await call('GET', `/eth/v1/rewards/wallets/${other.walletId}/summary`, {
        token: asAToken,
      })
      const unknown = await call(
        'GET',
        '/eth/v1/rewards/wallets/00000000-0000-4000-8000-000000000000/summary',
        {
          token: asAToken,
        },
      )
      expect([foreign.status, foreign.body.status]).toEqual([404, 'IR3100'])
      expect(foreign.body.status).toBe(unknown.body.status)
      const foreignAccount = await call('GET', `/eth/v1/rewards/accounts/${other.id}/summary`, {
        token: asAToken,
      })
      const foreignKey = await call('GET', '/eth/v1/rewards/accounts/omnibus/summary', { token: asBToken })
      expect([foreignAccount.status, foreignAccount.body.status]).toEqual([404, 'IR3000'])
      expect([foreignKey.status, foreignKey.body.status]).toEqual([404, 'IR3000'])
    })

    test('behavior: Impersonate-Org needs its scope and a delegation, then reads as that org', async () => {
      const day = reports[12] as ChainReport
      const { omnibus } = ids()
      const body = { accounts: [omnibus.id], date: day.date }
      const plain = await call('POST', '/eth/v1/rewards/accounts', {
        token: await asA(),
        body,
        headers: { 'impersonate-org': ids().orgB },
      })
      expect([plain.status, plain.body.status]).toEqual([403, 'IR2003'])
      const desk = await tokenFor(ids().orgC, 'read:eth-rewards impersonate:org')
      const missing = await call('POST', '/eth/v1/rewards/accounts', {
        token: desk,
        body,
        headers: { 'impersonate-org': 'org_doesnotexist' },
      })
      expect([missing.status, missing.body.status]).toEqual([403, 'IR2008'])
      const asDesk = await call('POST', '/eth/v1/rewards/accounts', { token: desk, body })
      expect(asDesk.body).toEqual([]) // the desk's own org has no such account
      // A has not named the desk a delegate yet: the same 403 as for an unknown org
      const undelegated = await call('POST', '/eth/v1/rewards/accounts', {
        token: desk,
        body,
        headers: { 'impersonate-org': ids().orgA },
      })
      expect([undelegated.status, undelegated.body]).toEqual([missing.status, missing.body])
      await delegateOrg(api().dbh.db, { orgId: ids().orgA, delegateOrgId: ids().orgC })
      const impersonated = await call('POST', '/eth/v1/rewards/accounts', {
        token: desk,
        body,
        headers: { 'impersonate-org': ids().orgA },
      })
      const direct = await call('POST', '/eth/v1/rewards/accounts', { token: await asA(), body })
      expect(impersonated.status).toBe(200)
      expect(impersonated.body).toEqual(direct.body)
      const summary = await call('GET', `/eth/v1/rewards/accounts/${omnibus.key}/summary`, {
        token: desk,
        headers: { 'impersonate-org': ids().orgA },
      })
      expect(summary.status, summary.text).toBe(200)
      const wallets = await call('POST', '/eth/v1/rewards/wallets', {
        token: desk,
        body: { addresses: [omnibus.wallets[0]], date: day.date },
        headers: { 'impersonate-org': ids().orgA },
      })
      expect(wallets.body[0].account_id).toBe(omnibus.id)
    })

    test('behavior: summaries give range totals and the daily series; CSV has one row per wallet-day', async () => {
      const token = await asA()
      const { seg, omnibus } = ids()
      const from = (reports[3] as ChainReport).date
      const to = (reports[14] as ChainReport).date
      const byId = await call(
        'GET',
        `/eth/v1/rewards/wallets/${seg.walletId}/summary?from=${from}&to=${to}`,
        { token },
      )
      const byAddress = await call(
        'GET',
        `/eth/v1/rewards/wallets/${seg.wallet}/summary?from=${from}&to=${to}`,
        {
          token,
        },
      )
      expect(byId.status, byId.text).toBe(200)
      expect(byId.body).toEqual(byAddress.body)
      expect(byId.headers['x-report-date']).toBe(to)
      const days = byId.body.days as Record<string, string>[]
      expect(days.map((d) => d.date)).toEqual(reports.slice(3, 15).map((r) => r.date))
      const sum = (field: string) => days.reduce((s, d) => s + wei(d[field] as string), 0n)
      expect(wei(byId.body.totals.rewards_eth)).toBe(sum('rewards_eth'))
      expect(wei(byId.body.totals.fees_eth)).toBe(sum('fees_eth'))
      expect(byId.body.totals.balance_lseth).toBe(days.at(-1)!.balance_lseth)
      expect(byId.body.totals.total_rewards_eth).toBe(days.at(-1)!.total_rewards_eth)

      const account = await call(
        'GET',
        `/eth/v1/rewards/accounts/${omnibus.id}/summary?from=${from}&to=${to}`,
        {
          token,
        },
      )
      expect(account.status, account.text).toBe(200)
      const accountDays = account.body.days as { totals: Record<string, string>; wallets: unknown[] }[]
      expect(wei(account.body.totals.rewards_eth)).toBe(
        accountDays.reduce((s, d) => s + wei(d.totals.rewards_eth as string), 0n),
      )
      const walletDays = accountDays.reduce((n, d) => n + d.wallets.length, 0)
      expect(walletDays).toBeGreaterThan(0)

      // CSV: header row = the record's field names, then one row per wallet-day
      const csv = await call('GET', `/eth/v1/rewards/accounts/${omnibus.id}/summary?from=${from}&to=${to}`, {
        token,
        headers: { accept: 'text/csv' },
      })
      expect(csv.status).toBe(200)
      expect(csv.headers['content-type']).toMatch(/^text\/csv/)
      const lines = csv.text.trimEnd().split('\r\n')
      const header = lines[0]!.split(',')
      expect(header.slice(0, 5)).toEqual(['oracle_report', 'address', 'account_id', 'org_id', 'date'])
      expect(header).toContain('period_lc_fees_lseth')
      expect(lines.length - 1).toBe(walletDays)
      const walletCsv = await call(
        'GET',
        `/eth/v0/rewards/wallets/${seg.wallet}/summary?from=${from}&to=${to}`,
        {
          token,
          headers: { accept: 'text/csv' },
        },
      )
      const v0Lines = walletCsv.text.trimEnd().split('\r\n')
      expect(v0Lines.length - 1).toBe(days.length)
      expect(v0Lines[0]!.split(',')).toContain('rebate_eth')
      const posted = await call('POST', '/eth/v1/rewards/wallets', {
        token,
        body: { addresses: holders, date: to },
        headers: { accept: 'text/csv' },
      })
      const json = await call('POST', '/eth/v1/rewards/wallets', {
        token,
        body: { addresses: holders, date: to },
      })
      const rows = posted.text.trimEnd().split('\r\n')
      expect(rows.length - 1).toBe(json.body.length)
      const columns = rows[0]!.split(',')
      const first = rows[1]!.split(',')
      expect(first[columns.indexOf('rewards_eth')]).toBe(json.body[0].rewards_eth)
      const accountsCsv = await call('POST', '/eth/v0/rewards/accounts', {
        token,
        body: { accounts: [omnibus.id, seg.id], date: to },
        headers: { accept: 'text/csv' },
      })
      expect(accountsCsv.text.trimEnd().split('\r\n').length - 1).toBe(omnibus.wallets.length + 1)

      // defaults: to = latest computed date, from = 29 days before it
      const latest = await call('GET', `/eth/v1/rewards/wallets/${seg.wallet}/summary`, { token })
      expect(latest.body.to).toBe(reports.at(-1)!.date)
      // one day per report from the first one the wallet held LsETH at (the chain says which)
      const held = await Promise.all(reports.map(async (r) => (await r.balancesBefore([seg.wallet]))[0]!))
      const firstHeld = held.findIndex((balance) => balance > 0n)
      expect(latest.body.days.length).toBe(reports.length - firstHeld)
    })

    test('behavior: v0 accounts carry the discount fields; unit eth names and values every amount in ETH', async () => {
      const token = await asA()
      const { omnibus } = ids()
      const day = reports[14] as ChainReport
      const lseth = await call('POST', '/eth/v0/rewards/accounts', {
        token,
        body: { accounts: [omnibus.id], date: day.date, unit: 'lseth' },
      })
      expect(lseth.status, lseth.text).toBe(200)
      const wallet = lseth.body[0].wallets[0]
      expect(wallet.discount_rate).not.toBe('0')
      expect(wallet.gross_protocol_fee_rate).toBeDefined()
      expect(wallet.period_lc_fees_lseth).toBeUndefined()
      expect(wallet.fee_model).toBe('v3')
      expect(wallet.dao_fees_eth).toBeNull() // no DAO part in V3: the LC part is named instead
      const v0Parts = ['lc_fees_eth', 'tech_provider_fees_eth', 'operator_fees_eth', 'platform_fees_eth']
      expect(v0Parts.reduce((sum, p) => sum + wei(wallet[p]), 0n)).toBe(wei(wallet.fees_eth))
      expect(wei(wallet.platform_fees_at_discount_rate_eth)).toBe(
        wei(wallet.platform_fees_eth) - wei(wallet.rebate_eth),
      )
      const eth = await call('POST', '/eth/v0/rewards/accounts', {
        token,
        body: { accounts: [omnibus.id], date: day.date, unit: 'eth' },
      })
      expect(eth.status, eth.text).toBe(200)
      const ethWallet = eth.body[0].wallets.find((w: { address: string }) => w.address === wallet.address)
      // every amount named and valued in ETH: the balance at the report's rate, the flows at their days'
      expect(ethWallet.balance_lseth).toBeUndefined()
      expect(ethWallet.rebate_lseth).toBeUndefined()
      expect(wei(ethWallet.balance_eth)).toBe((wei(wallet.balance_lseth) * day.U) / day.S)
      expect(wei(ethWallet.mints_eth)).toBe((wei(wallet.mints_lseth) * day.U) / day.S)
      expect(ethWallet.rewards_eth).toBe(wallet.rewards_eth)
      expect(Object.keys(eth.body[0].totals)).not.toContain('balance_lseth')
      expect(Object.keys(eth.body[0].totals)).toContain('total_mints_eth')
      const bad = await call('POST', '/eth/v0/rewards/accounts', {
        token,
        body: { accounts: [omnibus.id], date: day.date, unit: 'wei' },
      })
      expect([bad.status, bad.body.status]).toEqual([400, 'IR1000'])
      const v1unit = await call('POST', '/eth/v1/rewards/accounts', {
        token,
        body: { accounts: [omnibus.id], date: day.date, unit: 'lseth' },
      })
      expect([v1unit.status, v1unit.body.status]).toEqual([400, 'IR1000'])
    })

    test('behavior: dates without a computed report are 404 with a message, malformed dates 400, limits 400', async () => {
      const token = await asA()
      const { seg } = ids()
      const cases: [string, string, unknown, number, string][] = [
        ['POST', '/eth/v1/rewards/wallets', { addresses: [seg.wallet], date: '2026-01-01' }, 404, 'IR4000'],
        ['POST', '/eth/v1/rewards/wallets', { addresses: [seg.wallet], date: '2030-01-01' }, 404, 'IR4000'],
        ['POST', '/eth/v1/rewards/wallets', { addresses: [seg.wallet], date: '2026-02-30' }, 400, 'IR1000'],
        ['POST', '/eth/v1/rewards/wallets', { addresses: [seg.wallet], date: 'yesterday' }, 400, 'IR1000'],
        ['POST', '/eth/v1/rewards/wallets', { addresses: ['0x12'], date: reports[0]!.date }, 400, 'IR3101'],
        ['POST', '/eth/v1/rewards/wallets', { addresses: [], date: reports[0]!.date }, 400, 'IR1000'],
        [
          'POST',
          '/eth/v1/rewards/wallets',
          { addresses: Array.from({ length: 1001 }, () => seg.wallet), date: reports[0]!.date },
          400,
          'IR1006',
        ],
        [
          'POST',
          '/eth/v1/rewards/accounts',
          { accounts: Array.from({ length: 1001 }, () => 'x'), date: reports[0]!.date },
          400,
          'IR1006',
        ],
        ['POST', '/eth/v1/rewards/accounts', { accounts: ['x'], date: '2026-01-01' }, 404, 'IR4000'],
        [
          'GET',
          `/eth/v1/rewards/wallets/${seg.wallet}/summary?from=2026-01-01&to=2026-02-01`,
          undefined,
          404,
          'IR4000',
        ],
        [
          'GET',
          `/eth/v1/rewards/wallets/${seg.wallet}/summary?from=2025-01-01&to=2026-05-01`,
          undefined,
          400,
          'IR4001',
        ],
        [
          'GET',
          `/eth/v1/rewards/wallets/${seg.wallet}/summary?from=2026-05-02&to=2026-05-01`,
          undefined,
          400,
          'IR4001',
        ],
        ['GET', `/eth/v1/rewards/wallets/${seg.wallet}/summary?from=2026-5-1`, undefined, 400, 'IR1000'],
        ['GET', `/eth/v1/rewards/wallets/${seg.wallet}/summary?unit=eth`, undefined, 400, 'IR1000'],
        ['GET', `/eth/v0/rewards/wallets/${seg.wallet}/summary?unit=btc`, undefined, 400, 'IR1000'],
        ['GET', '/eth/v1/rewards/accounts/nobody/summary', undefined, 404, 'IR3000'],
        ['GET', '/eth/v1/platforms/2026-01-01', undefined, 404, 'IR4000'],
        ['GET', '/eth/v1/operators/2026-13-01', undefined, 400, 'IR1000'],
        ['GET', '/eth/v0/protocol/2026-01-01', undefined, 404, 'IR4000'],
      ]
      for (const [method, url, body, status, code] of cases) {
        const res = await call(method as 'GET' | 'POST', url, { token, body })
        expect([res.status, res.body.status], `${method} ${url}`).toEqual([status, code])
        expect(typeof res.body.message).toBe('string')
      }
      const missing = await call('POST', '/eth/v1/rewards/wallets', {
        token,
        body: { addresses: [seg.wallet], date: '2026-01-01' },
      })
      expect(missing.body.message).toContain(`from ${reports[0]!.date} to ${reports.at(-1)!.date}`)
    })

    test('behavior: responses carry their report; computed days answer 304 to a matching If-None-Match', async () => {
      const token = await asA()
      const { seg } = ids()
      const day = reports[13] as ChainReport
      const urls: [string, string, unknown][] = [
        ['POST', '/eth/v1/rewards/wallets', { addresses: [seg.wallet], date: day.date }],
        ['POST', '/eth/v1/rewards/accounts', { accounts: [seg.id], date: day.date }],
        ['GET', `/eth/v1/platforms/${day.date}`, undefined],
        ['GET', `/eth/v1/originators/${day.date}`, undefined],
        ['GET', `/eth/v1/operators/${day.date}`, undefined],
        ['GET', `/eth/v0/platforms/${day.date}`, undefined],
        ['GET', `/eth/v0/operators/${day.date}`, undefined],
        ['GET', `/eth/v0/protocol/${day.date}`, undefined],
        ['GET', `/eth/v1/rewards/wallets/${seg.wallet}/summary?to=${day.date}`, undefined],
      ]
      for (const [method, url, body] of urls) {
        const first = await call(method as 'GET' | 'POST', url, { token, body })
        expect(first.status, `${url}: ${first.text}`).toBe(200)
        expect(first.headers['x-report-epoch'], url).toBe(day.epoch)
        expect(first.headers['x-report-date'], url).toBe(day.date)
        const etag = first.headers.etag as string
        expect(etag, url).toMatch(/^".+"$/)
        const again = await call(method as 'GET' | 'POST', url, {
          token,
          body,
          headers: { 'if-none-match': etag },
        })
        expect(again.status, url).toBe(304)
        expect(again.text).toBe('')
        expect(again.headers['x-report-epoch']).toBe(day.epoch)
        const csv = await call(method as 'GET' | 'POST', url, {
          token,
          body,
          headers: { 'if-none-match': etag, accept: 'text/csv' },
        })
        if (url.includes('rewards')) expect(csv.status, url).toBe(200) // another representation
      }
      const other = await call('POST', '/eth/v1/rewards/wallets', {
        token,
        body: { addresses: [seg.wallet], date: (reports[12] as ChainReport).date },
        headers: { 'if-none-match': '"stale"' },
      })
      expect(other.status).toBe(200)
    })

    test("behavior: platform, originator and operator fees of a date; v0 fee fields stop at the cutover, v1 names the day's model", async () => {
      const token = await asA()
      const { omnibus, seg } = ids()
      const v3Day = reports[13] as ChainReport
      const v0Day = reports[3] as ChainReport
      const accounts = await call('POST', '/eth/v1/rewards/accounts', {
        token,
        body: { accounts: [omnibus.id, seg.id], date: v3Day.date },
      })
      const wallets = accounts.body.flatMap((a: { wallets: Record<string, string>[] }) => a.wallets)
      const platformFees = wallets.reduce(
        (s: bigint, w: Record<string, string>) => s + wei(w.platform_fees_eth!),
        0n,
      )
      const platforms = await call('GET', `/eth/v1/platforms/${v3Day.date}`, { token })
      expect(platforms.status, platforms.text).toBe(200)
      expect(platforms.body.org_id).toBe(ids().orgA)
      expect(platforms.body.fee_model).toBe('v3')
      expect(wei(platforms.body.platform_fees_eth)).toBe(platformFees)
      expect(platformFees).toBeGreaterThan(0n)
      expect(wei(platforms.body.rebate_eth)).toBeGreaterThan(0n)
      expect(platforms.body.wallets).toBe(4)
      const originators = await call('GET', `/eth/v1/originators/${v3Day.date}`, { token })
      expect(originators.body.platform_fees_eth).toBe(platforms.body.platform_fees_eth)

      // one rule: the other model's parts null, the record's parts sum to its fee, in both versions
      expect(platforms.body.dao_fees_eth).toBeNull()
      const v3Parts = ['lc_fees_eth', 'tech_provider_fees_eth', 'operator_fees_eth', 'platform_fees_eth']
      expect(v3Parts.reduce((sum, p) => sum + wei(platforms.body[p]), 0n)).toBe(wei(platforms.body.fees_eth))
      // the interface's explicit rule for the v0 fee endpoints: from the cutover they stop populating fees
      const v0After = await call('GET', `/eth/v0/platforms/${v3Day.date}`, { token })
      expect(v0After.status).toBe(200)
      expect(v0After.body.fee_model).toBe('v3')
      expect(v0After.body.platform_fees_eth).toBeNull()
      expect(v0After.body.fees_eth).toBeNull()
      expect(v0After.body.platform_fees_rate).toBeNull()
      expect(v0After.body.rewards_eth).toBe(platforms.body.rewards_eth)
      expect(v0After.headers.link).toContain(`/eth/v1/platforms/${v3Day.date}`)
      const v0Before = await call('GET', `/eth/v0/platforms/${v0Day.date}`, { token })
      expect(v0Before.body.fee_model).toBe('v0')
      expect(v0Before.body.dao_fees_eth).toBe('0') // nothing attributed before onboarding
      expect(v0Before.body.lc_fees_eth).toBeNull()
      expect(v0Before.body.wallets).toBe(0)
      const v1Before = await call('GET', `/eth/v1/platforms/${v0Day.date}`, { token })
      expect([v1Before.body.fee_model, v1Before.body.lc_fees_eth, v1Before.body.dao_fees_eth]).toEqual([
        'v0',
        null,
        '0',
      ])

      const operators = await call('GET', `/eth/v1/operators/${v3Day.date}`, { token })
      expect(operators.status).toBe(200)
      expect(operators.body.length).toBeGreaterThan(0)
      const opSum = operators.body.reduce(
        (s: bigint, o: { operator_fees_eth: string }) => s + wei(o.operator_fees_eth),
        0n,
      )
      const all = await api()
        .dbh.db('fee_records as f')
        .join('days as d', function () {
          this.on('d.report_epoch', 'f.report_epoch').andOn('d.visible_version', 'f.version')
        })
        .where({ 'f.kind': 'all', 'd.report_epoch': v3Day.epoch })
        .first('f.operator_fees_eth')
      expect(opSum).toBe(BigInt(all.operator_fees_eth))
      const v0Ops = await call('GET', `/eth/v0/operators/${v3Day.date}`, { token })
      expect(v0Ops.body.every((o: { operator_fees_eth: null }) => o.operator_fees_eth === null)).toBe(true)
      expect(v0Ops.headers.link).toContain(`/eth/v1/operators/${v3Day.date}`)
      const v0OpsBefore = await call('GET', `/eth/v0/operators/${v0Day.date}`, { token })
      expect(
        v0OpsBefore.body.every((o: { operator_fees_eth: string }) => typeof o.operator_fees_eth === 'string'),
      ).toBe(true)
    })

    test('behavior: the protocol record is public and matches the chain', async () => {
      const day = reports[10] as ChainReport
      const res = await call('GET', `/eth/v0/protocol/${day.date}`)
      expect(res.status, res.text).toBe(200)
      expect(res.body).toHaveLength(1)
      expect(res.body[0].conversion_rate).toBe(rateOf(day.U, day.S))
      expect(wei(res.body[0].total_lseth_supply)).toBe(day.S)
      expect(res.body[0].oracle_report).toBe(day.epoch)
      expect(res.body[0].a_srr_7d).toMatch(/^-?\d+(\.\d+)?$/)
    })

    test('behavior: the validator exit queue and redemption projections (devnet consensus facts)', async () => {
      const facts = JSON.parse(
        fs.readFileSync(path.join(history.dataDir, 'devnet-consensus.json'), 'utf8'),
      ).latest
      // independently: Electra churn = min(256, max(128, total active / 65536)) whole ETH per epoch
      const totalEth = BigInt(facts.total_active_balance_wei) / E18
      const churnEth = [totalEth / 65536n].map((c) => (c > 256n ? 256n : c < 128n ? 128n : c))[0] as bigint
      const queuedGwei = BigInt(facts.exit_queue_wei) / 10n ** 9n
      const churnGwei = churnEth * 10n ** 9n
      const epochs = Number((queuedGwei + churnGwei - 1n) / churnGwei) + 5
      const queue = await call('GET', '/eth/v1/validators/queue') // public
      expect(queue.status, queue.text).toBe(200)
      expect(queue.body.exit_time_hours).toBe((Math.ceil((epochs * 384 * 100) / 3600) / 100).toFixed(2))
      expect(queue.body.mandatory_exit_delay_hours).toBe('27.31')
      const engine = computeExitQueue({
        epoch: facts.epoch,
        active_validators: facts.active_validator_count,
        total_active_balance_gwei: BigInt(facts.total_active_balance_wei) / 10n ** 9n,
        queued_exit_balance_gwei: queuedGwei,
        sweep_eligible_validators: facts.active_validator_count,
      })
      expect(queue.body.sweep_time_hours).toBe(engine.sweep_time_hours)

      const client = createPublicClient({ transport: viemHttp(history.devnet.rpcUrl) })
      const rm = history.devnet.contracts.redeemManager as Address
      const [requested, withdrawals] = await Promise.all([
        client.getContractEvents({
          address: rm,
          abi: redeemManagerAbi,
          eventName: 'RequestedRedeem',
          fromBlock: 0n,
        }),
        client.getContractEvents({
          address: rm,
          abi: redeemManagerAbi,
          eventName: 'ReportedWithdrawal',
          fromBlock: 0n,
        }),
      ])
      expect(requested.length).toBeGreaterThan(0)
      const times = new Map<bigint, string>()
      for (const w of withdrawals) {
        const block = await client.getBlock({ blockNumber: w.blockNumber as bigint })
        times.set(
          w.blockNumber as bigint,
          new Date(Number(block.timestamp) * 1000).toISOString().replace('.000Z', 'Z'),
        )
      }
      const top = withdrawals.at(-1) // events are stacked: the last one ends the stack
      const stackEnd = top ? (top.args.height as bigint) + (top.args.amount as bigint) : 0n
      const lastReport = new Date(`${reports.at(-1)!.date}T12:00:00Z`).getTime()
      const token = await tokenFor(ids().orgA, 'read:eth-redeems')
      const bases = new Set<string>()
      for (const r of requested) {
        const id = Number(r.args.id)
        const end = (r.args.height as bigint) + (r.args.amount as bigint)
        const res = await call('GET', `/eth/v1/redeems/${id}/projection`, { token })
        expect(res.status, res.text).toBe(200)
        const basis = res.headers['x-projection-basis'] as string
        bases.add(basis)
        if (end <= stackEnd) {
          const covering = withdrawals.find(
            (w) =>
              (w.args.height as bigint) <= end - 1n &&
              end - 1n < (w.args.height as bigint) + (w.args.amount as bigint),
          )!
          expect(basis).toBe('satisfied')
          expect(res.body.projected_redeemable_at).toBe(times.get(covering.blockNumber as bigint))
        } else {
          expect(['buffer', 'exit_queue']).toContain(basis)
          expect(Date.parse(res.body.projected_redeemable_at)).toBeGreaterThan(lastReport)
        }
        const v0 = await call('GET', `/eth/v0/redeems/${id}/projection`, { token })
        expect(v0.body).toEqual(res.body)
      }
      const manager = await call('GET', '/eth/v1/redeems_info/projection', { token })
      expect(manager.status, manager.text).toBe(200)
      expect(manager.body.projected_fulfilled_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/)
      expect((await call('GET', '/eth/v0/redeems_info/projection', { token })).body).toEqual(manager.body)
      const missing = await call('GET', '/eth/v1/redeems/999999/projection', { token })
      expect([missing.status, missing.body.status]).toEqual([404, 'IR3400'])
      const anonymous = await call('GET', '/eth/v1/redeems_info/projection')
      expect([anonymous.status, anonymous.body.status]).toEqual([401, 'IR2000'])
      const wrongScope = await call('GET', '/eth/v1/redeems/0/projection', { token: await asA() })
      expect([wrongScope.status, wrongScope.body.status]).toEqual([403, 'IR2002'])
      expect(bases).toContain('satisfied')
      expect([...bases].some((b) => b !== 'satisfied')).toBe(true)
    })

    test('behavior: discount rate history of an account; scopes are enforced', async () => {
      const token = await asA()
      const { omnibus, other } = ids()
      const history = await call('GET', `/v0/platform/accounts/${omnibus.key}/discount_rate`, { token })
      expect(history.status, history.text).toBe(200)
      expect(history.body).toHaveLength(1)
      expect(history.body[0]).toMatchObject({ account_id: omnibus.id, target_fee_rate: '0.05' })
      const posted = await call('POST', `/v0/platform/accounts/${omnibus.id}/discount_rate`, {
        token,
        body: { target_fee_rate: '0.04' },
      })
      expect(posted.status, posted.text).toBe(200)
      const after = await call('GET', `/v0/platform/accounts/${omnibus.id}/discount_rate`, { token })
      expect(after.body.map((r: { target_fee_rate: string }) => r.target_fee_rate)).toEqual(['0.05', '0.04'])
      const foreign = await call('GET', `/v0/platform/accounts/${other.id}/discount_rate`, { token })
      expect([foreign.status, foreign.body.status]).toEqual([404, 'IR3000'])

      const noRewards = await tokenFor(ids().orgA, 'read:platform')
      const denied = await call('POST', '/eth/v1/rewards/wallets', {
        token: noRewards,
        body: { addresses: [other.wallet], date: reports[0]!.date },
      })
      expect([denied.status, denied.body.status]).toEqual([403, 'IR2002'])
      const anonymous = await call('GET', `/eth/v1/platforms/${reports[0]!.date}`)
      expect([anonymous.status, anonymous.body.status]).toEqual([401, 'IR2000'])
    })
  })
})
