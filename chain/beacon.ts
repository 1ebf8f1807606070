import fs from 'node:fs/promises'
import { LRUCache } from 'lru-cache'
import { ConsensusUnavailableError } from './errors.ts'

/**
 * The consensus-layer figures the validator exit queue estimate needs (engine `computeExitQueue`), from a
 * Beacon API (`BEACON_URL`) or, on the devnet, from the simulator's consensus facts file. Only the
 * `consensus` job reads them (jobs/consensus.ts); the API reads what it stored (`consensus_snapshots`).
 */

/** Network-wide consensus figures at an epoch. Balances in Gwei (the Beacon API unit). */
export interface ConsensusSnapshot {
  epoch: number
  active_validators: number
  total_active_balance_gwei: bigint
  /** Effective balance of validators that have an exit epoch in the future (queued to exit). */
  queued_exit_balance_gwei: bigint
  /** Validators the withdrawal sweep visits. */
  sweep_eligible_validators: number
  source: 'beacon' | 'devnet'
}

/** Where consensus figures come from. */
export interface ConsensusSource {
  /** The latest figures (cached for a while: they move slowly). */
  snapshot(): Promise<ConsensusSnapshot>
}

const SLOTS_PER_EPOCH = 32
const GWEI_PER_ETH = 1_000_000_000n
const WEI_PER_GWEI = 1_000_000_000n
/** The devnet's facts file in DATA_DIR (written by `startDevnet`; see devnet/README.md). */
export const DEVNET_CONSENSUS_FILE = 'devnet-consensus.json'

/**
 * A source whose snapshot is kept `ttlMs` after it was read (lru-cache of one entry): concurrent callers share
 * one read, and a failed read is not kept.
 */
function cached(ttlMs: number, load: () => Promise<ConsensusSnapshot>): ConsensusSource {
  const cache = new LRUCache<'snapshot', ConsensusSnapshot>({ max: 1, ttl: ttlMs, fetchMethod: load })
  return { snapshot: () => cache.forceFetch('snapshot') }
}

/**
 * A small Beacon API client (standard endpoints only):
 * - `GET /eth/v1/beacon/headers/head` -> slot -> epoch;
 * - `GET /eth/v1/beacon/states/head/committees?epoch=E`: every active validator sits in exactly one committee
 *   per epoch, so the committees' sizes add up to the active validator count (about 10 MB on mainnet, instead
 *   of the full validator list);
 * - `GET /eth/v1/beacon/states/head/validators?status=active_exiting`: validators with a future exit epoch;
 *   their effective balances are the balance queued to exit.
 * Total active balance is estimated as active validators x 32 ETH (a lower bound; exact for the exit churn
 * whenever it clears Electra's 256 ETH cap, i.e. above 16.8 M ETH staked). The sweep is assumed to visit every
 * active validator. Results are cached for `ttlMs` (default 10 minutes).
 *
 * @example
 * const beacon = createBeaconClient({ url: config.beaconUrl })
 * const facts = await beacon.snapshot()
 */
export function createBeaconClient(options: {
  url: string
  ttlMs?: number
  fetch?: typeof fetch
  timeoutMs?: number
}): ConsensusSource {
  const base = options.url.replace(/\/+$/, '')
  const doFetch = options.fetch ?? fetch
  async function get<T>(path: string): Promise<T> {
    let res: Response
    try {
      res = await doFetch(`${base}${path}`, {
        headers: { accept: 'application/json' },
        signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
      })
    } catch (err) {
      throw new ConsensusUnavailableError(`beacon API unreachable: GET ${path}`, { cause: err })
    }
    if (!res.ok) throw new ConsensusUnavailableError(`beacon API answered ${res.status} to GET ${path}`)
    return (await res.json()) as T
  }
  return cached(options.ttlMs ?? 600_000, async () => {
    const head = await get<{ data: { header: { message: { slot: string } } } }>('/eth/v1/beacon/headers/head')
    const slot = Number(head.data?.header?.message?.slot)
    if (!Number.isSafeInteger(slot) || slot < 0) {
      throw new ConsensusUnavailableError('beacon API: head header without a slot')
    }
    const epoch = Math.floor(slot / SLOTS_PER_EPOCH)
    const [committees, exiting] = await Promise.all([
      get<{ data: { validators: string[] }[] }>(`/eth/v1/beacon/states/head/committees?epoch=${epoch}`),
      get<{ data: { validator: { effective_balance: string; exit_epoch: string } }[] }>(
        '/eth/v1/beacon/states/head/validators?status=active_exiting',
      ),
    ])
    const active = committees.data.reduce((n, c) => n + c.validators.length, 0)
    let queued = 0n
    for (const v of exiting.data) {
      if (BigInt(v.validator.exit_epoch) > BigInt(epoch)) queued += BigInt(v.validator.effective_balance)
    }
    return {
      epoch,
      active_validators: active,
      total_active_balance_gwei: BigInt(active) * 32n * GWEI_PER_ETH,
      queued_exit_balance_gwei: queued,
      sweep_eligible_validators: active,
      source: 'beacon',
    }
  })
}

/**
 * The devnet simulator's consensus facts (`$DATA_DIR/devnet-consensus.json`, its `latest` entry): synthetic
 * network-wide figures standing in for a Beacon API. Re-read at most every `ttlMs` (default 2 s).
 *
 * @example
 * const facts = await createDevnetConsensusSource({ file: 'data/devnet-consensus.json' }).snapshot()
 */
export function createDevnetConsensusSource(options: { file: string; ttlMs?: number }): ConsensusSource {
  return cached(options.ttlMs ?? 2_000, async () => {
    let raw: string
    try {
      raw = await fs.readFile(options.file, 'utf8')
    } catch (err) {
      throw new ConsensusUnavailableError(
        `no consensus facts: set BEACON_URL, or run the devnet (it writes ${options.file})`,
        { cause: err },
      )
    }
    const latest = (JSON.parse(raw) as { latest?: Record<string, unknown> }).latest
    if (!latest) throw new ConsensusUnavailableError(`${options.file} has no latest consensus facts yet`)
    const validators = Number(latest.active_validator_count)
    return {
      epoch: Number(latest.epoch),
      active_validators: validators,
      total_active_balance_gwei: BigInt(String(latest.total_active_balance_wei)) / WEI_PER_GWEI,
      queued_exit_balance_gwei: BigInt(String(latest.exit_queue_wei)) / WEI_PER_GWEI,
      sweep_eligible_validators: validators,
      source: 'devnet',
    }
  })
}

/** Where a deployment's consensus figures come from: plain data, kept in the chain setup (jobs/index.ts). */
export type ConsensusOrigin = { beaconUrl: string } | { devnetFile: string }

/**
 * The consensus source of a deployment: the Beacon API at `beaconUrl`, or the devnet's facts file. Read by
 * the `consensus` job (jobs/consensus.ts), which stores the figures for the API.
 *
 * @example
 * createConsensusSource({ beaconUrl: config.beaconUrl })
 * createConsensusSource({ devnetFile: path.join(config.dataDir, DEVNET_CONSENSUS_FILE) })
 */
export function createConsensusSource(origin: ConsensusOrigin): ConsensusSource {
  return 'beaconUrl' in origin
    ? createBeaconClient({ url: origin.beaconUrl })
    : createDevnetConsensusSource({ file: origin.devnetFile })
}
