import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import type { Repos } from '../../db/repos/index.ts'
import {
  formatRatio,
  formatUnits18,
  InvalidInputError,
  parseUnits18,
  validateTargetFeeRate,
} from '../../engine/index.ts'
import type { PlatformService } from '../../platform/service.ts'
import { caller } from '../auth/plugin.ts'
import { ApiError } from '../errors.ts'
import {
  AccountSchema,
  accountJson,
  BooleanLike,
  BoundedInteger,
  errorResponses,
  MAX_INPUT_INTEGER,
  toBool,
  WalletSchema,
  walletJson,
} from '../schemas.ts'

const IdOrKey = Type.Object({ idOrKey: Type.String({ minLength: 1, maxLength: 256 }) })
const IdOrKeyAndWallet = Type.Object({
  idOrKey: Type.String({ minLength: 1, maxLength: 256 }),
  idOrAddress: Type.String({ minLength: 1, maxLength: 64 }),
})

export const MAX_PAGE = 1000
export const DEFAULT_PAGE = 100

/** Accounts and wallets of the caller's organization (/v0/platform/..., /v0/depositors/...). */
export function platformRoutes(
  app: FastifyInstance,
  deps: { platform: PlatformService; repos: Repos; grossFeeBps: () => Promise<number | undefined> },
) {
  const { platform, repos } = deps
  const read = { onRequest: app.requireScope('read:platform') }
  const write = { onRequest: app.requireScope('write:platform') }
  const tags = ['platform']

  app.post(
    '/v0/platform/accounts',
    {
      ...write,
      schema: {
        tags,
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
        summary: 'List accounts with their wallets',
        response: { 200: Type.Array(AccountSchema), ...errorResponses(401, 403) },
      },
    },
    async (request) => (await platform.listAccounts(caller(request).orgId)).map(accountJson),
  )

  app.get(
    '/v0/platform/accounts/:idOrKey',
    {
      ...read,
      schema: {
        tags,
        summary: 'Get an account by id or key',
        params: IdOrKey,
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
          summary: `${action[0]!.toUpperCase()}${action.slice(1)} an account`,
          params: IdOrKey,
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

  app.post(
    '/v0/platform/accounts/:idOrKey/discount_rate',
    {
      ...write,
      schema: {
        tags,
        summary: 'Set the target fee rate of an account',
        params: IdOrKey,
        body: Type.Object({
          target_fee_rate: Type.Union([
            Type.String({
              pattern: '^[0-9]{1,20}(\\.[0-9]{1,30})?$',
              description: 'a plain decimal, e.g. "0.08"',
            }),
            Type.Number({ minimum: 0, maximum: 1 }),
          ]),
        }),
        response: {
          200: Type.Object({
            account_id: Type.String(),
            target_fee_rate: Type.String(),
            created_at: Type.String(),
          }),
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (request) => {
      const { idOrKey } = request.params as { idOrKey: string }
      const { target_fee_rate } = request.body as { target_fee_rate: number | string }
      const bps = (await deps.grossFeeBps()) ?? 10_000
      let rate: string
      try {
        rate = validateTargetFeeRate(
          typeof target_fee_rate === 'number' ? String(target_fee_rate) : target_fee_rate,
          bps,
        )
      } catch (err) {
        if (!(err instanceof InvalidInputError)) throw err
        throw new ApiError(
          'IR3200',
          `target_fee_rate must be a decimal (at most 18 places) between 0 and the gross protocol fee rate ${formatRatio(BigInt(bps), 10_000n)}`,
        )
      }
      const auth = caller(request)
      const row = await platform.addDiscountRate(auth.orgId, idOrKey, rate, auth.clientId)
      return {
        account_id: row.account_id,
        target_fee_rate: formatUnits18(parseUnits18(row.target_fee_rate)),
        created_at: row.created_at.toISOString(),
      }
    },
  )

  app.get(
    '/v0/platform/wallets/:idOrAddress',
    {
      ...read,
      schema: {
        tags,
        summary: 'Get a wallet by id or address',
        params: Type.Object({ idOrAddress: Type.String({ minLength: 1, maxLength: 64 }) }),
        response: { 200: WalletSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const { idOrAddress } = request.params as { idOrAddress: string }
      if (idOrAddress.startsWith('0x') || idOrAddress.startsWith('0X')) {
        if (!/^0x[0-9a-fA-F]{40}$/.test(idOrAddress)) {
          throw new ApiError(
            'IR3101',
            'idOrAddress must be a wallet id or 0x followed by 40 hexadecimal digits',
          )
        }
      } else if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(idOrAddress)) {
        throw new ApiError('IR1000', 'idOrAddress must be a wallet id (UUID) or a 0x address')
      }
      return walletJson(await platform.getWallet(caller(request).orgId, idOrAddress))
    },
  )

  app.get(
    '/v0/platform/wallets',
    {
      ...read,
      schema: {
        tags,
        summary: 'List wallets (X-Total-Count gives the total)',
        querystring: Type.Object({
          allowlist: Type.Optional(Type.Boolean()),
          on_platform: Type.Optional(Type.Boolean()),
          offset: Type.Optional(BoundedInteger({ minimum: 0, maximum: MAX_INPUT_INTEGER })),
          limit: Type.Optional(BoundedInteger({ minimum: 1, maximum: MAX_PAGE })),
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
      const { rows, total } = await platform.listWallets(caller(request).orgId, filter, {
        offset: q.offset ?? 0,
        limit: q.limit ?? DEFAULT_PAGE,
      })
      reply.header('x-total-count', String(total))
      return rows.map(walletJson)
    },
  )

  app.post(
    '/v0/platform/accounts/:idOrKey/wallets',
    {
      ...write,
      schema: {
        tags,
        summary: 'Attach a wallet to an account (and submit it to the Allowlist unless allowlisted is false)',
        params: IdOrKey,
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
        summary: "The account's wallets",
        params: IdOrKey,
        response: { 200: Type.Array(WalletSchema), ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => {
      const { idOrKey } = request.params as { idOrKey: string }
      return (await platform.accountWallets(caller(request).orgId, idOrKey)).map(walletJson)
    },
  )

  for (const action of ['pause', 'remove', 'reactivate'] as const) {
    app.patch(
      `/v0/platform/accounts/:idOrKey/wallets/:idOrAddress/${action}`,
      {
        ...write,
        schema: {
          tags,
          summary: `${action[0]!.toUpperCase()}${action.slice(1)} a wallet`,
          params: IdOrKeyAndWallet,
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

  app.patch(
    '/v0/depositors/:idOrKey/wallets/:idOrAddress/remove',
    {
      ...write,
      schema: {
        tags: ['deprecated'],
        summary: "Deprecated: remove only the wallet's Allowlist permission (it stays on platform)",
        deprecated: true,
        params: IdOrKeyAndWallet,
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
