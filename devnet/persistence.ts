/**
 * The embedded devnet's state kept in a directory (`$DATA_DIR/devnet/` under `lsreport up`), so a restart
 * resumes the same chain: anvil's own state dump (`anvil-state.json`: accounts, blocks, transactions and the
 * states of the blocks anvil keeps) and the simulator's context (`simulator.json`: its next day, wallets,
 * generators, consensus model, reports) with the chain head it belongs to. Both are written only once the
 * simulator and anvil have stopped (a graceful stop): anvil dumps to `anvil-state.next.json` on exit, then
 * `commitDevnetState` moves it in place and writes the simulator's file last. A stop that did not finish
 * (SIGKILL) leaves the pair of the previous stop, or none.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import type { Hash } from 'viem'
import type { ConsensusFacts, ConsensusSnapshot } from './consensus.ts'
import type { DevnetDeployment } from './deployment.ts'
import type { PriceWalk } from './simulation/prices.ts'
import type { OpenRedeemRequest, ReportRecord, SimulatorCounts, WalletState } from './simulation/state.ts'
import type { ProtocolVersion, ProxiedContract } from './versions.ts'

/** A saved devnet state that cannot be resumed (the message says why). */
export class DevnetStateError extends Error {
  override name = 'DevnetStateError'
}

/** Version of `simulator.json`'s shape: a file of another version is not resumed. */
export const SIMULATOR_STATE_VERSION = 1

/** The simulator's context as plain data: what `createSimulator({ resume })` continues from. */
export interface SimulatorSnapshot {
  version: typeof SIMULATOR_STATE_VERSION
  seed: number | string
  walletCount: number
  startDate: string
  /** the chain's latest block when the snapshot was taken: the restored chain must have it as its head */
  head: { number: bigint; hash: Hash }
  deployment: DevnetDeployment
  nextDay: number
  setupDone: boolean
  /** index of the wallet denied on the deny day, if any */
  deniedWallet: number | undefined
  versions: Record<ProxiedContract, ProtocolVersion | null>
  /** numbers drawn by each generator (rng.ts `draws`) */
  draws: { users: number; reports: number; prices: number; consensus: number }
  priceWalk: PriceWalk
  consensus: ConsensusSnapshot
  wallets: WalletState[]
  openRequests: OpenRedeemRequest[]
  requestedExits: number[]
  fundedKeys: number[]
  addedKeys: number[]
  reports: ReportRecord[]
  factsHistory: ConsensusFacts[]
  counts: SimulatorCounts
  globalFee: bigint
}

/** The files of a devnet state directory. */
export interface DevnetStatePaths {
  dir: string
  /** anvil's state, loaded at start (`--load-state`) */
  anvil: string
  /** where anvil dumps its state on exit (`--dump-state`), moved to `anvil` once the stop completed */
  anvilNext: string
  simulator: string
  /** the process id of the anvil running on this state (a leftover of a killed start is stopped) */
  pid: string
}

/**
 * The files of the devnet state kept in `dir`.
 *
 * @example
 * devnetStatePaths('data/devnet').simulator // 'data/devnet/simulator.json'
 */
export function devnetStatePaths(dir: string): DevnetStatePaths {
  return {
    dir,
    anvil: path.join(dir, 'anvil-state.json'),
    anvilNext: path.join(dir, 'anvil-state.next.json'),
    simulator: path.join(dir, 'simulator.json'),
    pid: path.join(dir, 'anvil.pid'),
  }
}

/** JSON with bigints as `{"$bigint": "<decimal>"}` (the snapshot's wei, blocks and timestamps). */
function encode(value: unknown): string {
  return JSON.stringify(value, (_key, v) => (typeof v === 'bigint' ? { $bigint: v.toString() } : v))
}

function decode<T>(text: string): T {
  return JSON.parse(text, (_key, v) =>
    v !== null && typeof v === 'object' && typeof v.$bigint === 'string' && Object.keys(v).length === 1
      ? BigInt(v.$bigint)
      : v,
  ) as T
}

/** What a state directory holds: a resumable pair, nothing, or something that cannot be resumed (and why). */
export type SavedDevnetState =
  | { kind: 'none' }
  | { kind: 'saved'; simulator: SimulatorSnapshot }
  | { kind: 'unusable'; reason: string }

