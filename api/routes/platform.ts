import type { FastifyInstance } from 'fastify'
import { accountRoutes } from './platform/accounts.ts'
import type { PlatformRouteDeps } from './platform/context.ts'
import { depositorRoutes } from './platform/depositors.ts'
import { discountRateRoutes } from './platform/discount-rate.ts'
import { walletRoutes } from './platform/wallets.ts'

/** Accounts and wallets of the caller's organization (/v0/platform/..., /v0/depositors/...), one file each. */
export function platformRoutes(app: FastifyInstance, deps: PlatformRouteDeps) {
  accountRoutes(app, deps)
  discountRateRoutes(app, deps)
  walletRoutes(app, deps)
  depositorRoutes(app, deps)
}
