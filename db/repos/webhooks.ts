import { randomBytes, randomUUID } from 'node:crypto'
import type { Queryable } from '../index.ts'
import type { AccountRow } from './accounts.ts'
import { isUuid } from './accounts.ts'
import type { WalletRow } from './wallets.ts'

/** The events an organization may subscribe to. */
export const WEBHOOK_EVENT_TYPES = [
  'day.finalized',
  'wallet.allowlisted',
  'wallet.removed',
  'account.denied',
  'redeem.satisfied',
  'redeem.claimed',
] as const

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number]

/** A subscription. `secret` (whsec_...) signs its deliveries. */
export interface WebhookRow {
  id: string
  org_id: string
  url: string
  events: WebhookEventType[]
  description: string | null
  secret: string
  created_at: Date
}

/** pending -> succeeded | failed (a replay sends a delivery back to pending). */
export type DeliveryStatus = 'pending' | 'succeeded' | 'failed'

/** One (event, subscription) pair and its outcome so far. */
export interface DeliveryRow {
  id: string
  event_id: string
  webhook_id: string
  status: DeliveryStatus
  attempts: number
  next_attempt_at: Date | null
  window_started_at: Date
  last_attempt_at: Date | null
  last_status_code: number | null
  last_error: string | null
  delivered_at: Date | null
  created_at: Date
  /** The event's type (joined). */
  type: WebhookEventType
}

/** What a delivery job needs: the delivery, its subscription's URL and secret, the event's body. */
export interface DeliveryWork extends DeliveryRow {
  url: string
  secret: string
  body: string
}

/** An event to put in the outbox: one per `factKey`. `orgId` null reaches every subscribed organization. */
export interface NewWebhookEvent {
  type: WebhookEventType
  factKey: string
  orgId: string | null
  data: Record<string, unknown>
}

