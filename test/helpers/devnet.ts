import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { type DevnetHandle, type StartDevnetOptions, startDevnet } from '../../devnet/index.ts'

/** A devnet in its own temporary data directory; `stop()` stops it and removes the directory. */
export interface TestDevnet extends DevnetHandle {
  /** the temporary directory holding devnet.json and the consensus facts (a DATA_DIR for the service) */
  dataDir: string
}

/** Upgrade days that let a history of a few days start on River 0.4.0 and reach 1.2.1 by its fourth report. */
export const SHORT_HISTORY_UPGRADES = { v05Day: 1, v1Day: 2, v12Day: 3 } as const

/**
 * The versioned history (the protocol's versions, as `npm start` runs) compressed for a test's few days: 0.4.0
 * reports on day 0, 0.5.0 on day 1, 1.0.0 with the RedeemManager on day 2, 1.2.1 from day 3 on.
 */
export const SHORT_VERSIONED_HISTORY = { history: 'versioned', upgrades: SHORT_HISTORY_UPGRADES } as const

/**
 * Starts a devnet for a test file in a fresh `lsreport-<name>-*` temporary directory. Call it in `beforeAll`
 * and `await devnet?.stop()` in `afterAll` (after whatever uses the chain has closed). Unless `options.history`
 * says otherwise, the chain runs the current protocol (1.2.1) from the start: the tests of the service's
 * mechanics (allowlisting, faults, webhooks) write to it as it is now; the exactness tests (days, follower,
 * reporting, backfill, redemptions) ask for the versioned history.
 *
 * @example
 * devnet = await startTestDevnet('redeems', { days: 35, walletCount: 60, dayIntervalMs: 0, blockIntervalMs: 100 })
 */
export async function startTestDevnet(
  name: string,
  options: Omit<StartDevnetOptions, 'dataDir'>,
): Promise<TestDevnet> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), `lsreport-${name}-`))
  let devnet: DevnetHandle
  try {
    devnet = await startDevnet({ history: 'current', ...options, dataDir })
  } catch (error) {
    await fs.rm(dataDir, { recursive: true, force: true })
    throw error
  }
  return {
    ...devnet,
    dataDir,
    async stop() {
      try {
        await devnet.stop()
      } finally {
        await fs.rm(dataDir, { recursive: true, force: true })
      }
    },
  }
}
