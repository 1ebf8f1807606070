import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { fc, test } from '@fast-check/vitest'
import { describe, expect } from 'vitest'
import { runs } from '../fixtures/property-runs.ts'
import {
  addDaysToDate,
  isoTimestampOf,
  parseDateOnly,
  parseIsoInstantMs,
  parseIsoTimestamp,
  SECONDS_PER_DAY,
  utcDateOf,
} from './dates.ts'
import { InvalidInputError } from './errors.ts'

describe('utcDateOf', () => {
  test('behavior: gives the UTC date of unix seconds, whatever the machine time zone', () => {
    expect(utcDateOf(1_777_593_600)).toBe('2026-05-01')
    expect(utcDateOf(1_777_593_599)).toBe('2026-04-30')
    expect(isoTimestampOf(1_777_593_600)).toBe('2026-05-01T00:00:00Z')
    expect(() => utcDateOf(-1)).toThrow(InvalidInputError)
    expect(() => utcDateOf(1.5)).toThrow(InvalidInputError)
  })
})

describe('parseDateOnly', () => {
  test('behavior: accepts calendar dates only', () => {
    expect(parseDateOnly('2026-05-01')).toBe(1_777_593_600)
    expect(parseDateOnly('2024-02-29')).toBe(1_709_164_800)
    expect(parseDateOnly('1970-01-01')).toBe(0)
    expect(parseDateOnly('9999-12-31')).toBe(253_402_214_400)
    // years the database cannot store (0000) or before any chain data: refused by the one date check
    for (const bad of [
      '2026-02-30',
      '2026-5-1',
      '2026-05-01T00:00:00Z',
      '',
      '20260501',
      '0000-01-01',
      '1969-12-31',
    ]) {
      expect(() => parseDateOnly(bad), bad).toThrow(InvalidInputError)
    }
    expect(addDaysToDate('2026-04-30', 1)).toBe('2026-05-01')
    expect(addDaysToDate('2026-03-01', -1)).toBe('2026-02-28')
  })
})

describe('parseIsoTimestamp', () => {
  test('behavior: needs an explicit zone', () => {
    expect(parseIsoTimestamp('2026-05-01T00:00:00Z')).toBe(1_777_593_600)
    expect(parseIsoTimestamp('2026-05-01T02:00:00+02:00')).toBe(1_777_593_600)
    expect(parseIsoTimestamp('2026-05-01T00:00:00.999Z')).toBe(1_777_593_600)
    expect(() => parseIsoTimestamp('2026-05-01T00:00:00')).toThrow(InvalidInputError)
    expect(() => parseIsoTimestamp('yesterday')).toThrow(InvalidInputError)
  })

  test('edge: a day its month lacks, an offset of 24 hours or more are refused; the fraction is floored exactly', () => {
    // Date.parse reads 2026-02-30 as 2026-03-02
    for (const bad of ['2026-02-30T00:00:00Z', '2025-02-29T12:00:00+01:00', '2026-05-01T00:00:00+24:00']) {
      expect(() => parseIsoInstantMs(bad), bad).toThrow(InvalidInputError)
    }
    expect(parseIsoInstantMs('2024-02-29T12:00:00+01:00')).toBe(Date.UTC(2024, 1, 29, 11))
    // a float reading of the seconds would give 1004 ms, and round .99999999999 up to the next second
    expect(parseIsoInstantMs('1970-01-01T00:00:01.005Z')).toBe(1005)
    expect(parseIsoInstantMs('2026-05-01T00:00:00.99999999999Z')).toBe(1_777_593_600_999)
    expect(parseIsoInstantMs('2026-05-01T00:00:00.5Z')).toBe(1_777_593_600_500)
  })
})

// ---- an independent calendar: integer arithmetic on days since 1970-01-01 (H. Hinnant's civil algorithms)

/** The last day the service names, 9999-12-31, in days since 1970-01-01. */
const LAST_DAY = 2_932_896

