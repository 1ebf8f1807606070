import { parse } from 'csv-parse/sync'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { clientToken, http, startTestApi, type TestApi } from './helpers/api.ts'
import { type RewardsDay, seedRewardsDay } from './helpers/rewards-day.ts'

/**
 * `?format=csv` is `Accept: text/csv` on every read the served OpenAPI document answers in CSV (a 200 with
 * `text/csv`): the same status, content type, bytes and ETag, over HTTP, from two apps over one database (one
 * builds the answer asked one way, the other the answer asked the other way). Every such operation declares
 * the `format` query parameter; `?format=json` answers JSON whatever Accept says; any other format is 400.
 */

interface Parameter {
  in: string
  name: string
  description?: string
  schema: { type?: string; enum?: string[] }
}
interface Operation {
  parameters?: Parameter[]
  requestBody?: { content: Record<string, { example?: unknown }> }
  responses: Record<string, { content?: Record<string, unknown> }>
}
/** A CSV read of the document: its key (`METHOD /path`), its method, and a valid request for it. */
interface CsvRead {
  key: string
  method: string
  url: string
  body: unknown
  op: Operation
}

/**
 * A valid request for an operation of the document over the seeded day: path parameters by name and place,
 * the body the document gives as its example with the seeded day's date, accounts and addresses. An operation
 * with a path parameter nothing here fills throws (a new CSV route is added here, never skipped).
 */
function csvRead(key: string, op: Operation, seeded: RewardsDay): CsvRead {
  const [method, path] = key.split(' ') as [string, string]
  const url = path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    if (name === 'date') return seeded.date
    if (name === 'idOrKey' && path.includes('/wallets/{idOrKey}')) return seeded.ownAddresses[0] as string
    if (name === 'idOrKey' && path.includes('/accounts/{idOrKey}')) return seeded.accountKey
    throw new Error(`${key}: no value for the path parameter ${name}`)
  })
  const example = Object.values(op.requestBody?.content ?? {})[0]?.example
  const body =
    example === undefined
      ? undefined
      : {
          ...(example as Record<string, unknown>),
          ...('date' in (example as object) ? { date: seeded.date } : {}),
          ...('accounts' in (example as object) ? { accounts: [seeded.accountKey] } : {}),
          ...('addresses' in (example as object) ? { addresses: seeded.addresses.slice(0, 4) } : {}),
        }
  return { key, method, url, body, op }
}

/** `url` with `query` added. */
function withQuery(url: string, query: string): string {
  return `${url}${url.includes('?') ? '&' : '?'}${query}`
}

