import type { FastifyInstance, onRequestHookHandler } from 'fastify'
import type { Repos } from '../../../db/repos/index.ts'
import type { WebhookRow } from '../../../db/repos/webhooks.ts'
import { ApiError } from '../../errors.ts'

/**
 * What the webhook routes use: the repositories, whether private receiver addresses are allowed, the most
 * webhooks an organization may have (MAX_WEBHOOKS_PER_ORG) and the key their secrets are sealed under
 * (SIGNING_KEY_SECRET, read when a webhook is first created).
 */
export interface WebhookRouteDeps {
  repos: Repos
  allowPrivate: boolean
  maxWebhooks: number
  sealingKey: () => Promise<Buffer>
}

/** What every webhook route shares: its scopes, tags and the caller's webhook lookup. */
export interface WebhookContext extends WebhookRouteDeps {
  /** Route options of a read (the read:platform scope). */
  read: { onRequest: onRequestHookHandler }
  /** Route options of a change (the write:platform scope). */
  write: { onRequest: onRequestHookHandler }
  /** OpenAPI tags of the webhook routes. */
  tags: string[]
  /** The organization's webhook of this id; another organization's answers like an unknown one (404 IR3600). */
  find(orgId: string, id: string): Promise<WebhookRow>
}

/** The webhook routes' shared context over one app and its repositories. */
export function webhookContext(app: FastifyInstance, deps: WebhookRouteDeps): WebhookContext {
  const { repos } = deps
  const read = { onRequest: app.requireScope('read:platform') }
  const write = { onRequest: app.requireScope('write:platform') }

  const find = async (orgId: string, id: string) => {
    const webhook = await repos.webhooks.get(orgId, id)
    if (!webhook) throw new ApiError('IR3600', `webhook ${JSON.stringify(id)} not found`)
    return webhook
  }

  return { ...deps, read, write, tags: ['webhooks'], find }
}