/**
 * Reads a state directory: `saved` when anvil's state and a simulator snapshot of this version and seed are
 * both there, `none` when neither is, `unusable` (with the reason) otherwise. A dump left by an interrupted
 * stop (`anvil-state.next.json`) is removed: it belongs to no snapshot.
 *
 * @example
 * const saved = readDevnetState(devnetStatePaths('data/devnet'), { seed: 1 })
 * if (saved.kind === 'saved') console.log(saved.simulator.nextDay)
 */
export function readDevnetState(
  paths: DevnetStatePaths,
  expected: { seed: number | string; walletCount: number; startDate: string },
): SavedDevnetState {
  rmSync(paths.anvilNext, { force: true })
  const hasAnvil = existsSync(paths.anvil)
  const hasSimulator = existsSync(paths.simulator)
  if (!hasAnvil && !hasSimulator) return { kind: 'none' }
  if (!hasAnvil) return { kind: 'unusable', reason: `${paths.simulator} has no ${paths.anvil} beside it` }
  if (!hasSimulator) return { kind: 'unusable', reason: `${paths.anvil} has no ${paths.simulator} beside it` }
  let simulator: SimulatorSnapshot
  try {
    simulator = decode<SimulatorSnapshot>(readFileSync(paths.simulator, 'utf8'))
  } catch (error) {
    return { kind: 'unusable', reason: `${paths.simulator} is not readable: ${(error as Error).message}` }
  }
  if (simulator.version !== SIMULATOR_STATE_VERSION) {
    return {
      kind: 'unusable',
      reason: `${paths.simulator} is of version ${simulator.version}, this devnet resumes version ${SIMULATOR_STATE_VERSION}`,
    }
  }
  for (const key of ['seed', 'walletCount', 'startDate'] as const) {
    if (simulator[key] !== expected[key]) {
      return {
        kind: 'unusable',
        reason: `${paths.simulator} was made with ${key} ${simulator[key]}, not ${expected[key]}`,
      }
    }
  }
  return { kind: 'saved', simulator }
}

/**
 * Stops the anvil a killed start left running on this state directory (a SIGKILL of `lsreport up` does not
 * reach its child): the process named in `anvil.pid`, killed only when its command line names this directory's
 * dump file (a reused pid is left alone; without /proc nothing is done). Then records `pid`, the new node's
 * (undefined: none yet).
 *
 * @example
 * replaceAnvilPid(devnetStatePaths('data/devnet'), anvil.pid)
 */
export function replaceAnvilPid(paths: DevnetStatePaths, pid: number | undefined): void {
  const previous = existsSync(paths.pid) ? Number(readFileSync(paths.pid, 'utf8').trim()) : undefined
  if (previous && previous !== pid) {
    try {
      const command = readFileSync(`/proc/${previous}/cmdline`, 'utf8')
      if (command.includes(paths.anvilNext)) process.kill(previous, 'SIGKILL')
    } catch {
      // no such process (or no /proc): nothing left to stop
    }
  }
  if (pid === undefined) rmSync(paths.pid, { force: true })
  else {
    mkdirSync(paths.dir, { recursive: true })
    writeFileSync(paths.pid, `${pid}\n`)
  }
}

/**
 * Completes a stop: moves anvil's exit dump in place, then writes the simulator's snapshot (last, through a
 * temporary file: a pair is complete once this file is). Without a dump (anvil did not write one) nothing
 * changes and false is answered.
 *
 * @example
 * commitDevnetState(devnetStatePaths('data/devnet'), simulator.snapshot(head)) // true
 */
export function commitDevnetState(paths: DevnetStatePaths, snapshot: SimulatorSnapshot): boolean {
  if (!existsSync(paths.anvilNext)) return false
  mkdirSync(paths.dir, { recursive: true })
  // the old pair stops being a pair first: a crash between the two renames leaves an unusable, not a wrong, pair
  rmSync(paths.simulator, { force: true })
  renameSync(paths.anvilNext, paths.anvil)
  writeFileSync(`${paths.simulator}.tmp`, `${encode(snapshot)}\n`)
  renameSync(`${paths.simulator}.tmp`, paths.simulator)
  return true
}
