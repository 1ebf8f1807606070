import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { ImpersonateHeaders } from '../../auth/impersonation.ts'
import { caller } from '../../auth/plugin.ts'
import { ApiError } from '../../errors.ts'
import {
  AccountParams,
  AccountWalletParams,
  BooleanLike,
  errorResponses,
  PageQueryFields,
  pageOf,
  sendPage,
  toBool,
  WalletIdOrAddressParams,
  WalletSchema,
  walletIdOrAddressErrors,
  walletJson,
} from '../../schemas.ts'
import { type PlatformRouteDeps, platformRouteOptions } from './context.ts'

/** Wallets of the caller's organization: get, list, attach to an account, pause / remove / reactivate. */
export function walletRoutes(app: FastifyInstance, { platform, repos }: PlatformRouteDeps) {
  const { read, write, tags } = platformRouteOptions(app)

  app.get(
    '/v0/platform/wallets/:idOrAddress',
    {
      ...read,
      schemaErrorFormatter: walletIdOrAddressErrors,
      schema: {
        tags,
        headers: ImpersonateHeaders,
        summary: 'Get a wallet by id or address',
        params: WalletIdOrAddressParams,
        response: { 200: WalletSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const { idOrAddress } = request.params as { idOrAddress: string }
      return walletJson(await platform.getWallet(caller(request).orgId, idOrAddress))
    },
  )

  app.get(
    '/v0/platform/wallets',
    {
      ...read,
      schema: {
        tags,
        headers: ImpersonateHeaders,
        summary: 'List wallets (X-Total-Count gives the total)',
        querystring: Type.Object({
          allowlist: Type.Optional(Type.Boolean()),
          on_platform: Type.Optional(Type.Boolean()),
          ...PageQueryFields,
        }),
        response: { 200: Type.Array(WalletSchema), ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) => {
      const q = request.query as {
        allowlist?: boolean
        on_platform?: boolean
        offset?: number
        limit?: number
      }
      const filter: { allowlisted?: boolean; onPlatform?: boolean } = {}
      if (q.allowlist === true) filter.allowlisted = true
      if (q.on_platform === true) filter.onPlatform = true
      return sendPage(reply, await platform.listWallets(caller(request).orgId, filter, pageOf(q)), walletJson)
    },
  )

  app.post(
    '/v0/platform/accounts/:idOrKey/wallets',
    {
      ...write,
      schema: {
        tags,
        headers: ImpersonateHeaders,
        summary: 'Attach a wallet to an account (and submit it to the Allowlist unless allowlisted is false)',
        params: AccountParams,
        body: Type.Object({
          address: Type.String(),
          type: Type.String(),
          allowlisted: Type.Optional(BooleanLike),
        }),
        response: { 200: WalletSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const { idOrKey } = request.params as { idOrKey: string }
      const body = request.body as { address: string; type: string; allowlisted?: boolean | 'true' | 'false' }
      const auth = caller(request)
      const org = await repos.orgs.get(auth.orgId)
      if (!org) throw new ApiError('IR2001', 'the token names an organization that does not exist')
      const wallet = await platform.createWallet(
        org,
        idOrKey,
        { address: body.address, type: body.type, allowlisted: toBool(body.allowlisted, true) },
        auth.clientId,
      )
      return walletJson(wallet)
    },
  )

  app.get(
    '/v0/platform/accounts/:idOrKey/wallets',
    {
      ...read,
      schema: {
        tags,
        headers: ImpersonateHeaders,
        summary: "The account's wallets (paged, X-Total-Count gives the total)",
        params: AccountParams,
        querystring: Type.Object(PageQueryFields),
        response: { 200: Type.Array(WalletSchema), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const { idOrKey } = request.params as { idOrKey: string }
      const page = pageOf(request.query as { offset?: number; limit?: number })
      return sendPage(reply, await platform.accountWallets(caller(request).orgId, idOrKey, page), walletJson)
    },
  )

  for (const action of ['pause', 'remove', 'reactivate'] as const) {
    app.patch(
      `/v0/platform/accounts/:idOrKey/wallets/:idOrAddress/${action}`,
      {
        ...write,
        schema: {
          tags,
          headers: ImpersonateHeaders,
          summary: `${action[0]!.toUpperCase()}${action.slice(1)} a wallet`,
          params: AccountWalletParams,
          response: { 200: WalletSchema, ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (request) => {
        const { idOrKey, idOrAddress } = request.params as { idOrKey: string; idOrAddress: string }
        const auth = caller(request)
        return walletJson(
          await platform.transitionWallet(auth.orgId, idOrKey, idOrAddress, action, auth.clientId),
        )
      },
    )
  }
}
