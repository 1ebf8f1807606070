import fc from 'fast-check'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { runs } from '../fixtures/property-runs.ts'
import { PG_ADMIN_URL, postgresAvailable } from '../test/helpers/services.ts'
import { type DbHandle, openDb } from './index.ts'
import { parseTimestamptz, pgTimestamptzParser } from './timestamps.ts'

const pad = (value: number, width = 2) => String(value).padStart(width, '0')

/** A timestamptz in Postgres's text output (DateStyle ISO) for an instant seen at `offsetSeconds` from UTC. */
function postgresText(instant: number, micros: number, offsetSeconds: number): string {
  const local = new Date(instant + offsetSeconds * 1000)
  let text =
    `${pad(local.getUTCFullYear(), 4)}-${pad(local.getUTCMonth() + 1)}-${pad(local.getUTCDate())} ` +
    `${pad(local.getUTCHours())}:${pad(local.getUTCMinutes())}:${pad(local.getUTCSeconds())}`
  const fraction = pad(local.getUTCMilliseconds() * 1000 + micros, 6).replace(/0+$/, '')
  if (fraction !== '') text += `.${fraction}`
  const magnitude = Math.abs(offsetSeconds)
  text += `${offsetSeconds < 0 ? '-' : '+'}${pad(Math.floor(magnitude / 3600))}`
  if (magnitude % 3600 !== 0) text += `:${pad(Math.floor((magnitude % 3600) / 60))}`
  if (magnitude % 60 !== 0) text += `:${pad(magnitude % 60)}`
  return text
}

describe('parseTimestamptz', () => {
  test('property: the same instant as pg-types parser for every timestamptz Postgres can send', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: Date.UTC(100, 0, 2), max: Date.UTC(9999, 11, 30) }),
        fc.integer({ min: 0, max: 999 }),
        fc.oneof(
          fc.integer({ min: -48, max: 56 }).map((quarters) => quarters * 900),
          fc.integer({ min: -12 * 3600, max: 14 * 3600 }),
        ),
        (instant, micros, offsetSeconds) => {
          const text = postgresText(instant, micros, offsetSeconds)
          const parsed = parseTimestamptz(text)
          expect(parsed.getTime(), text).toBe(pgTimestamptzParser(text).getTime())
          expect(parsed.getTime(), text).toBe(instant)
        },
      ),
      { numRuns: runs(20_000) },
    )
  })

  test('edge: every fraction of a second from 1 to 6 digits truncates to milliseconds as pg does', () => {
    for (let digits = 1; digits <= 6; digits++) {
      for (let value = 0; value < 10 ** Math.min(digits, 4); value++) {
        const text = `2026-03-04 05:06:07.${pad(value, digits)}+00`
        expect(parseTimestamptz(text).getTime(), text).toBe(pgTimestamptzParser(text).getTime())
      }
    }
  })

  test('edge: forms outside the fast shape go to the general parser and agree with it', () => {
    for (const text of [
      '0099-01-01 00:00:00+00',
      '0999-12-31 23:59:59.999+00',
      '12026-01-01 00:00:00+00',
      '2026-01-01 00:00:00+00 BC',
      '1900-01-01 00:00:00+00:19:32',
      'infinity',
      '-infinity',
    ]) {
      expect(String(parseTimestamptz(text)), text).toBe(String(pgTimestamptzParser(text)))
    }
  })
})

const pgOk = await postgresAvailable()
const BACKENDS = [
  { name: 'PGlite', available: true, open: () => openDb({}) },
  { name: 'Postgres', available: pgOk, open: () => openDb({ databaseUrl: PG_ADMIN_URL }) },
]

for (const backend of BACKENDS) {
  describe.runIf(backend.available)(`timestamptz read through knex (${backend.name})`, () => {
    let dbh: DbHandle
    beforeAll(async () => {
      dbh = await backend.open()
    })
    afterAll(async () => {
      await dbh?.close()
    })

    test('behavior: every value read equals the epoch Postgres computes, in zones with odd offsets', async () => {
      expect(pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ)).toBe(parseTimestamptz)
      for (const zone of ['UTC', 'Asia/Kolkata', 'America/St_Johns', 'Europe/Amsterdam', 'Pacific/Chatham']) {
        const { rows } = await dbh.db.transaction(async (tx) => {
          await tx.raw(`set local time zone '${zone}'`)
          return tx.raw<{ rows: { at: Date; epoch_ms: string }[] }>(
            `select at, floor(extract(epoch from at) * 1000)::bigint::text as epoch_ms
               from (values (now()), (timestamptz '2026-11-25 20:43:35.123456+00'),
                            (timestamptz '1900-01-01 00:00:00+00'), (timestamptz '2000-02-29 12:00:00.5+00'),
                            (timestamptz '0050-06-01 00:00:00+00')) as v(at)`,
          )
        })
        for (const row of rows) {
          expect(row.at).toBeInstanceOf(Date)
          expect(row.at.getTime(), zone).toBe(Number(row.epoch_ms))
        }
      }
    })
  })
}
