/** How many deliveries run at once: in all, per organization, per subscription. */
export interface LaneLimits {
  /** Deliveries in flight at once in this process. */
  concurrency: number
  /** ...of one organization (its lane): another organization's slow receivers never take them. */
  perOrg: number
  /** ...to one subscription. */
  perWebhook: number
  /** A queued task not offered again within this long is dropped (the next pass offers it if still due). */
  staleMs: number
}

/** One delivery attempt to run: `key` de-duplicates it while it is queued or running. */
export interface LaneTask {
  key: string
  org: string
  webhook: string
  run: () => Promise<void>
}

/** The fair in-process scheduler of webhook deliveries (see `createDeliveryLanes`). */
export interface DeliveryLanes {
  /** Queues a task unless one with its key is queued (then it is kept fresh) or running; false then. */
  offer(task: LaneTask): boolean
  /** Tasks queued and running now. */
  size(): { queued: number; running: number }
  /** Resolves once nothing runs (queued tasks are dropped first when `dropQueued`). */
  drain(options?: { dropQueued?: boolean }): Promise<void>
}

interface Queued {
  task: LaneTask
  offeredAt: number
}

interface WebhookLane {
  running: number
  queue: Queued[]
  /** When it was last given a slot (a sequence number; 0: never): the least recently served goes first. */
  served: number
}

interface OrgLane {
  running: number
  webhooks: Map<string, WebhookLane>
  served: number
}

/**
 * Runs webhook deliveries with per-organization lanes: each organization has its own concurrency
 * (`perOrg`), each subscription its own (`perWebhook`), and when the process-wide bound (`concurrency`) is
 * what limits, the next free slot goes to the organization with work served least recently (then, inside
 * it, to its subscription served least recently): round-robin. A tenant whose receivers hang fills only its own lane: another tenant's delivery
 * starts as soon as it is offered (or, with every slot of the process taken, at the next slot freed, ahead of
 * the tenants served before). A task's failure goes to `onError`; it never stops the lanes.
 *
 * @example
 * const lanes = createDeliveryLanes({ concurrency: 64, perOrg: 8, perWebhook: 4, staleMs: 5_000 }, log)
 * lanes.offer({ key: 'delivery-1', org: 'org-a', webhook: 'hook-1', run: () => send() }) // true
 */
export function createDeliveryLanes(
  limits: LaneLimits,
  onError: (err: unknown, task: LaneTask) => void,
  now: () => number = Date.now,
): DeliveryLanes {
  const orgs = new Map<string, OrgLane>()
  let serial = 0
  const keys = new Map<string, Queued | 'running'>()
  let running = 0
  let queued = 0
  const idle: (() => void)[] = []

  const lane = (task: LaneTask) => {
    let org = orgs.get(task.org)
    if (!org) {
      org = { running: 0, webhooks: new Map(), served: 0 }
      orgs.set(task.org, org)
    }
    let hook = org.webhooks.get(task.webhook)
    if (!hook) {
      hook = { running: 0, queue: [], served: 0 }
      org.webhooks.set(task.webhook, hook)
    }
    return { org, hook }
  }

  const prune = (orgId: string, org: OrgLane, webhookId: string, hook: WebhookLane) => {
    if (hook.running === 0 && hook.queue.length === 0) org.webhooks.delete(webhookId)
    if (org.running === 0 && org.webhooks.size === 0) orgs.delete(orgId)
  }

  /** Drops the tasks at the head of a subscription's queue that were not offered again in time. */
  const dropStale = (hook: WebhookLane) => {
    const cutoff = now() - limits.staleMs
    while (hook.queue.length > 0 && hook.queue[0]!.offeredAt < cutoff) {
      const stale = hook.queue.shift()!
      keys.delete(stale.task.key)
      queued -= 1
    }
  }

  /** The least recently served subscription of an organization that has room and a task. */
  const nextWebhook = (orgId: string, org: OrgLane): WebhookLane | undefined => {
    if (org.running >= limits.perOrg) return undefined
    let best: WebhookLane | undefined
    for (const [webhookId, hook] of [...org.webhooks]) {
      dropStale(hook)
      if (hook.running < limits.perWebhook && hook.queue.length > 0) {
        if (!best || hook.served < best.served) best = hook
      } else prune(orgId, org, webhookId, hook)
    }
    return best
  }

  const start = (item: Queued) => {
    const { task } = item
    const { org, hook } = lane(task)
    keys.set(task.key, 'running')
    running += 1
    org.running += 1
    hook.running += 1
    const finish = () => {
      keys.delete(task.key)
      running -= 1
      org.running -= 1
      hook.running -= 1
      prune(task.org, org, task.webhook, hook)
      pump()
      if (running === 0) for (const resolve of idle.splice(0)) resolve()
    }
    let promise: Promise<void>
    try {
      promise = task.run()
    } catch (err) {
      promise = Promise.reject(err)
    }
    promise.catch((err) => onError(err, task)).finally(finish)
  }

  /** Starts tasks while slots are free: each to the least recently served organization that can run one. */
  function pump() {
    while (running < limits.concurrency && queued > 0) {
      let pick: { org: OrgLane; hook: WebhookLane } | undefined
      for (const [orgId, org] of [...orgs]) {
        const hook = nextWebhook(orgId, org)
        if (hook && (!pick || org.served < pick.org.served)) pick = { org, hook }
      }
      if (!pick) return
      serial += 1
      pick.org.served = serial
      pick.hook.served = serial
      queued -= 1
      start(pick.hook.queue.shift()!)
    }
  }

  return {
    offer(task) {
      const known = keys.get(task.key)
      if (known === 'running') return false
      if (known) {
        known.offeredAt = now()
        return false
      }
      const item = { task, offeredAt: now() }
      lane(task).hook.queue.push(item)
      keys.set(task.key, item)
      queued += 1
      pump()
      return true
    },
    size() {
      return { queued, running }
    },
    async drain(options = {}) {
      if (options.dropQueued) {
        for (const [orgId, org] of orgs) {
          for (const [webhookId, hook] of org.webhooks) {
            for (const item of hook.queue) keys.delete(item.task.key)
            queued -= hook.queue.length
            hook.queue = []
            prune(orgId, org, webhookId, hook)
          }
        }
      }
      if (running === 0 && queued === 0) return
      await new Promise<void>((resolve) => idle.push(resolve))
    },
  }
}
