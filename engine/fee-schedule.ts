import { parseIsoTimestamp } from './dates.ts'
import { FeeScheduleError } from './errors.ts'
import { parseUnits18, WEI_PER_ETH } from './units.ts'

/**
 * Effective-dated fee schedules: how the gross fee is split between its recipients. Two models exist:
 * v0 (reports before 2026-05-01T00:00:00Z: dao, provider, slashing coverage, operators, platform) and
 * V3 "Commercials V3" (reports from that instant: lc, tech_provider, operators, platform).
 * Shares are decimal strings with at most 18 fractional digits that sum to exactly 1.
 */

/** The Commercials V3 cutover, 2026-05-01T00:00:00Z, in unix seconds. */
export const V3_CUTOVER_TIMESTAMP = 1_777_593_600
/** The Commercials V3 cutover as an RFC 3339 string. */
export const V3_CUTOVER_ISO = '2026-05-01T00:00:00Z'

/** The two fee models. */
export type FeeModel = 'v0' | 'v3'

/** Parts of a v0 schedule, in the order they are listed everywhere. */
export const V0_FEE_PARTS = ['dao', 'provider', 'slashing_coverage', 'operators', 'platform'] as const
/** Parts of a V3 schedule. */
export const V3_FEE_PARTS = ['lc', 'tech_provider', 'operators', 'platform'] as const

/** A v0 part name. */
export type V0FeePart = (typeof V0_FEE_PARTS)[number]
/** A V3 part name. */
export type V3FeePart = (typeof V3_FEE_PARTS)[number]

/** A v0 fee schedule row. */
export interface FeeScheduleV0 {
  id: string
  model: 'v0'
  /** RFC 3339 instant from which the row applies (compared with the report's block time). */
  effective_from: string
  shares: Record<V0FeePart, string>
  note?: string
}

/** A V3 fee schedule row. */
export interface FeeScheduleV3 {
  id: string
  model: 'v3'
  effective_from: string
  shares: Record<V3FeePart, string>
  note?: string
}

/** A fee schedule row of either model. */
export type FeeSchedule = FeeScheduleV0 | FeeScheduleV3

/**
 * The fee model in force for a report at `timestamp` (unix seconds): v0 before the cutover, V3 from it.
 *
 * @example
 * feeModelAt(1777593599) // 'v0'
 * feeModelAt(1777593600) // 'v3'
 */
