import { createClient } from '../../cli/admin.ts'
import type { Db, DbHandle } from '../../db/index.ts'
import { createRepos, type Repos } from '../../db/repos/index.ts'
import { createPlatformService } from '../../platform/service.ts'
import { clientToken, startTestApi, type TestApi } from './api.ts'
import { type ComputedHistory, computedHistory } from './days.ts'

/** A custodian's books over a devnet history: its accounts, a reader's token and the dates to read. */
export interface CustodianBooks {
  history: ComputedHistory
  api: TestApi
  repos: Repos
  /** A client of the custodian with `read:eth-rewards`. */
  token: string
  orgId: string
  /** omnibus (two wallets, a 0.05 target fee rate) and segregated (one wallet). */
  accounts: { id: string; wallets: string[] }[]
  /** An account of another organization, holding a fourth wallet. */
  otherAccount: string
  /** The report date before `from`, whose records open the range. */
  before: string
  /** The first date with the accounts registered and a price; the last report date. */
  from: string
  to: string
  close(): Promise<void>
}

/**
 * A 43-report devnet history from 2026-04-20 across the fee-model cutover on Postgres, with prices from its
 * second day: an organization "custodian" with an omnibus account (two holders, a 0.05 target fee rate) and a
 * segregated one (a third holder), registered after three reports; "another" organization holding a fourth.
 * Shared by the summaries' and the exports' checks (test/statements.test.ts).
 */
export async function custodianBooks(): Promise<CustodianBooks> {
  let orgId = ''
  let otherAccount = ''
  const accounts: { id: string; wallets: string[] }[] = []
  const history = await computedHistory({
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
      const other = await repos.orgs.create({ name: 'another', canAllowlist: true })
      orgId = org.id
      const holding = devnet.simulator
        .state()
        .wallets.filter((w) => w.shares > 0n)
        .map((w) => w.address.toLowerCase())
      const a = await platform.createAccount(org.id, 'omnibus', 'test')
      const b = await platform.createAccount(org.id, 'segregated', 'test')
      const c = await platform.createAccount(other.id, 'theirs', 'test')
      for (const address of holding.slice(0, 2)) {
        await platform.createWallet(org, a.id, { address, type: 'ETH', allowlisted: false }, 'test')
      }
      const [third, fourth] = [holding[2] as string, holding[3] as string]
      await platform.createWallet(org, b.id, { address: third, type: 'ETH', allowlisted: false }, 'test')
      await platform.createWallet(other, c.id, { address: fourth, type: 'ETH', allowlisted: false }, 'test')
      await platform.addDiscountRate(org.id, a.id, '0.05', 'test')
      accounts.push({ id: a.id, wallets: holding.slice(0, 2) }, { id: b.id, wallets: [third] })
      otherAccount = c.id
    },
  })
  const dbh = history.databases.get('postgres') as DbHandle
  const api = await startTestApi('postgres', {}, { dbh })
  const token = await clientToken(api.url, await createClient(dbh.db, { orgId, scopes: 'read:eth-rewards' }))
  const repos = createRepos(dbh.db)
  const dates = (await repos.days.list(history.devnet.chainId)).map((d) => d.date).sort()
  return {
    history,
    api,
    repos,
    token,
    orgId,
    accounts,
    otherAccount,
    before: dates[4] as string,
    from: dates[5] as string,
    to: dates.at(-1) as string,
    async close() {
      await api.close()
      await history.close()
    },
  }
}
