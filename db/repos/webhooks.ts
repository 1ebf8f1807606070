import { randomBytes, randomUUID } from 'node:crypto'
import { StateError } from '../../common/errors.ts'
import type { Queryable } from '../index.ts'
import { whereTuplesIn } from '../tuple-list.ts'
import type { AccountRow } from './accounts.ts'
import { isUuid } from './accounts.ts'
import type { ExportRow } from './exports.ts'
import { type Page, pageWithTotal } from './page.ts'
import type { WalletRow } from './wallets.ts'

/** The events an organization may subscribe to. */
export const WEBHOOK_EVENT_TYPES = [
  'day.finalized',
  'wallet.allowlisted',
  'wallet.removed',
  'wallet.allowlist_change_failed',
  'account.denied',
  'redeem.satisfied',
  'redeem.claimed',
  'export.completed',
] as const

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number]

/** What every wallet event says of its wallet. */
function walletFacts(wallet: WalletRow) {
  return {
    wallet_id: wallet.id,
    address: wallet.address,
    account_id: wallet.account_id,
    status: wallet.status,
  }
}

/**
 * A subscription. `secret` is its `whsec_...` signing secret sealed under SIGNING_KEY_SECRET
 * (db/webhook-secrets.ts): never stored in the clear.
 */
export interface WebhookRow {
  id: string
  org_id: string
  url: string
  events: WebhookEventType[]
  description: string | null
  secret: string
  created_at: Date
  /** Failed attempts in a row (any success resets it); the circuit breaker pauses at a threshold. */
  consecutive_failures: number
  /** When the current run of failures began (null after a success). */
  failing_since: Date | null
  /** Set while the breaker holds the subscription paused: its deliveries wait, pending. */
  paused_at: Date | null
  /** While paused: when one pending delivery is sent as a probe (a success resumes the subscription). */
  next_probe_at: Date | null
  /** Probes that failed since the pause (the wait between probes doubles with each). */
  probes: number
}

/** When the circuit breaker pauses a subscription and how it probes it (jobs/webhooks/deliver.ts). */
export interface BreakerPolicy {
  /** Consecutive failed attempts that pause a subscription (0: never). */
  failures: number
  /** ...and for at least this long since the first of them (a short blip does not pause). */
  minMs: number
  /** Wait before the first probe after a pause; doubled after each failed probe, at most `maxProbeMs`. */
  probeMs: number
  maxProbeMs: number
}

/** What an attempt's outcome did to its subscription's breaker. */
export interface BreakerChange {
  /** This failure paused the subscription. */
  tripped: boolean
  /** This success (a probe's, or a late one) resumed a paused subscription. */
  resumed: boolean
  consecutiveFailures: number
}

