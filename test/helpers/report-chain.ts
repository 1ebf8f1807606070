import type { Address, PublicClient } from 'viem'
import { REPORT_EVENT_NAMES, riverAbi, riverLegacyAbi } from '../../chain/abi.ts'
import { ZERO_ADDRESS as ZERO } from '../../common/address.ts'

/** A report as the chain says at its transaction: the pool after it and holders' balances before it. */
export interface ChainReportPosition {
  /** River's totalUnderlyingSupply right after the report transaction. */
  U: bigint
  /** River's totalSupply right after the report transaction. */
  S: bigint
  /** LsETH `balanceOf` each of `addresses` right before the report transaction (in the same order). */
  balancesBefore(addresses: readonly string[]): Promise<bigint[]>
}

/**
 * Reads, independently of the service, the pool and balances at the position of the report transaction of
 * `block`. eth_call answers for whole blocks only: balances are read at the previous block and the block's
 * transfers before the report added; U and S are read at the block and what later transactions of the block
 * did undone (a deposit's amount from U, mints and burns from S).
 */
export async function readReportPosition(
  client: PublicClient,
  river: Address,
  block: bigint,
): Promise<ChainReportPosition> {
  const [logs, U, S] = await Promise.all([
    client.getContractEvents({
      address: river,
      abi: [...riverAbi, ...riverLegacyAbi],
      fromBlock: block,
      toBlock: block,
    }),
    client.readContract({
      address: river,
      abi: riverAbi,
      functionName: 'totalUnderlyingSupply',
      blockNumber: block,
    }),
    client.readContract({ address: river, abi: riverAbi, functionName: 'totalSupply', blockNumber: block }),
  ])
  // the report of any River version: ConsensusLayerDataUpdate before 1.0.0
  const report = logs.find((l) => (REPORT_EVENT_NAMES as readonly string[]).includes(l.eventName))
  if (!report) throw new Error(`no oracle report in block ${block}`)
  const at = report.transactionIndex as number
  let u = U as bigint
  let s = S as bigint
  const transfersBefore: { from: string; to: string; value: bigint }[] = []
  for (const log of logs) {
    const index = log.transactionIndex as number
    if (log.eventName === 'Transfer') {
      const { from, to, value } = log.args as { from: string; to: string; value: bigint }
      if (index < at) transfersBefore.push({ from: from.toLowerCase(), to: to.toLowerCase(), value })
      if (index > at && from === ZERO) s -= value
      if (index > at && to === ZERO) s += value
    }
    if (log.eventName === 'UserDeposit' && index > at) u -= (log.args as { amount: bigint }).amount
  }
  return {
    U: u,
    S: s,
    async balancesBefore(addresses) {
      const atBlockStart = await Promise.all(
        addresses.map((address) =>
          client.readContract({
            address: river,
            abi: riverAbi,
            functionName: 'balanceOf',
            args: [address as Address],
            blockNumber: block - 1n,
          }),
        ),
      )
      return addresses.map((address, i) => {
        const a = address.toLowerCase()
        let balance = atBlockStart[i] as bigint
        for (const t of transfersBefore) {
          if (t.to === a) balance += t.value
          if (t.from === a) balance -= t.value
        }
        return balance
      })
    },
  }
}

/** A report's position (`readReportPosition`) with the pool of the report before it. */
export interface ChainReportStep extends ChainReportPosition {
  block: bigint
  /** U and S right after the previous report's transaction; for the first, at the end of the block before it. */
  Up: bigint
  Sp: bigint
}

/**
 * `readReportPosition` for each report block of a chain in order, each with its predecessor's pool.
 *
 * @example
 * for (const r of await readReportSteps(client, river, [12n, 40n])) netReward(balance, r)
 */
export async function readReportSteps(
  client: PublicClient,
  river: Address,
  blocks: readonly bigint[],
): Promise<ChainReportStep[]> {
  const steps: ChainReportStep[] = []
  for (const block of blocks) {
    const position = await readReportPosition(client, river, block)
    const previous = steps.at(-1)
    const [Up, Sp] = previous
      ? [previous.U, previous.S]
      : await Promise.all(
          (['totalUnderlyingSupply', 'totalSupply'] as const).map((functionName) =>
            client.readContract({ address: river, abi: riverAbi, functionName, blockNumber: block - 1n }),
          ),
        )
    steps.push({ ...position, block, Up: Up as bigint, Sp: Sp as bigint })
  }
  return steps
}
