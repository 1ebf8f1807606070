import type { FastifyInstance } from 'fastify'
import { ImpersonateHeaders } from '../../auth/impersonation.ts'
import { caller } from '../../auth/plugin.ts'
import { AccountWalletParams, errorResponses, WalletSchema, walletJson } from '../../schemas.ts'
import { type PlatformRouteDeps, platformRouteOptions } from './context.ts'

/** The legacy depositor route: removes only a wallet's Allowlist permission, with a Deprecation header. */
export function depositorRoutes(app: FastifyInstance, { platform }: PlatformRouteDeps) {
  const { write } = platformRouteOptions(app)

  app.patch(
    '/v0/depositors/:idOrKey/wallets/:idOrAddress/remove',
    {
      ...write,
      schema: {
        tags: ['deprecated'],
        headers: ImpersonateHeaders,
        summary: "Deprecated: remove only the wallet's Allowlist permission (it stays on platform)",
        deprecated: true,
        params: AccountWalletParams,
        response: { 200: WalletSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const { idOrKey, idOrAddress } = request.params as { idOrKey: string; idOrAddress: string }
      const auth = caller(request)
      reply.header('deprecation', 'true')
      reply.header(
        'link',
        '</v0/platform/accounts/{idOrKey}/wallets/{idOrAddress}/remove>; rel="successor-version"',
      )
      return walletJson(
        await platform.transitionWallet(auth.orgId, idOrKey, idOrAddress, 'legacy_remove', auth.clientId),
      )
    },
  )
}
