import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, test } from 'vitest'
import { type LaunchedDevnet, launchDevnet, type ReportRecord } from './index.ts'
import { devnetStatePaths, replaceAnvilPid } from './persistence.ts'

const dirs: string[] = []
afterAll(async () => {
  for (const dir of dirs) await fs.rm(dir, { recursive: true, force: true })
})

const OPTIONS = { walletCount: 20, dayIntervalMs: 0, stateHistoryBlocks: 64 } as const

/** What a report says, without where it was mined (a resumed chain mines the same days in other blocks if any differ). */
const figures = (r: ReportRecord) => ({
  day: r.day,
  rewards: r.rewards,
  totalSupply: r.totalSupply,
  totalUnderlyingSupply: r.totalUnderlyingSupply,
  feeShares: r.feeShares,
  validatorsCount: r.validatorsCount,
  prices: r.prices,
  blockNumber: r.blockNumber,
  timestamp: r.timestamp,
})

async function tempDir(): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lsreport-devnet-state-'))
  dirs.push(dir)
  return dir
}

describe('launchDevnet with stateDir', () => {
  test('behavior: a stopped devnet resumes the same chain and its simulator goes on as if never stopped', async () => {
    // the reference: four days in one go
    const straight = await launchDevnet({ ...OPTIONS, dataDir: await tempDir() })
    await straight.buildHistory({ days: 4 })
    const reference = straight.simulator.state().reports.map(figures)
    await straight.stop()

    const dataDir = await tempDir()
    const stateDir = path.join(dataDir, 'devnet')
    const paths = devnetStatePaths(stateDir)
    let devnet: LaunchedDevnet = await launchDevnet({ ...OPTIONS, dataDir, stateDir })
    expect(devnet.resumed).toBeUndefined()
    await devnet.buildHistory({ days: 2 })
    const { chainId, contracts } = devnet
    const head = await devnet.simulator.snapshot()
    await devnet.stop()
    expect([existsSync(paths.anvil), existsSync(paths.simulator), existsSync(paths.anvilNext)]).toEqual([
      true,
      true,
      false,
    ])

    devnet = await launchDevnet({ ...OPTIONS, dataDir, stateDir })
    try {
      expect(devnet.resumed).toEqual({ head: head.head.number, nextDay: 2 })
      expect([devnet.chainId, devnet.contracts]).toEqual([chainId, contracts])
      const latest = await devnet.simulator.snapshot()
      expect(latest.head).toEqual(head.head)
      await devnet.buildHistory({ days: 2 })
      expect(devnet.simulator.state().reports.map(figures)).toEqual(reference)
    } finally {
      await devnet.stop()
    }
  }, 120_000)

  test('behavior: a simulator snapshot without anvil state beside it is not resumed', async () => {
    const dataDir = await tempDir()
    const stateDir = path.join(dataDir, 'devnet')
    await fs.mkdir(stateDir)
    await fs.writeFile(devnetStatePaths(stateDir).simulator, '{}')
    await expect(launchDevnet({ ...OPTIONS, dataDir, stateDir })).rejects.toThrow(
      /saved chain cannot be resumed: .*simulator\.json has no .*anvil-state\.json beside it/,
    )
  })

  test('behavior: the node a killed start left on the directory is stopped, another process with its pid is not', async () => {
    const paths = devnetStatePaths(path.join(await tempDir(), 'devnet'))
    const idle = (arg: string) => spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)', arg])
    const exited = (child: ReturnType<typeof spawn>) =>
      new Promise<string | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)))
    const leftover = idle(paths.anvilNext)
    const stranger = idle('another-directory')
    const leftoverExit = exited(leftover)
    try {
      replaceAnvilPid(paths, leftover.pid)
      replaceAnvilPid(paths, undefined) // a new start: the recorded node is this directory's
      expect(await leftoverExit).toBe('SIGKILL')
      replaceAnvilPid(paths, stranger.pid)
      replaceAnvilPid(paths, undefined)
      await new Promise((r) => setTimeout(r, 200))
      expect(stranger.exitCode === null && stranger.signalCode === null).toBe(true)
      expect(existsSync(paths.pid)).toBe(false)
    } finally {
      leftover.kill('SIGKILL')
      stranger.kill('SIGKILL')
    }
  })
})
