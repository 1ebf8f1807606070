/**
 * The follower's oracle vote check (jobs/follower/oracle-votes.ts) on the protocol's own bytecode: three members,
 * a quorum of two. On the refused-report day member one votes a balance 10 % too high, member two's matching
 * vote reaches the quorum and River refuses it (the transaction reverts), then members two and three book the
 * true report; on a dissent day member three votes one gwei off and is outvoted. The follower stores only the
 * booked reports and says in its log, per differing vote, who voted what and why it was not booked.
 */
import fs from 'node:fs/promises'
import path from 'node:path'
import { type Address, createPublicClient, http, toFunctionSelector } from 'viem'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { riverAbi } from '../chain/abi.ts'
import { createChainClient } from '../chain/client.ts'
import { createLogFetcher } from '../chain/log-fetcher.ts'
import { riverReportAbi } from '../chain/report-simulation.ts'
import { setupFromDevnet } from '../cli/chain-setup.ts'
import { createLogger, flushLogger } from '../common/logger.ts'
import type { DbHandle } from '../db/index.ts'
import { createRepos } from '../db/repos/index.ts'
import { protocolEventDays } from '../devnet/simulation/protocol-events.ts'
import { isDissentDay } from '../devnet/simulation/protocol-report.ts'
import { createFollower } from '../jobs/follower/index.ts'
import { dumpEvents } from './helpers/chain.ts'
import { startTestDevnet, type TestDevnet } from './helpers/devnet.ts'
import { startRpcProxy } from './helpers/rpc-proxy.ts'
import { migratedTestDatabase, postgresAvailable } from './helpers/services.ts'

const pgOk = await postgresAvailable()
const DAYS = 12
const GWEI = 10n ** 9n

type LogLine = Record<string, unknown> & {
  msg: string
  differences?: Record<string, { booked: string; voted: string }>
}

/**
 * One sync of `devnet` into `db` (default: a fresh database, closed with `handles`) over `rpcUrl`, up to
 * `confirmations` blocks behind the head, in chunks of at most `maxRange` blocks; its warnings read back from
 * the log file.
 */
