/**
 * The devnet's simulated calendar: one oracle report per day at a fixed UTC time, user activity in the
 * blocks between two reports, and the beacon-chain epoch of a timestamp (mainnet genesis and slot times).
 */

export const DAY_SECONDS = 86_400
/** Mainnet beacon chain genesis (2020-12-01T12:00:23Z) and epoch length (32 slots of 12 s). */
export const BEACON_GENESIS_TIME = 1_606_824_023n
export const SECONDS_PER_EPOCH = 384n
/**
 * Offsets (seconds after the previous report) of the activity blocks of a day. Two blocks keep the history
 * fast to build: anvil recomputes the state root at every block, so a block costs time in proportion to the
 * state size.
 */
export const ACTIVITY_OFFSETS = [4 * 3600, 14 * 3600] as const

export interface Timeline {
  /** UTC date (YYYY-MM-DD) of the first report (day 0). */
  firstReportDate: string
  /** Seconds after 00:00 UTC at which each day's report block is mined. */
  reportSecondOfDay: number
  /** Genesis block timestamp: the deploy and the initial deposits happen the day before the first report. */
  genesisTimestamp: bigint
  /** Timestamp of the report block of `day` (day -1 is the virtual report before the first day). */
  reportTime(day: number): bigint
  /** UTC date of the report of `day`. */
  dateOf(day: number): string
  /** Timestamps of the activity blocks of `day` (between the reports of day - 1 and day). */
  activityTimes(day: number): bigint[]
  /** Beacon epoch of a timestamp. */
  epochAt(timestamp: bigint): bigint
}

/**
 * @example
 * const timeline = createTimeline('2026-04-01')
 * timeline.reportTime(0) // 1775044800n (2026-04-01T12:00:00Z)
 */
export function createTimeline(firstReportDate: string, reportSecondOfDay = 12 * 3600): Timeline {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(firstReportDate)
  if (!match) throw new Error(`invalid date ${firstReportDate}: expected YYYY-MM-DD`)
  const midnight = Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])) / 1000
  if (Number.isNaN(midnight) || new Date(midnight * 1000).toISOString().slice(0, 10) !== firstReportDate) {
    throw new Error(`invalid date ${firstReportDate}`)
  }
  if (!Number.isInteger(reportSecondOfDay) || reportSecondOfDay < 3600 || reportSecondOfDay >= DAY_SECONDS) {
    throw new Error('reportSecondOfDay must be an integer in [3600, 86400)')
  }
  const firstReport = BigInt(midnight + reportSecondOfDay)
  const reportTime = (day: number) => firstReport + BigInt(day) * BigInt(DAY_SECONDS)
  return {
    firstReportDate,
    reportSecondOfDay,
    genesisTimestamp: reportTime(-1) - 3600n,
    reportTime,
    dateOf: (day) => new Date(Number(reportTime(day)) * 1000).toISOString().slice(0, 10),
    activityTimes: (day) => ACTIVITY_OFFSETS.map((offset) => reportTime(day - 1) + BigInt(offset)),
    epochAt: (timestamp) => (timestamp - BEACON_GENESIS_TIME) / SECONDS_PER_EPOCH,
  }
}