/** A new `whsec_` secret: 32 random bytes, base64 (the Standard Webhooks format). */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`
}

/** An event id (`evt_` and 32 hex digits): the webhook-id header of every delivery of the event. */
function newEventId(): string {
  return `evt_${randomUUID().replaceAll('-', '')}`
}

const DELIVERY_COLUMNS = [
  'd.id',
  'd.event_id',
  'd.webhook_id',
  'd.status',
  'd.attempts',
  'd.next_attempt_at',
  'd.window_started_at',
  'd.last_attempt_at',
  'd.last_status_code',
  'd.last_error',
  'd.delivered_at',
  'd.created_at',
  'e.type',
]

/**
 * Webhook subscriptions, the event outbox and the delivery log. Emitting runs in the caller's transaction
 * (the fact's own), so an event exists exactly when its fact was committed, once per fact key.
 */
export function createWebhooksRepo(db: Queryable) {
  /** Outbox insert plus one delivery per matching subscription; returns the event id when it is new. */
  async function emit(event: NewWebhookEvent): Promise<string | undefined> {
    const id = newEventId()
    const body = JSON.stringify({
      id,
      type: event.type,
      timestamp: new Date().toISOString(),
      data: event.data,
    })
    const inserted = await db('webhook_events')
      .insert({ id, fact_key: event.factKey, type: event.type, org_id: event.orgId, body })
      .onConflict('fact_key')
      .ignore()
      .returning('id')
    if (inserted.length === 0) return undefined
    await db.raw(
      `insert into webhook_deliveries (id, event_id, webhook_id, next_attempt_at)
       select gen_random_uuid(), ?, w.id, now() from webhooks w
       where ? = any(w.events) and (?::text is null or w.org_id = ?)`,
      [id, event.type, event.orgId, event.orgId],
    )
    return id
  }

  return {
    async create(input: {
      orgId: string
      url: string
      events: WebhookEventType[]
      description: string | null
    }): Promise<WebhookRow> {
      const [row] = await db<WebhookRow>('webhooks')
        .insert({
          id: randomUUID(),
          org_id: input.orgId,
          url: input.url,
          events: input.events,
          description: input.description,
          secret: newWebhookSecret(),
        })
        .returning('*')
      return row!
    },
    async list(orgId: string): Promise<WebhookRow[]> {
      return db<WebhookRow>('webhooks')
        .where({ org_id: orgId })
        .orderBy([{ column: 'created_at' }, 'id'])
    },
    /** The organization's webhook; another organization's answers like an unknown id (undefined). */
    async get(orgId: string, id: string): Promise<WebhookRow | undefined> {
      if (!isUuid(id)) return undefined
      return db<WebhookRow>('webhooks').where({ org_id: orgId, id }).first()
    },
    /** Deletes the webhook and its delivery log; false when the organization has no such webhook. */
    async remove(orgId: string, id: string): Promise<boolean> {
      if (!isUuid(id)) return false
      return (await db('webhooks').where({ org_id: orgId, id }).delete()) > 0
    },

    emit,

    /**
     * wallet.allowlisted / wallet.removed after `moveWallet` changed the status. The fact: for ALLOWLISTED, the
     * wallet and the change's reason (the chain's `tx <hash>`: a reorg re-including the same transaction is
     * the same fact, a later re-allowlisting by a new transaction is a new one); REMOVED is final, once per
     * wallet.
     */
    async emitWalletStatus(wallet: WalletRow, reason: string): Promise<void> {
      const type = wallet.status === 'ALLOWLISTED' ? 'wallet.allowlisted' : 'wallet.removed'
      await emit({
        type,
        factKey: type === 'wallet.allowlisted' ? `${type}:${wallet.id}:${reason}` : `${type}:${wallet.id}`,
        orgId: wallet.org_id,
        data: {
          wallet_id: wallet.id,
          address: wallet.address,
          account_id: wallet.account_id,
          status: wallet.status,
          on_platform: wallet.on_platform,
        },
      })
    },

    /** account.denied after `moveAccount` put the account in DENIED (final: once per account). */
    async emitAccountDenied(account: AccountRow, reason: string | undefined) {
      await emit({
        type: 'account.denied',
        factKey: `account.denied:${account.id}`,
        orgId: account.org_id,
        data: { account_id: account.id, key: account.key, status: account.status, reason: reason ?? null },
      })
    },

    /**
     * redeem.satisfied / redeem.claimed for indexed SatisfiedRedeemRequest / ClaimedRedeemRequest rows
     * (given by chain position), to the organization whose wallet owns the redeem request. The fact is the
     * log (chain id, tx hash, log index): a reorg that re-includes the same transaction emits nothing new.
     */
    async emitRedeemEvents(
      chainId: number,
      kind: 'satisfied' | 'claimed',
      positions: { block_number: string; log_index: number }[],
    ): Promise<number> {
      if (positions.length === 0) return 0
      const table = kind === 'satisfied' ? 'redeem_satisfactions' : 'redeem_claims'
      const rows = await db(`${table} as x`)
        .join('redeem_requests as r', function () {
          this.on('r.chain_id', 'x.chain_id').andOn('r.request_id', 'x.request_id')
        })
        .join('wallets as w', 'w.address', 'r.recipient')
        .where('x.chain_id', chainId)
        .whereIn(
          ['x.block_number', 'x.log_index'],
          positions.map((p) => [p.block_number, p.log_index]),
        )
        .select('x.*', 'r.recipient as owner', 'w.org_id', 'w.id as wallet_id')
      let emitted = 0
      for (const row of rows) {
        const common = {
          chain_id: chainId,
          redeem_request_id: String(row.request_id),
          owner: row.owner,
          wallet_id: row.wallet_id,
          block_number: String(row.block_number),
          tx_hash: row.tx_hash,
          log_index: row.log_index,
        }
        const data =
          kind === 'satisfied'
            ? {
                ...common,
                withdrawal_event_id: String(row.withdrawal_event_id),
                lseth_amount_satisfied: row.lseth_amount_satisfied,
                eth_amount_satisfied: row.eth_amount_satisfied,
                lseth_amount_remaining: row.lseth_amount_remaining,
                eth_amount_exceeding: row.eth_amount_exceeding,
              }
            : {
                ...common,
                recipient: row.recipient,
                eth_amount: row.eth_amount,
                lseth_amount: row.lseth_amount,
                remaining_lseth_amount: row.remaining_lseth_amount,
              }
        const type = kind === 'satisfied' ? 'redeem.satisfied' : 'redeem.claimed'
        const id = await emit({
          type,
          factKey: `${type}:${chainId}:${row.tx_hash}:${row.log_index}`,
          orgId: row.org_id,
          data,
        })
        if (id) emitted += 1
      }
      return emitted
    },

    /** A webhook's delivery log, newest first. */
    async deliveries(webhookId: string, page: { limit: number; offset: number }): Promise<DeliveryRow[]> {
      return db('webhook_deliveries as d')
        .join('webhook_events as e', 'e.id', 'd.event_id')
        .where('d.webhook_id', webhookId)
        .orderBy([
          { column: 'd.created_at', order: 'desc' },
          { column: 'd.id', order: 'desc' },
        ])
        .limit(page.limit)
        .offset(page.offset)
        .select(DELIVERY_COLUMNS)
    },

    async delivery(webhookId: string, id: string): Promise<DeliveryRow | undefined> {
      if (!isUuid(id)) return undefined
      return db('webhook_deliveries as d')
        .join('webhook_events as e', 'e.id', 'd.event_id')
        .where({ 'd.webhook_id': webhookId, 'd.id': id })
        .first(DELIVERY_COLUMNS)
    },

    /** Pending deliveries whose next attempt is due by `withinMs` from now, oldest first. */
    async due(withinMs: number, limit: number): Promise<{ id: string; attempts: number; in_ms: number }[]> {
      return db('webhook_deliveries')
        .where('status', 'pending')
        .where('next_attempt_at', '<=', db.raw(`now() + ? * interval '1 millisecond'`, [withinMs]))
        .orderBy('next_attempt_at')
        .limit(limit)
        .select(
          'id',
          'attempts',
          db.raw(`greatest(0, extract(epoch from next_attempt_at - now()) * 1000)::int as in_ms`),
        )
    },

    /**
     * Claims attempt number `attempt + 1` of a pending delivery, before anything is sent: its next attempt is
     * moved `retryInMs` ahead, so a worker that dies while sending leaves it to be retried (with the same
     * event id). Undefined when the delivery is gone, finished, or this attempt was already claimed.
     */
    async claim(id: string, attempt: number, retryInMs: number): Promise<DeliveryWork | undefined> {
      const claimed = await db('webhook_deliveries')
        .where({ id, status: 'pending', attempts: attempt })
        .update({
          attempts: attempt + 1,
          last_attempt_at: db.fn.now(),
          next_attempt_at: db.raw(`now() + ? * interval '1 millisecond'`, [retryInMs]),
        })
        .returning('id')
      if (claimed.length === 0) return undefined
      return db('webhook_deliveries as d')
        .join('webhook_events as e', 'e.id', 'd.event_id')
        .join('webhooks as w', 'w.id', 'd.webhook_id')
        .where('d.id', id)
        .first([...DELIVERY_COLUMNS, 'w.url', 'w.secret', 'e.body'])
    },

    /** The outcome of the attempt claimed as `attempts`: succeeded, failed for good, or pending (retried). */
    async record(
      id: string,
      attempts: number,
      outcome: {
        status: DeliveryStatus
        statusCode: number | null
        error: string | null
        /** When pending: the wait before the next attempt (from now). */
        retryInMs?: number
      },
    ): Promise<void> {
      await db('webhook_deliveries')
        .where({ id, attempts, status: 'pending' })
        .update({
          status: outcome.status,
          last_status_code: outcome.statusCode,
          last_error: outcome.error?.slice(0, 1000) ?? null,
          ...(outcome.status === 'succeeded' ? { delivered_at: db.fn.now() } : {}),
          next_attempt_at:
            outcome.status === 'pending'
              ? db.raw(`now() + ? * interval '1 millisecond'`, [outcome.retryInMs ?? 0])
              : null,
        })
    },

    /** Sends a delivery again (same event, same webhook-id): back to pending, due now, a fresh retry window. */
    async replay(webhookId: string, id: string): Promise<DeliveryRow | undefined> {
      if (!isUuid(id)) return undefined
      const updated = await db('webhook_deliveries')
        .where({ webhook_id: webhookId, id })
        .update({ status: 'pending', next_attempt_at: db.fn.now(), window_started_at: db.fn.now() })
        .returning('id')
      if (updated.length === 0) return undefined
      return this.delivery(webhookId, id)
    },
  }
}
export type WebhooksRepo = ReturnType<typeof createWebhooksRepo>