async function syncLogged(
  devnet: TestDevnet,
  handles: DbHandle[],
  name: string,
  options: { rpcUrl?: string; db?: DbHandle['db']; confirmations?: number; maxRange?: bigint } = {},
) {
  let db = options.db
  if (!db) {
    const dbh = await migratedTestDatabase()
    handles.push(dbh)
    db = dbh.db
  }
  const file = path.join(devnet.dataDir, `${name}.log`)
  const logger = createLogger({ level: 'warn', destination: file })
  const client = createChainClient({ rpcUrl: options.rpcUrl ?? devnet.rpcUrl, chainId: devnet.chainId })
  const range = options.maxRange ? { initialRange: options.maxRange, maxRange: options.maxRange } : {}
  const follower = createFollower({
    db,
    client,
    fetcher: createLogFetcher({ client, baseDelayMs: 20, maxDelayMs: 200, ...range }),
    chainId: devnet.chainId,
    contracts: setupFromDevnet(devnet).contracts,
    confirmations: options.confirmations ?? 0,
    logger,
  })
  const result = await follower.syncOnce()
  await flushLogger(logger)
  const lines = (await fs.readFile(file, 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as LogLine)
  return { db, result, lines, notBooked: lines.filter((l) => l.msg === 'oracle vote not booked') }
}

describe.runIf(pgOk)('oracle votes not booked, on the protocol bytecode (Postgres)', () => {
  let devnet: TestDevnet
  const handles: DbHandle[] = []

  beforeAll(async () => {
    devnet = await startTestDevnet('oracle-votes', {
      history: 'current',
      days: DAYS,
      walletCount: 20,
      dayIntervalMs: 0,
      blockIntervalMs: 100,
    })
  }, 120_000)
  afterAll(async () => {
    await devnet?.stop()
    for (const h of handles) await h.close()
  })

  const members = () => devnet.simulator.deployment.protocol!.oracleMembers.map((m) => m.toLowerCase())
  const refusedDay = () => protocolEventDays(devnet.simulator.deployment.protocol!.releaseDays).refusedReport

  test('behavior: the refused report and the outvoted dissent are each one warning saying why; only booked reports are stored', async () => {
    const { db, lines, notBooked } = await syncLogged(devnet, handles, 'direct')
    const stored = await createRepos(db).chain.oracleReports(devnet.chainId)

    // the stored reports are River's booked ones, one a day, to the wei (read apart from the follower)
    const chain = createPublicClient({ transport: http(devnet.rpcUrl) })
    const booked = await chain.getLogs({
      address: devnet.contracts.river as Address,
      event: riverAbi.find((i) => i.type === 'event' && i.name === 'ProcessedConsensusLayerReport')!,
      fromBlock: 0n,
      toBlock: 'latest',
      strict: true,
    })
    expect(stored.length).toBe(DAYS)
    expect(booked.length).toBe(DAYS)
    expect(
      stored.map((r) => [
        String(r.block_number),
        Number(r.log_index),
        String(r.epoch),
        String(r.validators_balance),
      ]),
    ).toEqual(
      booked.map((l) => [
        String(l.blockNumber),
        l.logIndex,
        String(l.args.report.epoch),
        String(l.args.report.validatorsBalance),
      ]),
    )
    const dates = devnet.simulator.state().reports.map((r) => r.date)
    expect(stored.map((r) => (r.report_date as Date).toISOString().slice(0, 10))).toEqual(dates)

    // the refused day: member one's registered vote, River's refusal decoded
    const day = refusedDay()
    const refusedRow = stored[day]!
    const bookedBalance = BigInt(refusedRow.validators_balance)
    const refused = notBooked.filter((l) => l.reason === 'refused')
    expect(refused).toHaveLength(1)
    expect(refused[0]).toMatchObject({
      level: 40,
      chain_id: devnet.chainId,
      epoch: String(refusedRow.epoch),
      member: members()[0],
      booked_block_number: String(refusedRow.block_number),
      booked_tx_hash: refusedRow.tx_hash,
      differences: {
        validators_balance: {
          booked: String(bookedBalance),
          voted: String(bookedBalance + bookedBalance / 10n),
        },
      },
    })
    expect(refused[0]!.why).toMatch(
      /^River refuses it: TotalValidatorBalanceIncreaseOutOfBound\(prevTotalEthIncludingExited: \d+, postTotalEthIncludingExited: \d+, timeElapsed: 86400, annualAprUpperBound: \d+\)$/,
    )
    const voteTx = await chain.getTransaction({ hash: refused[0]!.vote_tx_hash as `0x${string}` })
    expect(voteTx.from.toLowerCase()).toBe(members()[0])
    expect(voteTx.to?.toLowerCase()).toBe(devnet.contracts.oracle.toLowerCase())
    // nothing of the refused report is stored
    expect(stored.some((r) => BigInt(r.validators_balance) === bookedBalance + bookedBalance / 10n)).toBe(
      false,
    )

    // each dissent day: member three one gwei off, outvoted (River would have taken it)
    const dissentDays = [...Array(DAYS).keys()].filter(isDissentDay)
    expect(dissentDays).toEqual([4])
    const outvoted = notBooked.filter((l) => l.reason === 'outvoted')
    expect(outvoted.map((l) => l.epoch)).toEqual(dissentDays.map((d) => String(stored[d]!.epoch)))
    for (const line of outvoted) {
      expect(line).toMatchObject({ member: members()[2], why: 'did not reach quorum (outvoted)' })
      const { booked: b, voted: v } = line.differences!.validators_balance!
      expect(BigInt(v) - BigInt(b)).toBe(GWEI)
      expect(Object.keys(line.differences!)).toEqual(['validators_balance'])
    }
    // nothing else: the agreeing votes say nothing, and the check never failed
    expect(notBooked).toHaveLength(refused.length + outvoted.length)
    expect(lines.filter((l) => l.msg === 'oracle votes not checked')).toEqual([])
  }, 60_000)

  test('behavior: a node that fails the simulation or the vote query leaves a warning with its error; the sync stores the same rows', async () => {
    const selector = toFunctionSelector(riverReportAbi.find((i) => i.type === 'function')!)
    const proxy = await startRpcProxy({
      upstream: devnet.rpcUrl,
      faults: {
        hold: (call) => {
          const data = (Array.isArray(call.params) ? call.params[0] : undefined) as
            | { data?: string }
            | undefined
          return call.method === 'eth_call' && data?.data?.startsWith(selector)
            ? Promise.reject(new Error('injected simulation failure'))
            : undefined
        },
      },
    })
    try {
      const direct = await syncLogged(devnet, handles, 'reference')
      const faulty = await syncLogged(devnet, handles, 'faulty', { rpcUrl: proxy.url })
      expect(faulty.result.target).toBe(direct.result.target)
      expect(await dumpEvents(faulty.db)).toEqual(await dumpEvents(direct.db))
      expect(faulty.notBooked.map((l) => [l.epoch, l.member])).toEqual(
        direct.notBooked.map((l) => [l.epoch, l.member]),
      )
      for (const line of faulty.notBooked) {
        expect(line.reason).toBe('unknown')
        expect(String(line.error)).toMatch(/502|injected simulation failure/)
      }
      expect(faulty.notBooked.length).toBe(2)

      // a node that fails the vote query itself: the check says so, the sync is unchanged
      const oracle = devnet.contracts.oracle.toLowerCase()
      proxy.updateFaults({
        hold: (call) => {
          const filter = (Array.isArray(call.params) ? call.params[0] : undefined) as
            | { address?: string }
            | undefined
          return call.method === 'eth_getLogs' && filter?.address?.toLowerCase() === oracle
            ? Promise.reject(new Error('injected log query failure'))
            : undefined
        },
      })
      const blind = await syncLogged(devnet, handles, 'blind', { rpcUrl: proxy.url })
      expect(await dumpEvents(blind.db)).toEqual(await dumpEvents(direct.db))
      expect(blind.notBooked).toEqual([])
      const unchecked = blind.lines.filter((l) => l.msg === 'oracle votes not checked')
      expect(unchecked).toHaveLength(1)
      expect(unchecked[0]!.epochs).toHaveLength(DAYS)
      expect(String(unchecked[0]!.error)).toMatch(/eth_getLogs failed/)
    } finally {
      await proxy.stop()
    }
  }, 60_000)

  test('behavior: in small chunks, and across two followers (the second one remembering nothing), the same warnings', async () => {
    const whole = await syncLogged(devnet, handles, 'whole')
    const summary = (lines: LogLine[]) =>
      lines.map((l) => [l.epoch, l.member, l.reason, l.vote_tx_hash, JSON.stringify(l.differences)])
    expect(whole.notBooked).toHaveLength(2)
    const small = await syncLogged(devnet, handles, 'small', { maxRange: 4n })
    expect(summary(small.notBooked)).toEqual(summary(whole.notBooked))
    // the first follower stops between the dissent day and the refused day; the second one goes on
    const head = whole.result.head
    const between = Number(head - BigInt(whole.notBooked[1]!.vote_block_number as string)) + 2
    const first = await syncLogged(devnet, handles, 'first', { maxRange: 6n, confirmations: between })
    expect(first.result.target).toBeLessThan(BigInt(whole.notBooked[1]!.vote_block_number as string))
    expect(first.result.target).toBeGreaterThan(BigInt(whole.notBooked[0]!.vote_block_number as string))
    const second = await syncLogged(devnet, handles, 'second', { db: first.db, maxRange: 6n })
    expect(summary([...first.notBooked, ...second.notBooked])).toEqual(summary(whole.notBooked))
    expect(first.notBooked).toHaveLength(1)
    expect(await dumpEvents(second.db)).toEqual(await dumpEvents(whole.db))
  }, 60_000)
})

describe.runIf(pgOk)('oracle votes not booked across the versions (Postgres)', () => {
  let devnet: TestDevnet
  const handles: DbHandle[] = []
  beforeAll(async () => {
    // the Oracle 0.4.0 until day 6 (the dissent of day 4 is a CLReported vote), 1.2.1 from day 7 (refused on day 9)
    devnet = await startTestDevnet('oracle-votes-versions', {
      history: 'versioned',
      upgrades: { v05Day: 1, v1Day: 6, v12Day: 7 },
      days: DAYS,
      walletCount: 20,
      dayIntervalMs: 0,
      blockIntervalMs: 100,
    })
  }, 120_000)
  afterAll(async () => {
    await devnet?.stop()
    for (const h of handles) await h.close()
  })

  test('behavior: a 0.4.0 member one gwei off (CLReported) is outvoted; the 1.2.1 refusal is decoded', async () => {
    const { db, lines } = await syncLogged(devnet, handles, 'versions')
    const stored = await createRepos(db).chain.oracleReports(devnet.chainId)
    const members = devnet.simulator.deployment.protocol!.oracleMembers.map((m) => m.toLowerCase())
    const refused = protocolEventDays(devnet.simulator.deployment.protocol!.releaseDays).refusedReport
    expect(stored[4]?.report_shape).toBe('legacy')
    expect(stored[refused]?.report_shape).toBe('v1')
    expect(lines.map((l) => [l.msg, l.reason, l.epoch, l.member])).toEqual([
      ['oracle vote not booked', 'outvoted', String(stored[4]!.epoch), members[2]],
      ['oracle vote not booked', 'refused', String(stored[refused]!.epoch), members[0]],
    ])
    const legacy = lines[0]!.differences!
    expect(Object.keys(legacy)).toEqual(['validators_balance'])
    expect(BigInt(legacy.validators_balance!.voted) - BigInt(legacy.validators_balance!.booked)).toBe(GWEI)
    expect(lines[1]!.why).toMatch(/^River refuses it: TotalValidatorBalanceIncreaseOutOfBound\(/)
  }, 60_000)
})