describe('?format=csv on every CSV read of the OpenAPI document', () => {
  let built: TestApi
  let other: TestApi
  let seeded: RewardsDay
  let reads: CsvRead[]
  const tokens = new Map<TestApi, string>()

  beforeAll(async () => {
    built = await startTestApi('pglite')
    seeded = await seedRewardsDay(built.dbh.db, { holders: 120, sample: 8 })
    // a second app over the same database: it builds its own answers (nothing kept from the first)
    other = await startTestApi('pglite', {}, { dbh: built.dbh })
    const client = { client_id: seeded.clientId, client_secret: seeded.clientSecret }
    for (const api of [built, other]) tokens.set(api, await clientToken(api.url, client))
    const doc = (await http(built.url)('GET', '/docs/json')).body as {
      paths: Record<string, Record<string, Operation>>
    }
    reads = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops)
        // reads answering JSON or CSV (a file only ever CSV, GET /v1/exports/{id}/download, has no format to choose)
        .filter(([, op]) => {
          const content = op.responses?.['200']?.content
          return content?.['text/csv'] !== undefined && content['application/json'] !== undefined
        })
        .map(([method, op]) => csvRead(`${method.toUpperCase()} ${path}`, op, seeded)),
    )
  }, 300_000)
  afterAll(async () => {
    await other?.close()
    await built?.close()
  })

  /** The answer of `api` to `read` with `query` added and `headers`. */
  function ask(api: TestApi, read: CsvRead, query: string | undefined, headers: Record<string, string> = {}) {
    const url = query === undefined ? read.url : withQuery(read.url, query)
    return http(api.url, tokens.get(api))(read.method, url, read.body, headers)
  }

  test('behavior: the document has CSV reads, GET and POST, and each declares format=json|csv with a description', () => {
    expect(reads.map((r) => r.key)).toEqual(
      expect.arrayContaining([
        'GET /eth/v1/rewards/wallets/{idOrKey}/summary',
        'GET /eth/v1/rewards/accounts/{idOrKey}/summary',
        'POST /eth/v1/rewards/accounts',
        'POST /eth/v1/rewards/wallets',
      ]),
    )
    const lacking = reads.filter((read) => {
      const format = read.op.parameters?.find((p) => p.in === 'query' && p.name === 'format')
      return !(
        format &&
        format.schema.type === 'string' &&
        [...(format.schema.enum ?? [])].sort().join() === 'csv,json' &&
        (format.description ?? '').length > 0
      )
    })
    expect(
      lacking.map((r) => r.key),
      'CSV reads without the format query parameter',
    ).toEqual([])
  })

  test('behavior: ?format=csv answers the bytes and ETag of Accept: text/csv on every CSV read', async () => {
    for (const read of reads) {
      const byQuery = await ask(built, read, 'format=csv')
      const byAccept = await ask(other, read, undefined, { accept: 'text/csv' })
      const label = `${read.key}: ${String(byQuery.body).slice(0, 200)}`
      expect(byQuery.status, label).toBe(200)
      expect(byAccept.status, label).toBe(200)
      expect(byQuery.headers.get('content-type'), label).toMatch(/^text\/csv/)
      expect(byAccept.headers.get('content-type'), label).toBe(byQuery.headers.get('content-type'))
      expect(byQuery.headers.get('content-disposition'), label).toBe(
        byAccept.headers.get('content-disposition'),
      )
      expect(byQuery.headers.get('etag'), label).toMatch(/^"[\w-]{32}"$/)
      expect(byAccept.headers.get('etag'), label).toBe(byQuery.headers.get('etag'))
      expect(byAccept.body, label).toBe(byQuery.body)
      // a CSV parser reads both alike, a header row and at least one record
      const rows = parse(byQuery.body as string, { columns: true }) as Record<string, string>[]
      expect(rows.length, label).toBeGreaterThan(0)
      expect(parse(byAccept.body as string, { columns: true }), label).toEqual(rows)
      // the first app answers Accept: text/csv with what it answered ?format=csv
      const again = await ask(built, read, undefined, { accept: 'text/csv' })
      expect([again.headers.get('etag'), again.body], label).toEqual([
        byQuery.headers.get('etag'),
        byQuery.body,
      ])
    }
  })

  test('behavior: ?format=json answers JSON whatever Accept says, never a kept CSV answer', async () => {
    for (const read of reads) {
      const csv = await ask(built, read, 'format=csv')
      const json = await ask(built, read, 'format=json', { accept: 'text/csv' })
      const plain = await ask(other, read, undefined)
      const label = read.key
      expect(json.status, label).toBe(200)
      expect(json.headers.get('content-type'), label).toMatch(/^application\/json/)
      expect(json.headers.get('content-disposition'), label).toBeNull()
      expect(json.body, label).toEqual(plain.body)
      expect(json.headers.get('etag'), label).toBe(plain.headers.get('etag'))
      expect(json.headers.get('etag'), label).not.toBe(csv.headers.get('etag'))
    }
  })

  test('behavior: an unknown format answers 400 with the catalog body', async () => {
    for (const read of reads) {
      for (const query of ['format=xml', 'format=CSV', 'format=csv&format=json']) {
        const res = await ask(built, read, query, { accept: 'text/csv' })
        expect([res.status, res.body], `${read.key} ${query}`).toEqual([
          400,
          { message: expect.stringContaining('format'), status: 'IR1000' },
        ])
      }
    }
  })
})
