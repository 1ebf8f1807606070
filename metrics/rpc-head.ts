/**
 * The chain's head from its RPC: one batched request (`eth_chainId`, `eth_blockNumber`).
 *
 * @example
 * const { chainId, head } = await rpcHead('http://127.0.0.1:8545', AbortSignal.timeout(1_000))
 */
export async function rpcHead(
  rpcUrl: string,
  signal: AbortSignal,
): Promise<{ chainId: number; head: bigint }> {
  const res = await fetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify([
      { jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] },
      { jsonrpc: '2.0', id: 2, method: 'eth_blockNumber', params: [] },
    ]),
    signal,
  })
  if (!res.ok) throw new Error(`RPC answered ${res.status}`)
  const body = (await res.json()) as { id: number; result?: string }[]
  const result = (id: number) => {
    const r = body.find((x) => x.id === id)?.result
    if (typeof r !== 'string') throw new Error(`RPC gave no result for request ${id}`)
    return BigInt(r)
  }
  return { chainId: Number(result(1)), head: result(2) }
}
