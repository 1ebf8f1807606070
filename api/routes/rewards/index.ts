import type { FastifyInstance } from 'fastify'
import { accountRoutes } from './accounts.ts'
import { type RewardRouteDeps, rewardContext } from './context.ts'
import { lotRoutes } from './lots.ts'
import { summaryRoutes } from './summaries.ts'
import { walletRoutes } from './wallets.ts'

/**
 * Reward reads: lots, wallets, accounts and their summaries (v1, and v0 with the discount fields), one file
 * per route group; their schemas (schemas.ts), how they show what they read (presenting.ts) and what they
 * share (context.ts) beside them.
 */
export function rewardRoutes(app: FastifyInstance, deps: RewardRouteDeps) {
  const ctx = rewardContext(app, deps)
  lotRoutes(app, ctx)
  walletRoutes(app, ctx)
  accountRoutes(app, ctx)
  summaryRoutes(app, ctx)
}
