import pg from 'pg'

/** pg's own timestamptz parser (postgres-date): every form Postgres sends, at ~1 µs a value. */
export const pgTimestamptzParser = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ) as (
  text: string,
) => Date

const ZERO = 48
const digit = (text: string, at: number) => text.charCodeAt(at) - ZERO
const twoDigits = (text: string, at: number) => digit(text, at) * 10 + digit(text, at + 1)

/**
 * Parses a timestamptz as Postgres sends it in text (DateStyle ISO): `YYYY-MM-DD HH:MM:SS[.ffffff]±HH[:MM]`
 * by character codes, ~3x faster than pg's general parser; years before 100, offsets with seconds, BC dates
 * and ±infinity go to the general parser. Same Date as pg's parser for every input (property test in
 * db/timestamps.test.ts); a fractional second beyond milliseconds is truncated, as there.
 *
 * A wallet row carries four timestamps: an account of 100 wallets read 400 of them per request, which was
 * ~30 % of that read's server CPU with the general parser.
 */
export function parseTimestamptz(text: string): Date {
  const length = text.length
  if (length < 22 || text.charCodeAt(4) !== 45 || text.charCodeAt(10) !== 32 || text.charCodeAt(0) === ZERO) {
    return pgTimestamptzParser(text)
  }
  let at = 19
  let milliseconds = 0
  if (text.charCodeAt(19) === 46) {
    at = 20
    let scale = 100
    for (; at < length; at++) {
      const d = digit(text, at)
      if (d < 0 || d > 9) break
      if (scale >= 1) milliseconds += d * scale
      scale /= 10
    }
  }
  const sign = text.charCodeAt(at)
  const offsetLength = length - at
  const offsetShape = offsetLength === 3 || (offsetLength === 6 && text.charCodeAt(at + 3) === 58)
  if ((sign !== 43 && sign !== 45) || !offsetShape) return pgTimestamptzParser(text)
  let offsetMinutes = twoDigits(text, at + 1) * 60
  if (offsetLength === 6) offsetMinutes += twoDigits(text, at + 4)
  if (sign === 45) offsetMinutes = -offsetMinutes
  const utc = Date.UTC(
    twoDigits(text, 0) * 100 + twoDigits(text, 2),
    twoDigits(text, 5) - 1,
    twoDigits(text, 8),
    twoDigits(text, 11),
    twoDigits(text, 14),
    twoDigits(text, 17),
    milliseconds,
  )
  return new Date(utc - offsetMinutes * 60_000)
}

/** Registers `parseTimestamptz` with pg (and so with PGlite, which knex reaches through pg). */
export function useFastTimestamps(): void {
  pg.types.setTypeParser(pg.types.builtins.TIMESTAMPTZ, parseTimestamptz)
}
