import { type Address, parseEther } from 'viem'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { createRepos } from '../db/repos/index.ts'
import { startTestChain, type TestChain } from '../devnet/testing.ts'
import { createPlatformService } from '../platform/service.ts'
import { orgWithToken, startTestApi, type TestApi } from './helpers/api.ts'
import { type TestChainService, testChainService } from './helpers/days.ts'
import { postgresAvailable } from './helpers/services.ts'
import { reportSequence } from './helpers/test-reports.ts'

const pgOk = await postgresAvailable()
const ETH = 10n ** 18n

/** The status, body text and headers of a GET, as a client saves an answer. */
async function get(api: TestApi, token: string, url: string) {
  const res = await fetch(`${api.url}${url}`, { headers: { authorization: `Bearer ${token}` } })
  return { status: res.status, text: await res.text(), headers: res.headers }
}

/**
 * The restatement log over a real chain, the service's HTTP API and Postgres: a discount change and a reorg
 * each publish a version with its reason; `as_of` an instant answers the bytes answered then; the versions
 * route lists every version.
 */
describe.runIf(pgOk)('restatements: versions, reasons and as_of (Postgres, anvil, HTTP)', () => {
  let chain: TestChain
  let service: TestChainService
  let api: TestApi
  let token: string
  let accountId: string
  const alice: Address = '0x00000000000000000000000000000000000a11ce'
  const bob: Address = '0x0000000000000000000000000000000000000b0b'
  const reportInput = reportSequence()
  const report = (validatorsBalance: bigint, sameEpoch = false) =>
    chain.report(reportInput(validatorsBalance, sameEpoch))
  let beforeSecondReport: `0x${string}`
  let dates: string[]

  beforeAll(async () => {
    chain = await startTestChain({
      startDate: '2026-05-04',
      stake: {
        deposits: [
          [alice, 100n * ETH],
          [bob, 60n * ETH],
        ],
      },
    })
    service = await testChainService(chain)
    // the platform registers alice with a discount before the reports (on the chain's clock)
    await service.sync()
    api = await startTestApi('postgres', {}, { dbh: service.dbh })
    const org = await orgWithToken(api, { scopes: 'read:eth-rewards read:platform write:platform' })
    token = org.token
    const platform = createPlatformService(service.db)
    const orgRow = await createRepos(service.db).orgs.get(org.orgId)
    const account = await platform.createAccount(org.orgId, 'treasury', 'test')
    accountId = account.id
    await platform.createWallet(
      orgRow as { id: string; can_allowlist: boolean },
      account.id,
      {
        address: alice,
        type: 'ETH',
        allowlisted: false,
      },
      'test',
    )
    await platform.addDiscountRate(org.orgId, account.id, '0.05', 'test')
    await chain.mine([])
    await report(128n * ETH + parseEther('0.1'))
    // the next report a day later: its own date
    await chain.mine([], 86_400n)
    beforeSecondReport = await chain.testClient.snapshot()
    await report(128n * ETH + parseEther('0.2'))
    await chain.mine([])
    await service.sync()
    await service.compute()
    dates = (await createRepos(service.db).days.list(chain.anvil.chainId)).map((d) => d.date)
    expect(dates).toHaveLength(2)
  }, 180_000)

  afterAll(async () => {
    await api?.close()
    await service?.close()
    await chain?.stop()
  })

  test('behavior: a discount change and a reorg each publish a version; as_of answers the bytes of its instant', async () => {
    const [first, second] = dates as [string, string]
    const summary = `/eth/v0/rewards/accounts/${accountId}/summary?from=${first}&to=${second}`
    const platforms = `/eth/v1/platforms/${second}`
    const original = await get(api, token, summary)
    expect(original.status, original.text).toBe(200)
    const originalFees = await get(api, token, platforms)
    const t0 = original.headers.get('x-report-data-as-of') as string
    expect(JSON.parse(original.text).data_as_of).toBe(t0)
    expect(JSON.parse(original.text).days[1].wallets[0].discount_rate).not.toBe('0')

    // a discount change: the operator restates the range with its reason
    const repos = createRepos(service.db)
    await service.db('discount_rates').where({ account_id: accountId }).update({ target_fee_rate: '0.02' })
    expect(
      await repos.days.requestRecompute(chain.anvil.chainId, { from: first, to: second }, 'discount'),
    ).toBe(2)
    await service.compute()
    // the shared reads re-read the visible days at most a second late
    await new Promise((r) => setTimeout(r, 1_100))
    const discounted = await get(api, token, summary)
    expect(discounted.text).not.toBe(original.text)
    const t1 = discounted.headers.get('x-report-data-as-of') as string
    expect(t1 > t0).toBe(true)
    expect((await get(api, token, `${summary}&as_of=${t0}`)).text).toBe(original.text)
    expect((await get(api, token, `${platforms}?as_of=${t0}`)).text).toBe(originalFees.text)
    expect((await get(api, token, `${summary}&as_of=${t1}`)).text).toBe(discounted.text)
    // before the first version existed: nothing was computed then
    const before = await get(api, token, `${summary}&as_of=2026-01-01T00:00:00Z`)
    expect([before.status, JSON.parse(before.text).status]).toEqual([404, 'IR4000'])

    // a reorg re-mines the second report (same epoch, other rewards): its day is restated
    await chain.revert(beforeSecondReport)
    await chain.mine([])
    await report(128n * ETH + parseEther('0.15'), true)
    await chain.mine([])
    await chain.mine([])
    await service.sync()
    await service.compute()
    await new Promise((r) => setTimeout(r, 1_100))
    const reorged = await get(api, token, summary)
    expect(reorged.text).not.toBe(discounted.text)
    const t2 = reorged.headers.get('x-report-data-as-of') as string
    expect((await get(api, token, `${summary}&as_of=${t1}`)).text).toBe(discounted.text)
    expect((await get(api, token, `${summary}&as_of=${t0}`)).text).toBe(original.text)
    expect((await get(api, token, `${summary}&as_of=${t2}`)).text).toBe(reorged.text)

    // the log of the second day: every version, why, and when it was visible
    const versions = await get(api, token, `/v1/reports/${second}/versions`)
    expect(versions.status, versions.text).toBe(200)
    const log = JSON.parse(versions.text).versions as {
      version: number
      reason: string
      visible_from: string
      visible_until: string | null
      current: boolean
      previous_version: number | null
    }[]
    expect(log.map((v) => v.reason)).toEqual(['first', 'discount', 'reorg'])
    expect(log.map((v) => v.current)).toEqual([false, false, true])
    expect(log[1]?.previous_version).toBe(log[0]?.version)
    expect(log[0]?.visible_until).toBe(log[1]?.visible_from)
    expect(log[1]?.visible_from).toBe(t1)
    expect(reorged.headers.get('x-report-version')).toBe(String(log[2]?.version))
    const firstDay = JSON.parse((await get(api, token, `/v1/reports/${first}/versions`)).text).versions
    expect(firstDay.map((v: { reason: string }) => v.reason)).toEqual(['first', 'discount'])
  }, 180_000)

  test('behavior: as_of must be an RFC 3339 instant with a zone, not in the future', async () => {
    const url = `/eth/v1/platforms/${dates[0]}`
    for (const asOf of ['yesterday', '2026-05-04T00:00:00', '2999-01-01T00:00:00Z']) {
      const res = await get(api, token, `${url}?as_of=${encodeURIComponent(asOf)}`)
      expect([res.status, JSON.parse(res.text).status], asOf).toEqual([400, 'IR1000'])
    }
  })
})
