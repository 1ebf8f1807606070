import { randomUUID } from 'node:crypto'
import { Webhook } from 'standardwebhooks'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { createLogger, type Logger } from '../common/logger.ts'
import { type DbHandle, migrate, openDb } from '../db/index.ts'
import { createRepos } from '../db/repos/index.ts'
import { newWebhookSecret } from '../db/repos/webhooks.ts'
import { openWebhookSecret } from '../db/webhook-secrets.ts'
import { deliverOnce } from '../jobs/webhooks/deliver.ts'
import { type Backend, http, orgWithToken, startTestApi } from './helpers/api.ts'
import { testSealingKey } from './helpers/cli.ts'
import { migratedTestDatabase, postgresAvailable } from './helpers/services.ts'
import { startWebhookReceiver, type WebhookReceiver } from './helpers/webhook-receiver.ts'

const pgOk = await postgresAvailable()
const silent = createLogger({ level: 'silent' })
const OPTIONS = { allowPrivate: true, timeoutMs: 2_000, retryBaseMs: 100, retryWindowMs: 60_000 }

let receiver: WebhookReceiver
beforeAll(async () => {
  receiver = await startWebhookReceiver()
})
afterAll(async () => {
  await receiver?.close()
})

/** A migrated database of the backend (closed, and dropped on Postgres, by `close`). */
async function database(backend: Backend): Promise<DbHandle> {
  if (backend === 'postgres') return migratedTestDatabase()
  const dbh = await openDb({ poolMax: 4 })
  await migrate(dbh.db)
  return dbh
}

/** Emits one event to the webhook's organization and makes its first delivery attempt; answers the attempt. */
async function deliverOneEvent(dbh: DbHandle, webhookId: string, orgId: string, logger: Logger = silent) {
  const eventId = await createRepos(dbh.db).webhooks.emit({
    type: 'day.finalized',
    factKey: `secrets-at-rest:${randomUUID()}`,
    orgId,
    data: { probe: true },
  })
  const delivery = await dbh
    .db('webhook_deliveries')
    .where({ webhook_id: webhookId, event_id: eventId })
    .first('id')
  const outcome = await deliverOnce({ db: dbh.db, logger, options: OPTIONS, sealingKey: testSealingKey })(
    delivery.id,
    0,
  )
  return { eventId: eventId!, outcome }
}

/** What the receiver got for an event, verified with `secret` by the standardwebhooks package (throws if not). */
function verifiedBody(eventId: string, secret: string) {
  const got = receiver.received.find((r) => r.headers['webhook-id'] === eventId)
  expect(got).toBeDefined()
  return new Webhook(secret).verify(got!.body, got!.headers)
}

// Webhook signing secrets are sealed at rest (db/webhook-secrets.ts, the signing keys' AES-256-GCM sealing,
// common/sealed.ts): the API stores them sealed, migration 017 seals the plain ones an earlier version stored,
// and deliveries are signed as before, so receivers verify with the secret they were given.
describe.each(['pglite', 'postgres'] as const)('webhook secrets at rest (%s)', (backend) => {
  test.runIf(backend === 'pglite' || pgOk)(
    'behavior: a created subscription stores no plain whsec_ secret; its deliveries verify with the secret shown',
    async () => {
      const api = await startTestApi(backend, { WEBHOOK_ALLOW_PRIVATE: '1' })
      try {
        const { token, orgId } = await orgWithToken(api)
        const created = await http(api.url, token)('POST', '/v1/webhooks', {
          url: `${receiver.url}/created-${backend}`,
          events: ['day.finalized'],
        })
        expect(created.status).toBe(201)
        const secret = created.body.secret as string
        expect(secret).toMatch(/^whsec_/)
        const row = await api.dbh.db('webhooks').where({ id: created.body.id }).first()
        expect(row.secret).not.toContain('whsec_')
        expect(row.secret).not.toContain(secret.slice('whsec_'.length))
        const [plain] = await api.dbh.db('webhooks').where('secret', 'like', '%whsec%').count({ n: '*' })
        expect(Number(plain?.n)).toBe(0)
        expect(openWebhookSecret(await testSealingKey(), created.body.id, row.secret)).toBe(secret)

        const { eventId, outcome } = await deliverOneEvent(api.dbh, created.body.id, orgId)
        expect(outcome).toEqual({ delivered: true, attempts: 1 })
        expect(verifiedBody(eventId, secret)).toMatchObject({ id: eventId, type: 'day.finalized' })
      } finally {
        await api.close()
      }
    },
    120_000,
  )

  test.runIf(backend === 'pglite' || pgOk)(
    'behavior: migration 017 seals a plain secret stored before it (refused without the key); deliveries still verify',
    async () => {
      const dbh = await database(backend)
      try {
        const repos = createRepos(dbh.db)
        const org = await repos.orgs.create({ name: 'legacy', canAllowlist: false })
        const id = randomUUID()
        const secret = newWebhookSecret()
        // as 005 stored it, before 017: the secret in the clear
        await dbh.db('webhooks').insert({
          id,
          org_id: org.id,
          url: `${receiver.url}/legacy-${backend}`,
          events: ['day.finalized'],
          secret,
        })
        await dbh.db('knex_migrations').where({ name: '017_webhook_secrets_sealed' }).delete()
        await expect(migrate(dbh.db)).rejects.toThrow(/needs SIGNING_KEY_SECRET/)
        expect((await dbh.db('webhooks').where({ id }).first()).secret).toBe(secret)

        expect(await migrate(dbh.db, { sealingKey: testSealingKey })).toEqual(['017_webhook_secrets_sealed'])
        const sealed = (await dbh.db('webhooks').where({ id }).first()).secret as string
        expect(sealed).not.toContain('whsec_')
        expect(sealed).not.toContain(secret.slice('whsec_'.length))
        expect(openWebhookSecret(await testSealingKey(), id, sealed)).toBe(secret)

        const { eventId, outcome } = await deliverOneEvent(dbh, id, org.id)
        expect(outcome).toEqual({ delivered: true, attempts: 1 })
        expect(verifiedBody(eventId, secret)).toMatchObject({ id: eventId })
      } finally {
        await dbh.close()
      }
    },
    120_000,
  )
})