export function feeModelAt(timestamp: number): FeeModel {
  return timestamp < V3_CUTOVER_TIMESTAMP ? 'v0' : 'v3'
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * Validates one schedule row from untrusted data (the seed file or the `fee_schedules` table) and returns it
 * typed. Rules: a known model; exactly that model's parts; each share a decimal string in [0, 1] with at most
 * 18 fractional digits; shares summing to exactly 1; a v0 row effective before the cutover, a V3 row at or
 * after it.
 *
 * @example
 * parseFeeSchedule({ id: 'v3', model: 'v3', effective_from: '2026-05-01T00:00:00Z',
 *   shares: { lc: '0.4', tech_provider: '0.1', operators: '0.25', platform: '0.25' } })
 */
export function parseFeeSchedule(value: unknown): FeeSchedule {
  if (!isRecord(value)) throw new FeeScheduleError('fee schedule must be an object')
  const { id, model, effective_from: effectiveFrom, shares, note } = value
  if (typeof id !== 'string' || id === '')
    throw new FeeScheduleError('fee schedule id must be a non-empty string')
  const details = { id }
  if (model !== 'v0' && model !== 'v3') {
    throw new FeeScheduleError('fee schedule model must be v0 or v3', { details: { ...details, model } })
  }
  if (typeof effectiveFrom !== 'string') {
    throw new FeeScheduleError('effective_from must be an RFC 3339 string', { details })
  }
  let from: number
  try {
    from = parseIsoTimestamp(effectiveFrom, 'effective_from')
  } catch (cause) {
    throw new FeeScheduleError('effective_from must be an RFC 3339 timestamp with a zone', { details, cause })
  }
  if (feeModelAt(from) !== model) {
    throw new FeeScheduleError(`a ${model} schedule cannot take effect on that side of the V3 cutover`, {
      details: { ...details, effective_from: effectiveFrom, cutover: V3_CUTOVER_ISO },
    })
  }
  if (!isRecord(shares)) throw new FeeScheduleError('shares must be an object', { details })
  const parts: readonly string[] = model === 'v0' ? V0_FEE_PARTS : V3_FEE_PARTS
  const keys = Object.keys(shares)
  const unknown = keys.filter((key) => !parts.includes(key))
  const missing = parts.filter((part) => !keys.includes(part))
  if (unknown.length > 0 || missing.length > 0) {
    throw new FeeScheduleError('shares must name exactly the parts of the model', {
      details: { ...details, unknown, missing, expected: parts },
    })
  }
  let sum = 0n
  const clean: Record<string, string> = {}
  for (const part of parts) {
    const share = shares[part]
    let units: bigint
    try {
      if (typeof share !== 'string') throw new TypeError('not a string')
      units = parseUnits18(share, `shares.${part}`)
    } catch (cause) {
      throw new FeeScheduleError(`share ${part} must be a decimal string with at most 18 digits`, {
        details: { ...details, part, value: share },
        cause,
      })
    }
    if (units < 0n || units > WEI_PER_ETH) {
      throw new FeeScheduleError(`share ${part} must be between 0 and 1`, {
        details: { ...details, part, share },
      })
    }
    sum += units
    clean[part] = share as string
  }
  if (sum !== WEI_PER_ETH) {
    throw new FeeScheduleError('shares must sum to exactly 1', {
      details: { ...details, sum_units: String(sum) },
    })
  }
  const base = { id, effective_from: effectiveFrom, ...(typeof note === 'string' ? { note } : {}) }
  return model === 'v0'
    ? { ...base, model, shares: clean as Record<V0FeePart, string> }
    : { ...base, model, shares: clean as Record<V3FeePart, string> }
}

/**
 * Validates a list of schedules: either an array of rows or an object `{ schedules: [...] }` (the shape of
 * `fixtures/fee-schedules.json`). Ids must be unique, and two rows of a model may not share an instant.
 * Returns the rows sorted by `effective_from`.
 *
 * @example
 * parseFeeSchedules(JSON.parse(readFileSync('fixtures/fee-schedules.json', 'utf8')))
 */
export function parseFeeSchedules(value: unknown): FeeSchedule[] {
  const rows = isRecord(value) ? value.schedules : value
  if (!Array.isArray(rows))
    throw new FeeScheduleError('fee schedules must be an array or { schedules: [...] }')
  const parsed = rows.map(parseFeeSchedule)
  const ids = new Set<string>()
  const instants = new Set<string>()
  for (const row of parsed) {
    if (ids.has(row.id)) throw new FeeScheduleError('duplicate fee schedule id', { details: { id: row.id } })
    ids.add(row.id)
    const instant = `${row.model}@${parseIsoTimestamp(row.effective_from)}`
    if (instants.has(instant)) {
      throw new FeeScheduleError('two schedules of a model take effect at the same instant', {
        details: { id: row.id, effective_from: row.effective_from },
      })
    }
    instants.add(instant)
  }
  return parsed.sort((a, b) => parseIsoTimestamp(a.effective_from) - parseIsoTimestamp(b.effective_from))
}

/**
 * The schedule in force for a report at `timestamp` (block time, unix seconds): among the rows of the model of
 * that instant (v0 before the cutover, V3 from it), the one with the latest `effective_from` at or before it.
 * Throws `FeeScheduleError` (code FEE_SCHEDULE_MISSING) when none applies.
 *
 * @example
 * selectFeeSchedule(schedules, 1777593600).model // 'v3'
 */
export function selectFeeSchedule(schedules: readonly FeeSchedule[], timestamp: number): FeeSchedule {
  const model = feeModelAt(timestamp)
  let best: FeeSchedule | undefined
  let bestFrom = Number.NEGATIVE_INFINITY
  for (const row of schedules) {
    if (row.model !== model) continue
    const from = parseIsoTimestamp(row.effective_from)
    if (from <= timestamp && from > bestFrom) {
      best = row
      bestFrom = from
    }
  }
  if (!best) {
    throw new FeeScheduleError(`no ${model} fee schedule is in force at that time`, {
      code: 'FEE_SCHEDULE_MISSING',
      details: { timestamp, model },
    })
  }
  return best
}
