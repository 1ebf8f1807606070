import type { FastifyReply } from 'fastify'
import { Type } from 'typebox'
import type { WalletRecordRow } from '../db/repos/reports.ts'
import { formatUnits18, isOtherModelField, WALLET_AMOUNT_FIELDS, type WalletRecord } from '../engine/index.ts'
import { withFiatSchema } from './fiat-view.ts'
import {
  type PresentedWalletRecord,
  type RecordVersion,
  recordFields,
  type Unit,
  WALLET_AMOUNTS,
} from './record-fields.ts'
import { Nullable } from './schemas.ts'

/**
 * How a stored wallet record is shown: its version's fields in a unit (api/record-fields.ts), the fee-model
 * rule (a period part of the other model is null, engine/fee-model-fields.ts), what is withheld from a reader
 * the wallet does not belong to, and the kept JSON of shared rows (the hot path of the wallet reads).
 */

/** The amount fields an account's `totals` carries in the version and unit. */
export function totalsFields(version: RecordVersion, unit: Unit = 'lseth'): readonly string[] {
  return recordFields(version, unit).filter((f) => WALLET_AMOUNTS.has(f))
}

const NullableString = Nullable('string')
const NOT_NULL: ReadonlySet<string> = new Set(['oracle_report', 'address', 'date', 'fee_model'])

/** Response schema of a wallet reward record of the version and unit (strings; nullable but the keys). */
export function walletRecordSchema(version: RecordVersion, unit: Unit = 'lseth') {
  const properties = Object.fromEntries(
    recordFields(version, unit).map((f) => [f, NOT_NULL.has(f) ? Type.String() : NullableString]),
  )
  return Type.Object(withFiatSchema(properties, WALLET_AMOUNTS))
}

/** Response schema of an account's totals of the version and unit (null: a part of no day's model). */
export function totalsSchema(version: RecordVersion, unit: Unit = 'lseth') {
  const properties = Object.fromEntries(totalsFields(version, unit).map((f) => [f, NullableString]))
  return Type.Object(withFiatSchema(properties, WALLET_AMOUNTS))
}

/**
 * What a reader is not shown of a wallet that is not its own (another organization's, or nobody's): who
 * holds it, its commercial terms, and the two fee parts that would tell whether it is on a platform's list
 * (the platform part, and the DAO / Liquid Collective part that takes the platform share off-platform). Each
 * is null. The other parts (operators, providers, slashing coverage, tech provider) and the fee are shown.
 */
export const WITHHELD_FROM_OTHERS: ReadonlySet<string> = new Set([
  'account_id',
  'org_id',
  'target_fee_rate',
  'discount_rate',
  'rebate_eth',
  'rebate_lseth',
  'total_rebate_eth',
  'total_rebate_lseth',
  'platform_fees_eth',
  'total_platform_fees_eth',
  'platform_fees_at_discount_rate_eth',
  'total_platform_fees_at_discount_rate_eth',
  'period_platform_fees_rate',
  'dao_fees_eth',
  'total_dao_fees_eth',
  'period_dao_fees_rate',
  'lc_fees_eth',
  'total_lc_fees_eth',
  'period_lc_fees_lseth',
  'total_lc_fees_lseth',
  'period_lc_fees_rate',
])

/**
 * A presented record as the reader sees it: whole when the wallet is the reader's own, else with the
 * `WITHHELD_FROM_OTHERS` fields null.
 */
export function asSeenBy(
  presented: PresentedWalletRecord,
  record: Pick<WalletRecord, 'org_id'>,
  orgId: string,
): PresentedWalletRecord {
  return record.org_id === orgId ? presented : withheld(presented)
}

/** A presented record or totals with the `WITHHELD_FROM_OTHERS` fields it has set to null (a copy). */
export function withheld<T extends Record<string, unknown>>(presented: T): T {
  const out: Record<string, unknown> = { ...presented }
  for (const field of Object.keys(out)) if (WITHHELD_FROM_OTHERS.has(field)) out[field] = null
  return out as T
}

/** A stored wallet record as the engine's record (amounts as bigint). */
export function walletRecordOf(row: WalletRecordRow): WalletRecord {
  const record: Record<string, unknown> = { ...row, oracle_report: row.report_epoch }
  for (const field of WALLET_AMOUNT_FIELDS) record[field] = BigInt(row[field])
  return record as unknown as WalletRecord
}

/**
 * `formatUnits18(BigInt(value))` of a stored amount (a decimal integer string as Postgres prints numeric),
 * by moving the decimal point: no bigint, no division. Anything unusual takes the exact path.
 *
 * @example
 * formatStoredUnits18('1500000000000000000') // '1.5'
 * formatStoredUnits18('-1') // '-0.000000000000000001'
 */
