import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify'
import { isUuid } from '../../../db/repos/accounts.ts'
import type { Repos } from '../../../db/repos/index.ts'
import type { ReportDay } from '../../../db/repos/reports.ts'
import { ApiError } from '../../errors.ts'
import { currencyOf, priceIn } from '../../fiat-view.ts'
import type { RecordVersion, Unit } from '../../record-fields.ts'
import type { ReportReads } from '../../report-cache.ts'
import { KEPT_ANSWERS } from '../../reporting/etag.ts'
import { MAX_REPORT_ITEMS } from '../../reporting/inputs.ts'
import { readsFor } from '../../reporting/reads.ts'
import type { Fiat } from './presenting.ts'

/** What the reward routes use: the repositories. */
export interface RewardRouteDeps {
  repos: Repos
}

/** What every reward route shares: its options, the request's reads, its fiat prices, the caller's accounts. */
export interface RewardContext {
  repos: Repos
  /** Route options of a kept reward read: the read:eth-rewards scope, answers kept under their ETag. */
  rewards: { onRequest: onRequestHookHandler } & typeof KEPT_ANSWERS
  /** OpenAPI tags of the reward routes. */
  tags: string[]
  /** The request's reporting reads (the app's, or as of its `as_of`). */
  readsOf(request: FastifyRequest): ReportReads
  /** The currency a read asks for and the prices of its days (undefined: none asked). */
  fiatOf(request: FastifyRequest, days: readonly ReportDay[]): Promise<Fiat | undefined>
  /** The caller's accounts among ids / keys, in request order (others: omitted, as unknown ones). */
  accountsOf(orgId: string, values: string[]): Promise<string[]>
}

/** A reward read answered in one record version and unit (its route registered once per version). */
export type RewardRead = (
  ctx: RewardContext,
  request: FastifyRequest,
  reply: FastifyReply,
  version: RecordVersion,
  unit: Unit,
) => Promise<unknown>

/** The reward routes' shared context over one app and its repositories. */
export function rewardContext(app: FastifyInstance, deps: RewardRouteDeps): RewardContext {
  const { repos } = deps
  // the answers of these reads are kept under their ETag (api/answer-memo.ts)
  const rewards = { onRequest: app.requireScope('read:eth-rewards'), ...KEPT_ANSWERS }
  const readsOf = (request: FastifyRequest) => readsFor(request, repos)

  async function fiatOf(request: FastifyRequest, days: readonly ReportDay[]): Promise<Fiat | undefined> {
    const currency = currencyOf(request)
    if (currency === undefined) return undefined
    const prices = await readsOf(request).cached(days, 'prices', () => repos.prices.ofDays(days))
    return { currency, priceOf: (epoch) => priceIn(prices.get(epoch), currency) }
  }

  async function accountsOf(orgId: string, values: string[]): Promise<string[]> {
    const rows = await repos.reports.accountsByIdsOrKeys(orgId, values)
    const byId = new Map(rows.map((r) => [r.id, r]))
    const byKey = new Map(rows.map((r) => [r.key, r]))
    const ids = new Set<string>()
    for (const value of values) {
      // as id first (when it is a UUID), then as key (docs/decisions.md "Accounts")
      const row = (isUuid(value) ? byId.get(value.toLowerCase()) : undefined) ?? byKey.get(value)
      if (row) ids.add(row.id)
    }
    return [...ids]
  }

  return { repos, rewards, tags: ['rewards'], readsOf, fiatOf, accountsOf }
}

/** At most MAX_REPORT_ITEMS lots, accounts or addresses per request: else 400 IR1006. */
export function checkCount(items: readonly unknown[], what: string): void {
  if (items.length > MAX_REPORT_ITEMS) {
    throw new ApiError('IR1006', `at most ${MAX_REPORT_ITEMS} ${what} per request (got ${items.length})`)
  }
}
