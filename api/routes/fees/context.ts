import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify'
import type { Price, Repos } from '../../../db/repos/index.ts'
import type { ReportDay } from '../../../db/repos/reports.ts'
import { type Currency, currencyOf, priceIn } from '../../fiat-view.ts'
import type { ReportReads } from '../../report-cache.ts'
import { KEPT_ANSWERS } from '../../reporting/etag.ts'
import { readsFor } from '../../reporting/reads.ts'

/** What every fee route shares: its options, the request's reads and the day's price. */
export interface FeeContext {
  repos: Repos
  /** Route options of a kept fee read: the read:eth-rewards scope, answers kept under their ETag. */
  rewards: { onRequest: onRequestHookHandler } & typeof KEPT_ANSWERS
  /** OpenAPI tags of the fee routes. */
  tags: string[]
  /** The request's reporting reads (the app's, or as of its `as_of`). */
  readsOf(request: FastifyRequest): ReportReads
  /** The day's price in the currency the read asks for (undefined: none asked). */
  priceOf(request: FastifyRequest, day: ReportDay): Promise<{ currency: Currency; price: Price } | undefined>
}

/** The fee routes' shared context over one app and its repositories. */
export function feeContext(app: FastifyInstance, deps: { repos: Repos }): FeeContext {
  const { repos } = deps
  const readsOf = (request: FastifyRequest) => readsFor(request, repos)
  // the answers of these reads are kept under their ETag (api/answer-memo.ts)
  const rewards = { onRequest: app.requireScope('read:eth-rewards'), ...KEPT_ANSWERS }

  async function priceOf(request: FastifyRequest, day: ReportDay) {
    const currency = currencyOf(request)
    if (currency === undefined) return undefined
    const prices = await readsOf(request).cached([day], 'prices', () => repos.prices.ofDays([day]))
    return { currency, price: priceIn(prices.get(day.report_epoch), currency) }
  }

  return { repos, rewards, tags: ['fees'], readsOf, priceOf }
}
