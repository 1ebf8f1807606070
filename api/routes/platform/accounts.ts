import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { ImpersonateHeaders } from '../../auth/impersonation.ts'
import { caller } from '../../auth/plugin.ts'
import {
  AccountParams,
  AccountSchema,
  accountJson,
  errorResponses,
  PageQueryFields,
  pageOf,
  sendPage,
} from '../../schemas.ts'
import { type PlatformRouteDeps, platformRouteOptions } from './context.ts'

/** Accounts of the caller's organization: create, list, get, pause / remove / reactivate. */
export function accountRoutes(app: FastifyInstance, { platform }: PlatformRouteDeps) {
  const { read, write, tags } = platformRouteOptions(app)

  app.post(
    '/v0/platform/accounts',
    {
      ...write,
      schema: {
        tags,
        headers: ImpersonateHeaders,
        summary: 'Create an account',
        body: Type.Object({ key: Type.String() }),
        response: { 201: AccountSchema, ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) => {
      const { key } = request.body as { key: string }
      const auth = caller(request)
      const account = await platform.createAccount(auth.orgId, key, auth.clientId)
      return reply.code(201).send(accountJson(account))
    },
  )

  app.get(
    '/v0/platform/accounts',
    {
      ...read,
      schema: {
        tags,
        headers: ImpersonateHeaders,
        summary: 'List accounts with their wallets (paged like wallets; X-Total-Count gives the total)',
        querystring: Type.Object(PageQueryFields),
        response: { 200: Type.Array(AccountSchema), ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) => {
      const q = request.query as { offset?: number; limit?: number }
      return sendPage(reply, await platform.listAccounts(caller(request).orgId, pageOf(q)), accountJson)
    },
  )

  app.get(
    '/v0/platform/accounts/:idOrKey',
    {
      ...read,
      schema: {
        tags,
        headers: ImpersonateHeaders,
        summary: 'Get an account by id or key',
        params: AccountParams,
        response: { 200: AccountSchema, ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => {
      const { idOrKey } = request.params as { idOrKey: string }
      return accountJson(await platform.getAccount(caller(request).orgId, idOrKey))
    },
  )

  for (const action of ['pause', 'remove', 'reactivate'] as const) {
    app.patch(
      `/v0/platform/accounts/:idOrKey/${action}`,
      {
        ...write,
        schema: {
          tags,
          headers: ImpersonateHeaders,
          summary: `${action[0]!.toUpperCase()}${action.slice(1)} an account`,
          params: AccountParams,
          response: { 200: AccountSchema, ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (request) => {
        const { idOrKey } = request.params as { idOrKey: string }
        const auth = caller(request)
        return accountJson(await platform.transitionAccount(auth.orgId, idOrKey, action, auth.clientId))
      },
    )
  }
}