/** A due delivery as the dispatcher hands it out: with its subscription and organization (the lanes). */
export interface DueDelivery {
  id: string
  attempts: number
  webhook_id: string
  org_id: string
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

/** What a delivery job needs: the delivery, its subscription's URL and sealed secret, the event's body. */
export interface DeliveryWork extends DeliveryRow {
  url: string
  secret: string
  org_id: string
  /** The subscription's pause (set: this attempt is its probe). */
  paused_at: Date | null
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
    /**
     * Adds a subscription unless the organization has `limit` already (a `StateError`, reason `tenant_limit`,
     * naming MAX_WEBHOOKS_PER_ORG). The count and the insert run under a lock of the organization's row, so two
     * creates at once never both pass the limit. `secret`: the signing secret as stored (sealed).
     */
    async create(input: {
      id: string
      orgId: string
      url: string
      events: WebhookEventType[]
      description: string | null
      secret: string
      limit: number
    }): Promise<WebhookRow> {
      return db.transaction(async (tx) => {
        await tx('orgs').where({ id: input.orgId }).forUpdate().first('id')
        const [counted] = await tx('webhooks').where({ org_id: input.orgId }).count({ n: '*' })
        const count = Number(counted?.n ?? 0)
        if (count >= input.limit) {
          throw new StateError(
            `the organization has ${count} webhooks, its limit (MAX_WEBHOOKS_PER_ORG=${input.limit}): ` +
              'delete one before subscribing another',
            { reason: 'tenant_limit', details: { limit: input.limit, setting: 'MAX_WEBHOOKS_PER_ORG' } },
          )
        }
        const [row] = await tx<WebhookRow>('webhooks')
          .insert({
            id: input.id,
            org_id: input.orgId,
            url: input.url,
            events: input.events,
            description: input.description,
            secret: input.secret,
          })
          .returning('*')
        return row!
      })
    },
    /** One page of the organization's webhooks (oldest first) and how many it has. */
    async list(orgId: string, page: Page): Promise<{ rows: WebhookRow[]; total: number }> {
      return pageWithTotal<WebhookRow>(() => db('webhooks').where({ org_id: orgId }), page)
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
        data: { ...walletFacts(wallet), on_platform: wallet.on_platform },
      })
    },

    /**
     * wallet.allowlist_change_failed when an Allowlist change of the wallet did not land: once per change when its
     * first try reverts for a reason a retry may cure (`final` false: the writer keeps trying), and once when it
     * fails for good (`final` true).
     */
    /**
     * export.completed once an export's file is complete (db/repos/exports.ts `complete`), to its organization:
     * the export's id and what the file holds; the download link is asked from GET /v1/exports/{id} (it is
     * signed and expires, so it is not in the event). One event per export.
     */
    async emitExportCompleted(row: ExportRow): Promise<void> {
      await emit({
        type: 'export.completed',
        factKey: `export.completed:${row.id}`,
        orgId: row.org_id,
        data: {
          export_id: row.id,
          chain_id: row.chain_id,
          kind: row.spec.kind,
          format: row.spec.format,
          from: row.spec.from,
          to: row.spec.to,
          granularity: row.spec.granularity,
          rows: Number(row.rows),
          bytes: Number(row.bytes),
          sha256: row.sha256,
          completed_at: row.completed_at?.toISOString() ?? null,
          expires_at: row.expires_at?.toISOString() ?? null,
          href: `/v1/exports/${row.id}`,
        },
      })
    },

    async emitAllowlistChangeFailed(
      wallet: WalletRow,
      change: { id: string; reason: string; permissions: string; attempts: number },
      error: string,
      final: boolean,
    ): Promise<void> {
      await emit({
        type: 'wallet.allowlist_change_failed',
        factKey: `wallet.allowlist_change_failed:${change.id}:${final ? 'final' : 'retrying'}`,
        orgId: wallet.org_id,
        data: {
          ...walletFacts(wallet),
          allowlisted: wallet.allowlisted,
          change: change.reason,
          permissions: change.permissions,
          error,
          final,
          attempts: change.attempts,
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
      const query = db(`${table} as x`)
        .join('redeem_requests as r', function () {
          this.on('r.chain_id', 'x.chain_id').andOn('r.request_id', 'x.request_id')
        })
        .join('wallets as w', 'w.address', 'r.recipient')
        .where('x.chain_id', chainId)
        .select('x.*', 'r.recipient as owner', 'w.org_id', 'w.id as wallet_id')
        .orderBy(['x.block_number', 'x.log_index'])
      // a chunk of the follower holds any number of events: one array per column, not a tuple per event
      const rows = await whereTuplesIn(
        query,
        ['x.block_number', 'x.log_index'],
        ['bigint', 'int'],
        positions.map((p) => [p.block_number, p.log_index]),
      )
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

    /**
     * Due deliveries of active (not paused) subscriptions, at most `perWebhook` per subscription (the oldest
     * due first), ordered round-robin: every subscription's first, then every one's second, and so on.
     */
    async due(perWebhook: number, limit: number): Promise<DueDelivery[]> {
      const result = await db.raw<{ rows: DueDelivery[] }>(
        `select d.id, d.attempts, w.id as webhook_id, w.org_id
           from webhooks w
           cross join lateral (
             select d.id, d.attempts, d.next_attempt_at,
                    row_number() over (order by d.next_attempt_at, d.id) as rank
               from webhook_deliveries d
              where d.webhook_id = w.id and d.status = 'pending' and d.next_attempt_at <= now()
              order by d.next_attempt_at, d.id
              limit ?
           ) d
          where w.paused_at is null
          order by d.rank, d.next_attempt_at, d.id
          limit ?`,
        [perWebhook, limit],
      )
      return result.rows
    },

    /**
     * Paused subscriptions whose probe is due, each with its oldest pending delivery (the probe); their next
     * probe is moved `leaseMs` ahead, so another dispatcher does not probe them too (the probe's outcome then
     * sets it).
     */
    async takeProbes(limit: number, leaseMs: number): Promise<DueDelivery[]> {
      const result = await db.raw<{ rows: DueDelivery[] }>(
        `with picked as (
           select w.id as webhook_id, w.org_id, d.id, d.attempts
             from webhooks w
             cross join lateral (
               select d.id, d.attempts from webhook_deliveries d
                where d.webhook_id = w.id and d.status = 'pending'
                order by d.next_attempt_at, d.id
                limit 1
             ) d
            where w.paused_at is not null and w.next_probe_at <= now()
            order by w.next_probe_at
            limit ?
            for update of w skip locked
         ), leased as (
           update webhooks w set next_probe_at = now() + ? * interval '1 millisecond'
             from picked where w.id = picked.webhook_id
         returning w.id
         )
         select picked.* from picked join leased on leased.id = picked.webhook_id`,
        [limit, leaseMs],
      )
      return result.rows
    },

    /**
     * Closes the breaker of a subscription and sends its waiting deliveries now: failures forgotten, not
     * paused; the time it was paused does not count in its deliveries' retry windows. Undefined when the
     * organization has no such webhook; `orgId` null: any organization's (a probe that succeeded).
     */
    async resume(
      orgId: string | null,
      id: string,
    ): Promise<(WebhookRow & { was_paused: boolean }) | undefined> {
      if (!isUuid(id)) return undefined
      const result = await db.raw<{ rows: (WebhookRow & { was_paused_at: Date | null })[] }>(
        `with o as (
           select id, paused_at from webhooks where id = ? and (?::text is null or org_id = ?) for update
         ), w as (
           update webhooks w set consecutive_failures = 0, failing_since = null, paused_at = null,
                  next_probe_at = null, probes = 0
             from o where w.id = o.id
         returning w.*, o.paused_at as was_paused_at
         ), d as (
           update webhook_deliveries d
              set next_attempt_at = least(d.next_attempt_at, now()),
                  window_started_at = d.window_started_at + (now() - w.was_paused_at)
             from w
            where w.was_paused_at is not null and d.webhook_id = w.id and d.status = 'pending'
         returning d.id
         )
         select w.* from w`,
        [id, orgId, orgId],
      )
      const row = result.rows[0]
      if (!row) return undefined
      const { was_paused_at, ...webhook } = row
      return { ...webhook, was_paused: was_paused_at !== null }
    },

    /**
     * Counts an attempt's outcome on its subscription's breaker. A success resets the failures and resumes a
     * paused subscription (`resume`); a failure adds one, and pauses the subscription when it makes
     * `policy.failures` in a row over at least `policy.minMs`; a failed probe (`probe`) puts the next one
     * further off (doubling).
     */
    async countOutcome(
      webhookId: string,
      ok: boolean,
      policy: BreakerPolicy,
      probe: boolean,
    ): Promise<BreakerChange> {
      if (ok) {
        const before = await db<WebhookRow>('webhooks')
          .where({ id: webhookId })
          .first('consecutive_failures', 'paused_at')
        if (!before) return { tripped: false, resumed: false, consecutiveFailures: 0 }
        if (before.consecutive_failures === 0 && before.paused_at === null)
          return { tripped: false, resumed: false, consecutiveFailures: 0 }
        const resumed = await this.resume(null, webhookId)
        return { tripped: false, resumed: resumed?.was_paused ?? false, consecutiveFailures: 0 }
      }
      const trip = `(? > 0 and o.paused_at is null and o.consecutive_failures + 1 >= ?
          and now() - coalesce(o.failing_since, now()) >= ? * interval '1 millisecond')`
      const tripArgs = [policy.failures, policy.failures, policy.minMs]
      const result = await db.raw<{
        rows: { was_paused_at: Date | null; paused_at: Date | null; consecutive_failures: number }[]
      }>(
        `with o as (
           select id, paused_at, consecutive_failures, failing_since, probes, next_probe_at
             from webhooks where id = ? for update
         )
         update webhooks w set
           consecutive_failures = o.consecutive_failures + 1,
           failing_since = coalesce(o.failing_since, now()),
           paused_at = case when ${trip} then now() else o.paused_at end,
           probes = case when o.paused_at is not null and ? then o.probes + 1 else o.probes end,
           next_probe_at = case
             when ${trip} then now() + ? * interval '1 millisecond'
             when o.paused_at is not null and ? then
               now() + least(?, ? * power(2, least(o.probes + 1, 30))) * interval '1 millisecond'
             else o.next_probe_at end
           from o where w.id = o.id
         returning o.paused_at as was_paused_at, w.paused_at, w.consecutive_failures`,
        [
          webhookId,
          ...tripArgs,
          probe,
          ...tripArgs,
          policy.probeMs,
          probe,
          policy.maxProbeMs,
          policy.probeMs,
        ],
      )
      const row = result.rows[0]
      return {
        tripped: row !== undefined && row.was_paused_at === null && row.paused_at !== null,
        resumed: false,
        consecutiveFailures: row?.consecutive_failures ?? 0,
      }
    },

    /**
     * Claims attempt number `attempt + 1` of a pending delivery, before anything is sent: its next attempt is
     * moved `retryInMs` ahead, so a worker that dies while sending leaves it to be retried (with the same
     * event id). Undefined when the delivery is gone, finished, or this attempt was already claimed, or when
     * its subscription is paused and this is not the probe (`options.probe`).
     */
    async claim(
      id: string,
      attempt: number,
      retryInMs: number,
      options: { probe?: boolean } = {},
    ): Promise<DeliveryWork | undefined> {
      const claimed = await db('webhook_deliveries')
        .where({ id, status: 'pending', attempts: attempt })
        .modify((q) => {
          // a paused subscription's deliveries wait; only its probe is sent
          if (!options.probe)
            q.whereExists((sub) =>
              sub
                .select(db.raw('1'))
                .from('webhooks as w')
                .whereRaw('w.id = webhook_deliveries.webhook_id')
                .whereNull('w.paused_at'),
            )
        })
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
        .first([...DELIVERY_COLUMNS, 'w.url', 'w.secret', 'w.org_id', 'w.paused_at', 'e.body'])
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
