import formbody from '@fastify/formbody'
import type { FastifyInstance } from 'fastify'
import type { Config } from '../../common/config.ts'
import { memoizeSuccess } from '../../common/memo.ts'
import type { Db } from '../../db/index.ts'
import type { Repos } from '../../db/repos/index.ts'
import { createPlatformService } from '../../platform/service.ts'
import { createAnswerMemo } from '../answer-memo.ts'
import { signingKeySecret } from '../auth/key-secret.ts'
import type { SigningKeys } from '../auth/signing-keys.ts'
import { toErrorReply } from '../error-reply.ts'
import { parseFormBody } from '../plugins/input-rules.ts'
import { adminRoutes } from './admin.ts'
import { adminBackfillRoutes } from './admin-backfill.ts'
import { discountRoutes } from './discounts.ts'
import { exportRoutes } from './exports/index.ts'
import { feeRoutes } from './fees/index.ts'
import { healthRoutes } from './health.ts'
import { oauthRoutes } from './oauth.ts'
import { platformRoutes } from './platform/index.ts'
import { projectionRoutes } from './projections.ts'
import { redeemRoutes } from './redeems/index.ts'
import { reportVersionRoutes } from './report-versions.ts'
import { rewardRoutes } from './rewards/index.ts'
import { solRoutes } from './sol.ts'
import { webhookRoutes } from './webhooks/index.ts'

/** What the routes read: the database, its repositories, the config and the token signing keys. */
export interface RoutesDeps {
  config: Config
  db: Db
  repos: Repos
  signingKeys: SigningKeys
}

/**
 * The token endpoint (and JWKS) in a scope of their own: the only place form-encoded bodies are parsed
 * (RFC 6749 clients send them), and where refused requests answer with the RFC 6749 fields as well.
 */
async function tokenRoutes(app: FastifyInstance, { config, repos, signingKeys }: RoutesDeps): Promise<void> {
  await app.register(async (scope) => {
    // forms of at most MAX_FORM_FIELDS fields, counted before the parse (plugins/input-rules.ts)
    await scope.register(formbody, { bodyLimit: config.bodyLimit, parser: parseFormBody })
    scope.setErrorHandler((err, request, reply) => {
      const { http, body, headers } = toErrorReply(err)
      if (http >= 500) request.log.error({ err }, 'request failed')
      const oauth =
        request.routeOptions.url === '/oauth/token' && http >= 400 && http < 500 && http !== 429
          ? { error: 'invalid_request', error_description: body.message }
          : {}
      reply
        .code(http)
        .headers({ ...headers, 'cache-control': 'no-store' })
        .send({ ...oauth, ...body })
    })
    oauthRoutes(scope, {
      repos,
      keys: signingKeys,
      issuer: config.authUrl,
      audience: config.baseUrl,
      maxSecretsPerClient: config.limits.secretsPerClient,
    })
  })
}

/**
 * Registers every route group, in the order the OpenAPI document lists them, and the report answer memo
 * the report routes share.
 *
 * @example
 * await registerRoutes(app, { config, db, repos: createRepos(db), signingKeys })
 */
export async function registerRoutes(app: FastifyInstance, deps: RoutesDeps): Promise<void> {
  const { repos } = deps
  healthRoutes(app, { db: deps.db })
  await tokenRoutes(app, deps)
  platformRoutes(app, {
    platform: createPlatformService(deps.db),
    repos,
    grossFeeBps: () => repos.chain.latestGlobalFeeBps(),
  })
  solRoutes(app, { repos })
  redeemRoutes(app, { repos })
  app.decorate('reportAnswers', createAnswerMemo())
  app.decorateReply('answerEtag', undefined)
  rewardRoutes(app, { repos })
  feeRoutes(app, { repos })
  reportVersionRoutes(app, { repos })
  discountRoutes(app, { repos })
  // the exit queue's consensus figures are the consensus job's latest snapshot (jobs/consensus.ts)
  projectionRoutes(app, { repos })
  adminRoutes(app, { repos })
  adminBackfillRoutes(app, { db: deps.db, repos })
  webhookRoutes(app, {
    repos,
    allowPrivate: deps.config.webhooks.allowPrivate,
    maxWebhooks: deps.config.limits.webhooksPerOrg,
    // SIGNING_KEY_SECRET (or the embedded one): read when the first webhook is created
    sealingKey: memoizeSuccess(() => signingKeySecret(deps.config)),
  })
  // download links are signed with a key derived from SIGNING_KEY_SECRET (api/routes/exports/link.ts)
  exportRoutes(app, { repos, secret: memoizeSuccess(() => signingKeySecret(deps.config)) })
}
