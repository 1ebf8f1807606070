import type { FastifyInstance } from 'fastify'
import { accountRoutes } from './accounts.ts'
import type { PlatformRouteDeps } from './context.ts'
import { depositorRoutes } from './depositors.ts'
import { discountRateRoutes } from './discount-rate.ts'
import { walletRoutes } from './wallets.ts'

/** Accounts and wallets of the caller's organization (/v0/platform/..., /v0/depositors/...), one file each. */
export function platformRoutes(app: FastifyInstance, deps: PlatformRouteDeps) {
  accountRoutes(app, deps)
  discountRateRoutes(app, deps)
  walletRoutes(app, deps)
  depositorRoutes(app, deps)
}
