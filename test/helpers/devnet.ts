import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { type DevnetHandle, type StartDevnetOptions, startDevnet } from '../../devnet/index.ts'

/** A devnet in its own temporary data directory; `stop()` stops it and removes the directory. */
export interface TestDevnet extends DevnetHandle {
  /** the temporary directory holding devnet.json and the consensus facts (a DATA_DIR for the service) */
  dataDir: string
}

/**
 * Starts a devnet for a test file in a fresh `lsreport-<name>-*` temporary directory. Call it in `beforeAll`
 * and `await devnet?.stop()` in `afterAll` (after whatever uses the chain has closed).
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
    devnet = await startDevnet({ ...options, dataDir })
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
