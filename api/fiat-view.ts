import type { FastifyRequest } from 'fastify'
import { LRUCache } from 'lru-cache'
import { type TSchema, Type } from 'typebox'
import type { Price, ReportPrices } from '../db/repos/index.ts'
import { fiatValue, formatPrice } from '../engine/index.ts'
import { ApiError } from './errors.ts'
import { derivedPriceFieldNames, derivedPriceFields, derivedPriceSchema } from './price-fields.ts'
import { Nullable, StringEnum } from './schemas.ts'

/**
 * Fiat values on the reporting reads (README "For finance"): with `?currency=usd|eur`, every period amount and
 * balance of a record gains a `<name>_usd` / `<name>_eur` value (its ETH amount x the ETH price stored beside
 * its report, `engine/fiat.ts`: exact, rounded once half-even to 8 places) and the record names the price it
 * used (`price_usd`, its feed, round and time). Running totals (`total_*`) gain none: their fiat value would
 * re-price old flows at a later price. A summary's totals and periods in fiat follow the stock/flow rule
 * (api/routes/rewards/rollup-presenting.ts): a flow's value is the sum of its days', a balance's its value at
 * that date's price. A day without a price answers null values and `price_<currency>_missing_reason`, never 0.
 */

/** A fiat currency of the reads. */
export type Currency = 'usd' | 'eur'
const CURRENCIES: readonly Currency[] = ['usd', 'eur']

/** The `currency` query parameter. */
export const CurrencyQuery = {
  currency: Type.Optional(
    StringEnum(['usd', 'eur'], {
      description:
        'add the fiat value of every period amount and balance (<name>_usd / <name>_eur) at the on-chain ETH ' +
        'price stored beside each report (price_<currency>: its feed, round and time), half-even to 8 places',
    }),
  ),
}

/** The request's `currency` (undefined: none asked). */
export function currencyOf(request: FastifyRequest): Currency | undefined {
  const value = (request.query as Record<string, unknown> | undefined)?.currency
  if (value === undefined) return undefined
  if (value === 'usd' || value === 'eur') return value
  throw new ApiError('IR1000', `currency must be usd or eur (got ${JSON.stringify(value)})`)
}

/** The stored ETH amount a field's fiat value is made from, if any (`mints_lseth` -> `mints_eth`). */
function sourceOf(field: string, sources: ReadonlySet<string>): string | undefined {
  if (field.startsWith('total_')) return undefined
  const source = field.endsWith('_lseth') ? field.replace(/_lseth$/, '_eth') : field
  return source.endsWith('_eth') && sources.has(source) ? source : undefined
}

/** A record shape's fiat fields: fiat name -> (stored ETH source, the shown field it values). */
type FiatPairs = ReadonlyMap<string, { source: string; field: string }>
/** `fiatPairs` by shape (fields, sources, currency): every record of a read has the same one. */
const pairsOfShape = new LRUCache<string, { sources: ReadonlySet<string>; pairs: FiatPairs }[]>({
  max: 1_000,
})

/**
 * The fiat fields of a record's fields in a currency: (name, source amount), in order, each once. Worked out
 * once per record shape (a read presents many records of few shapes).
 */
function fiatPairs(fields: readonly string[], sources: ReadonlySet<string>, currency: Currency): FiatPairs {
  const key = `${currency}|${fields.join(',')}`
  const known = pairsOfShape.get(key)
  const hit = known?.find((k) => k.sources === sources)
  if (hit) return hit.pairs
  const pairs = pairsFor(fields, sources, currency)
  pairsOfShape.set(key, [...(known ?? []), { sources, pairs }])
  return pairs
}

function pairsFor(fields: readonly string[], sources: ReadonlySet<string>, currency: Currency): FiatPairs {
  const pairs = new Map<string, { source: string; field: string }>()
  for (const field of fields) {
    const source = sourceOf(field, sources)
    if (source === undefined) continue
    const name = source.replace(/_eth$/, `_${currency}`)
    if (!pairs.has(name)) pairs.set(name, { source, field })
  }
  return pairs
}

/** The price fields a record carries with its fiat values. */
function priceFieldNames(currency: Currency): string[] {
  const p = `price_${currency}`
  return [
    p,
    `${p}_feed`,
    `${p}_round_id`,
    `${p}_time`,
    `${p}_missing_reason`,
    ...derivedPriceFieldNames(currency),
  ]
}

/**
 * A record schema's properties with the optional fiat fields of both currencies (present only when asked):
 * `properties` are the record's, `sources` the stored ETH amounts fiat values can be made from.
 */
export function withFiatSchema(
  properties: Record<string, TSchema>,
  sources: ReadonlySet<string>,
): Record<string, TSchema> {
  const out: Record<string, TSchema> = { ...properties }
  for (const currency of CURRENCIES) {
    for (const name of fiatPairs(Object.keys(properties), sources, currency).keys()) {
      out[name] = Type.Optional(Nullable('string'))
    }
    for (const name of priceFieldNames(currency)) out[name] = Type.Optional(Nullable('string'))
    Object.assign(out, derivedPriceSchema(currency))
  }
  return out
}

/** A record's fields followed by its fiat fields in `currency` (none asked: the fields): the CSV header. */
export function fieldsWithFiat(
  fields: readonly string[],
  sources: ReadonlySet<string>,
  currency: Currency | undefined,
): readonly string[] {
  if (currency === undefined) return fields
  return [...fields, ...fiatPairs(fields, sources, currency).keys(), ...priceFieldNames(currency)]
}

/** The price fields of a record (all null but the reason when the price is missing). */
function priceFields(price: Price, currency: Currency): Record<string, string | boolean | null> {
  const [p, feed, round, time, reason] = priceFieldNames(currency) as [string, string, string, string, string]
  const derived = derivedPriceFields(price, currency)
  if (!('answer' in price)) {
    return {
      [p]: null,
      [feed]: price.feed,
      [round]: null,
      [time]: null,
      [reason]: price.missing_reason,
      ...derived,
    }
  }
  return {
    [p]: formatPrice(price.answer, price.decimals),
    [feed]: price.feed,
    [round]: price.round_id.toString(),
    [time]: price.price_time.toISOString(),
    [reason]: null,
    ...derived,
  }
}

/** The missing price of a report whose prices were never stored (ingested before prices were read). */
const NOT_STORED: Price = { feed: null, missing_reason: 'no price is stored for this report' }

/** A report's price in a currency. */
export function priceIn(prices: ReportPrices | undefined, currency: Currency): Price {
  return prices?.[currency] ?? NOT_STORED
}

/**
 * A presented record with its fiat values in `currency` appended: each period amount or balance shown (not
 * null) valued at `price` from `amount(source)` (wei), and the price fields.
 */
export function withFiat<T extends Record<string, unknown>>(
  presented: T,
  amount: (source: string) => bigint | undefined,
  sources: ReadonlySet<string>,
  price: Price,
  currency: Currency,
): T & Record<string, string | boolean | null> {
  const out: Record<string, unknown> = { ...presented }
  for (const [name, { source, field }] of fiatPairs(Object.keys(presented), sources, currency)) {
    const wei = amount(source)
    out[name] =
      presented[field] === null || wei === undefined || !('answer' in price)
        ? null
        : fiatValue(wei, price.answer, price.decimals)
  }
  Object.assign(out, priceFields(price, currency))
  return out as T & Record<string, string | boolean | null>
}