export function formatStoredUnits18(value: string): string {
  const negative = value.charCodeAt(0) === 45 // '-'
  const start = negative ? 1 : 0
  const length = value.length - start
  // digits only, no leading zero (as Postgres prints numeric); else the exact path
  let plain = length > 0 && (length === 1 || value.charCodeAt(start) !== 48)
  for (let i = start; plain && i < value.length; i++) {
    const c = value.charCodeAt(i)
    plain = c >= 48 && c <= 57
  }
  if (!plain) return formatUnits18(BigInt(value))
  // the fraction: the last 18 digits without trailing zeros
  let end = value.length
  const fractionStart = Math.max(start, value.length - 18)
  while (end > fractionStart && value.charCodeAt(end - 1) === 48) end--
  const integer = length > 18 ? value.slice(start, value.length - 18) : '0'
  if (end === fractionStart) return integer === '0' ? '0' : negative ? `-${integer}` : integer
  const fraction = value.slice(fractionStart, end).padStart(end - value.length + 18, '0')
  return `${negative ? '-' : ''}${integer}.${fraction}`
}

/** A view of a stored row: version, unit, and whether it is the reader's own wallet. */
type View = `${RecordVersion}:${Unit}:${'own' | 'other'}`

/**
 * A stored wallet record presented for the reading organization in a version and unit: exactly
 * `asSeenBy(presentWalletRecord(walletRecordOf(row), version, unit), row, orgId)` (a property test holds them
 * equal), straight from the stored strings. Rows of computed days are shared (api/report-cache.ts): their
 * presentations are kept beside them.
 */
export function presentStoredWallet(
  row: WalletRecordRow,
  orgId: string,
  version: RecordVersion,
  unit: Unit = 'lseth',
): Readonly<PresentedWalletRecord> {
  const own = row.org_id === orgId
  const view: View = `${version}:${unit}:${own ? 'own' : 'other'}`
  let presented = presentations.get(row)
  const hit = presented?.get(view)
  if (hit) return hit
  const out = presentRow(row, own, version, unit)
  if (!presented) {
    presented = new Map()
    presentations.set(row, presented)
  }
  presented.set(view, out)
  return out
}

/** Presentations of stored rows by view; callers never mutate them. */
const presentations = new WeakMap<WalletRecordRow, Map<View, Readonly<PresentedWalletRecord>>>()

function presentRow(
  row: WalletRecordRow,
  own: boolean,
  version: RecordVersion,
  unit: Unit,
): PresentedWalletRecord {
  const out: PresentedWalletRecord = {}
  for (const field of recordFields(version, unit)) {
    if ((!own && WITHHELD_FROM_OTHERS.has(field)) || isOtherModelField(field, row.fee_model))
      out[field] = null
    else if (field === 'oracle_report') out[field] = row.report_epoch
    else if (WALLET_AMOUNTS.has(field))
      out[field] = formatStoredUnits18(row[field as keyof WalletRecordRow] as string)
    else out[field] = row[field as keyof WalletRecordRow] as string | null
  }
  return out
}

/**
 * Sends stored wallet records presented for the reading org as a JSON array (v1, stored unit): each
 * record's JSON is made once per (row, view) and kept beside the shared row, so a read of computed days
 * serializes nothing. The bytes equal the route's response-schema serialization (the presented object has
 * the schema's fields in its order, every value a string or null).
 */
export function sendStoredWallets(
  reply: FastifyReply,
  rows: readonly WalletRecordRow[],
  orgId: string,
  version: RecordVersion,
) {
  // one record (the single-address read): its one-element array is kept beside the row as well
  if (rows.length === 1) {
    return reply
      .type('application/json; charset=utf-8')
      .send(storedWalletJson(rows[0] as WalletRecordRow, orgId, version, true))
  }
  const parts: Buffer[] = [OPEN_BRACKET]
  for (let i = 0; i < rows.length; i++) {
    if (i > 0) parts.push(COMMA)
    parts.push(storedWalletJson(rows[i] as WalletRecordRow, orgId, version, false))
  }
  parts.push(CLOSE_BRACKET)
  return reply.type('application/json; charset=utf-8').send(Buffer.concat(parts))
}
const OPEN_BRACKET = Buffer.from('[')
const COMMA = Buffer.from(',')
const CLOSE_BRACKET = Buffer.from(']')

/**
 * `JSON.stringify(presentStoredWallet(row, orgId, version))` as UTF-8 (`alone`: inside `[` `]`), kept beside
 * the row.
 */
function storedWalletJson(
  row: WalletRecordRow,
  orgId: string,
  version: RecordVersion,
  alone: boolean,
): Buffer {
  const key = `${version}:${row.org_id === orgId ? 'own' : 'other'}${alone ? '[]' : ''}`
  let json = walletJson.get(row)
  const hit = json?.get(key)
  if (hit) return hit
  // the one-element array wraps the record's own kept bytes: one serialization per (row, version, view)
  const out = alone
    ? Buffer.concat([OPEN_BRACKET, storedWalletJson(row, orgId, version, false), CLOSE_BRACKET])
    : Buffer.from(JSON.stringify(presentStoredWallet(row, orgId, version)))
  if (!json) {
    json = new Map()
    walletJson.set(row, json)
  }
  json.set(key, out)
  return out
}
const walletJson = new WeakMap<WalletRecordRow, Map<string, Buffer>>()
