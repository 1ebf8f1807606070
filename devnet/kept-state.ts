/**
 * A devnet kept in a state directory across restarts (`launchDevnet`'s `stateDir`): what the launch does with
 * the directory (stop a node a killed start left, read the saved pair, start anvil on it, check the restored
 * head) and what `stop()` does with it (save the pair again). The files themselves: persistence.ts.
 */
import { mkdirSync } from 'node:fs'
import type { Logger } from '../common/logger.ts'
import type { createDevnetClients } from './blocks.ts'
import {
  commitDevnetState,
  DevnetStateError,
  type DevnetStatePaths,
  devnetStatePaths,
  readDevnetState,
  replaceAnvilPid,
  type SimulatorSnapshot,
} from './persistence.ts'
import type { Simulator } from './simulator.ts'

/** A state directory opened for a launch: its files, and the simulator's snapshot to resume (none: a new chain). */
export interface KeptState {
  paths: DevnetStatePaths
  resume: SimulatorSnapshot | undefined
}

/**
 * Opens `stateDir` for a launch: stops the anvil a killed start left running on it (it would hold its memory,
 * and dump when stopped), then reads the saved pair. A pair that cannot be resumed throws DevnetStateError.
 *
 * @example
 * const kept = openKeptState('data/devnet', { seed: 1, walletCount: 200, startDate: '2026-04-01' })
 * kept.resume?.nextDay // 95
 */
export function openKeptState(
  stateDir: string,
  expected: { seed: number | string; walletCount: number; startDate: string },
): KeptState {
  const paths = devnetStatePaths(stateDir)
  replaceAnvilPid(paths, undefined)
  const saved = readDevnetState(paths, expected)
  if (saved.kind === 'unusable') {
    throw new DevnetStateError(`the devnet's saved chain cannot be resumed: ${saved.reason}`)
  }
  return { paths, resume: saved.kind === 'saved' ? saved.simulator : undefined }
}

/**
 * anvil's flags of a devnet kept in a state directory (none without one): load the saved state when resuming,
 * dump on exit to the next file (moved in place once the stop completes), with the states of the blocks it
 * keeps, so a follower a few blocks behind at the stop still reads them after the restart.
 *
 * @example
 * keptAnvilArgs(kept) // ['--load-state', 'data/devnet/anvil-state.json', '--dump-state', ...]
 */
export function keptAnvilArgs(kept: KeptState | undefined): string[] {
  if (!kept) return []
  mkdirSync(kept.paths.dir, { recursive: true })
  return [
    ...(kept.resume ? ['--load-state', kept.paths.anvil] : []),
    '--dump-state',
    kept.paths.anvilNext,
    '--preserve-historical-states',
  ]
}

/**
 * The restored chain's head is the block the simulator's snapshot was taken at (same number, same hash), else
 * DevnetStateError; its time is set back to that block's (anvil resumes on the wall clock, which refuses the
 * simulated days' times).
 *
 * @example
 * if (kept?.resume) await assertResumedHead(publicClient, kept.resume.head, kept.paths)
 */
export async function assertResumedHead(
  publicClient: ReturnType<typeof createDevnetClients>['publicClient'],
  head: { number: bigint; hash: string },
  paths: DevnetStatePaths,
): Promise<void> {
  const latest = await publicClient.getBlock({ blockTag: 'latest' })
  if (latest.number !== head.number || latest.hash !== head.hash) {
    throw new DevnetStateError(
      `the devnet's saved chain cannot be resumed: ${paths.anvil} ends at block ${latest.number} (${latest.hash}), ` +
        `${paths.simulator} was saved at block ${head.number} (${head.hash})`,
    )
  }
  await publicClient.request({ method: 'anvil_setTime', params: [Number(latest.timestamp)] } as never)
}

/**
 * The stopped simulator's context and the head it belongs to, to save once anvil has stopped. A simulator
 * stopped by an error may have sent what it did not mine: its context is not saved (undefined, said in a
 * warning; the previous pair stays).
 *
 * @example
 * await simulator.stop()
 * const snapshot = await keptSnapshot(simulator, kept.paths, logger)
 */
export async function keptSnapshot(
  simulator: Simulator,
  paths: DevnetStatePaths,
  logger: Logger | undefined,
): Promise<SimulatorSnapshot | undefined> {
  const failed = simulator.state().error
  if (!failed) return simulator.snapshot()
  logger?.warn({ err: failed, state_dir: paths.dir }, 'devnet chain not saved: the simulator had failed')
  return undefined
}

/**
 * Completes a kept devnet's stop once anvil has exited: commits anvil's dump (`dumped`: anvil exited cleanly)
 * and the simulator's snapshot as the saved pair, logging whether it was saved.
 *
 * @example
 * await anvil.stop()
 * saveKeptState(kept.paths, snapshot, anvil.exitedCleanly(), logger)
 */
export function saveKeptState(
  paths: DevnetStatePaths,
  snapshot: SimulatorSnapshot,
  dumped: boolean,
  logger: Logger | undefined,
): void {
  if (dumped && commitDevnetState(paths, snapshot)) {
    logger?.info(
      { state_dir: paths.dir, head: Number(snapshot.head.number), next_day: snapshot.nextDay },
      'devnet chain saved',
    )
  } else {
    logger?.warn({ state_dir: paths.dir }, 'devnet chain not saved: anvil wrote no state on exit')
  }
}