/** The proleptic Gregorian `[year, month, day]` of a count of days since 1970-01-01. */
function civilFromDays(days: number): [number, number, number] {
  const z = days + 719_468
  const era = Math.floor(z / 146_097)
  const doe = z - era * 146_097
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1_460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365,
  )
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100))
  const mp = Math.floor((5 * doy + 2) / 153)
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1
  const month = mp < 10 ? mp + 3 : mp - 9
  return [yoe + era * 400 + (month <= 2 ? 1 : 0), month, day]
}

/** Days since 1970-01-01 of a proleptic Gregorian date. */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year
  const era = Math.floor(y / 400)
  const yoe = y - era * 400
  const doy = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy
  return era * 146_097 + doe - 719_468
}

function daysInMonth(year: number, month: number): number {
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
  return [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0')
/** `YYYY-MM-DD` of a count of days since 1970-01-01, by the independent calendar. */
function textOfDay(days: number): string {
  const [y, m, d] = civilFromDays(days)
  return `${pad(y, 4)}-${pad(m)}-${pad(d)}`
}

const arbDay = fc.integer({ min: 0, max: LAST_DAY })

describe('dates against an independent calendar (epoch-day arithmetic)', () => {
  test('behavior: the calendar checked on its known days', () => {
    expect(textOfDay(0)).toBe('1970-01-01')
    expect(textOfDay(LAST_DAY)).toBe('9999-12-31')
    expect(daysFromCivil(2024, 2, 29)).toBe(19_782)
  })

  test.prop([arbDay, fc.integer({ min: 0, max: SECONDS_PER_DAY - 1 })], { numRuns: runs(1_000) })(
    'property: utcDateOf, parseDateOnly and isoTimestampOf agree with the epoch-day calendar',
    (day, second) => {
      const text = textOfDay(day)
      expect(utcDateOf(day * SECONDS_PER_DAY + second)).toBe(text)
      expect(parseDateOnly(text)).toBe(day * SECONDS_PER_DAY)
      const hms = `${pad(Math.floor(second / 3600))}:${pad(Math.floor(second / 60) % 60)}:${pad(second % 60)}`
      expect(isoTimestampOf(day * SECONDS_PER_DAY + second)).toBe(`${text}T${hms}Z`)
    },
  )

  test.prop([arbDay, fc.integer({ min: -4_000, max: 4_000 })], { numRuns: runs(1_000) })(
    'property: addDaysToDate moves by whole epoch days',
    (day, days) => {
      fc.pre(day + days >= 0 && day + days <= LAST_DAY)
      expect(addDaysToDate(textOfDay(day), days)).toBe(textOfDay(day + days))
    },
  )

  test.prop(
    [fc.integer({ min: 1970, max: 9999 }), fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 31 })],
    { numRuns: runs(1_000) },
  )('property: parseDateOnly accepts exactly the days each month has', (year, month, day) => {
    const text = `${pad(year, 4)}-${pad(month)}-${pad(day)}`
    if (day <= daysInMonth(year, month)) {
      expect(parseDateOnly(text)).toBe(daysFromCivil(year, month, day) * SECONDS_PER_DAY)
    } else {
      expect(() => parseDateOnly(text)).toThrow(InvalidInputError)
    }
  })

  test.prop(
    [
      fc.integer({ min: 0, max: LAST_DAY * SECONDS_PER_DAY * 1000 + 86_399_999 }),
      fc.integer({ min: -(23 * 60 + 59), max: 23 * 60 + 59 }),
      fc.stringMatching(/^[0-9]{0,12}$/),
    ],
    { numRuns: runs(1_000) },
  )(
    'property: parseIsoInstantMs reads local time and offset as the epoch arithmetic does',
    (ms, offsetMinutes, extra) => {
      // the instant's wall clock at the offset, written out by the independent calendar
      const localMs = ms + offsetMinutes * 60_000
      const day = Math.floor(localMs / 86_400_000)
      fc.pre(day >= 0 && day <= LAST_DAY)
      const inDay = localMs - day * 86_400_000
      const s = Math.floor(inDay / 1000)
      const time = `${pad(Math.floor(s / 3600))}:${pad(Math.floor(s / 60) % 60)}:${pad(s % 60)}`
      const fraction = `${pad(inDay % 1000, 3)}${extra}`
      const zone =
        offsetMinutes === 0
          ? 'Z'
          : `${offsetMinutes < 0 ? '-' : '+'}${pad(Math.floor(Math.abs(offsetMinutes) / 60))}:${pad(Math.abs(offsetMinutes) % 60)}`
      expect(parseIsoInstantMs(`${textOfDay(day)}T${time}.${fraction}${zone}`)).toBe(ms)
    },
  )
})

