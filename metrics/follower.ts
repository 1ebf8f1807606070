import { type SharedCollector, sourceGauge } from './collector.ts'
import { rpcHead } from './rpc-head.ts'

interface FollowerRow {
  chain_id: number
  head: string
  synced: string | null
  age_seconds: string | number
}

/**
 * Follower lag per chain: head (the RPC's when this process has RPC_URL, else the head the follower last
 * recorded in `chain_heads`) minus confirmations minus the lowest cursor of `chain_cursors`.
 */
export const followerCollector: SharedCollector = (scope) => {
  const rows = scope.source('follower', async () => {
    const result = await scope.db.raw<{ rows: FollowerRow[] }>(
      `select h.chain_id, h.block_number as head,
              (select min(c.block_number) from chain_cursors c where c.chain_id = h.chain_id) as synced,
              extract(epoch from now() - h.updated_at) as age_seconds
         from chain_heads h`,
    )
    return result.rows
  })
  const rpc = scope.source('rpc', async () => {
    const url = scope.rpcUrl()
    if (!url) return undefined
    return rpcHead(url, AbortSignal.timeout(1_000))
  })
  const perChain = async () => {
    const [list, chain] = await Promise.all([rows(), rpc()])
    return list?.map((r) => {
      const recorded = BigInt(r.head)
      const head = chain && chain.chainId === r.chain_id && chain.head > recorded ? chain.head : recorded
      const target = head - BigInt(scope.confirmations)
      const synced = r.synced === null ? undefined : BigInt(r.synced)
      return { chain_id: String(r.chain_id), head, synced, target, age: Number(r.age_seconds) }
    })
  }
  const chainLabel = ['chain_id'] as const
  sourceGauge(
    scope,
    {
      name: 'lsreport_follower_lag_blocks',
      help: 'Final blocks (head - CONFIRMATIONS) the follower has not ingested yet',
      labelNames: chainLabel,
      load: perChain,
    },
    (list, set) => {
      for (const c of list) {
        if (c.synced === undefined) continue
        set({ chain_id: c.chain_id }, Number(c.target > c.synced ? c.target - c.synced : 0n))
      }
    },
  )
  sourceGauge(
    scope,
    {
      name: 'lsreport_chain_head_block',
      help: 'Head block of the chain (RPC when this process has RPC_URL, else the follower last saw)',
      labelNames: chainLabel,
      load: perChain,
    },
    (list, set) => {
      for (const c of list) set({ chain_id: c.chain_id }, Number(c.head))
    },
  )
  sourceGauge(
    scope,
    {
      name: 'lsreport_follower_synced_block',
      help: 'Block up to which every contract stream of the follower is ingested',
      labelNames: chainLabel,
      load: perChain,
    },
    (list, set) => {
      for (const c of list) if (c.synced !== undefined) set({ chain_id: c.chain_id }, Number(c.synced))
    },
  )
  sourceGauge(
    scope,
    {
      name: 'lsreport_follower_last_seen_seconds',
      help: 'Seconds since the follower last recorded the chain head (a stopped follower grows it)',
      labelNames: chainLabel,
      load: perChain,
    },
    (list, set) => {
      for (const c of list) set({ chain_id: c.chain_id }, c.age)
    },
  )
}