// ---- the same answers whatever the process's time zone

const run = promisify(execFile)
const DATES_MODULE = new URL('./dates.ts', import.meta.url).href
const ROOT = fileURLToPath(new URL('..', import.meta.url))

/** Days around Kiritimati's missing 1994-12-31 and St. John's daylight-saving changes of 2026, then others. */
const PROBE_DAYS = [
  ...[-2, -1, 0, 1, 2].map((k) => daysFromCivil(1994, 12, 31) + k),
  ...[-1, 0, 1, 2].map((k) => daysFromCivil(2026, 3, 8) + k),
  ...[-1, 0, 1].map((k) => daysFromCivil(2026, 11, 1) + k),
  0,
  LAST_DAY,
  ...fc.sample(arbDay, { numRuns: 300, seed: 25 }),
]
const SHIFTS = [-400, -2, -1, 1, 2, 400]

/** Runs the date functions in a child Node with TZ set; returns its UTC offset and what they answered. */
async function inTimeZone(tz: string) {
  const script = `
    import fs from 'node:fs'
    const d = await import(${JSON.stringify(DATES_MODULE)})
    const { days, texts, shifts } = JSON.parse(fs.readFileSync(0, 'utf8'))
    const answers = days.map((day, i) => ({
      utcDate: d.utcDateOf(day * 86400 + 43200),
      midnight: d.parseDateOnly(texts[i]),
      shifted: shifts.map((k) => d.addDaysToDate(texts[i], k)),
      instant: d.parseIsoTimestamp(texts[i] + 'T23:30:00+14:00'),
    }))
    process.stdout.write(JSON.stringify({ offset: new Date(0).getTimezoneOffset(), answers }))`
  const child = run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: ROOT,
    env: { ...process.env, TZ: tz },
  })
  child.child.stdin?.end(
    JSON.stringify({ days: PROBE_DAYS, texts: PROBE_DAYS.map(textOfDay), shifts: SHIFTS }),
  )
  const { stdout } = await child
  return JSON.parse(stdout) as {
    offset: number
    answers: { utcDate: string; midnight: number; shifted: string[]; instant: number }[]
  }
}

describe('dates under any TZ', () => {
  test.each([
    ['Pacific/Kiritimati', 10 * 60 + 40], // UTC-10:40 in 1970, UTC+14 since 1995
    ['America/St_Johns', 3 * 60 + 30],
  ])('behavior: in %s the answers are the UTC ones', { timeout: 30_000 }, async (tz, offset) => {
    const { offset: childOffset, answers } = await inTimeZone(tz)
    // the child did run in that zone (its offset at the epoch)
    expect(childOffset).toBe(offset)
    answers.forEach((answer, i) => {
      const day = PROBE_DAYS[i]!
      expect(answer).toEqual({
        utcDate: textOfDay(day),
        midnight: day * SECONDS_PER_DAY,
        shifted: SHIFTS.map((k) =>
          day + k >= 0 && day + k <= LAST_DAY ? textOfDay(day + k) : addDaysToDate(textOfDay(day), k),
        ),
        instant: day * SECONDS_PER_DAY + 9.5 * 3600,
      })
    })
  })
})
