import { type TSchema, Type } from 'typebox'
import type { Price, PriceCurrency } from '../db/repos/index.ts'
import { formatPrice } from '../engine/index.ts'
import { Nullable } from './schemas.ts'

/**
 * The fields that say how a record's EUR price was made (docs/interface.md "Fiat values"): ETH/EUR read from an
 * ETH / EUR feed, or derived as ETH / USD / EUR / USD where none exists (mainnet, the devnet). A derived price
 * shows `price_eur_derived: true`, the two prices it is the quotient of and the EUR / USD round; its
 * `price_eur_feed`, `price_eur_round_id` and `price_eur_time` name its ETH / USD round. Every EUR record carries
 * the fields (null, derived false, when the price is direct or missing), so a CSV's columns do not depend on
 * its rows. USD prices are never derived: they carry none.
 */

/** The derivation fields of a currency's records, in their order (none for USD). */
export function derivedPriceFieldNames(currency: PriceCurrency): string[] {
  if (currency !== 'eur') return []
  const p = `price_${currency}`
  return [`${p}_derived`, `${p}_eth_usd`, `${p}_usd`, `${p}_usd_feed`, `${p}_usd_round_id`, `${p}_usd_time`]
}

/** The response schema of the derivation fields (optional: present only when the currency is asked). */
export function derivedPriceSchema(currency: PriceCurrency): Record<string, TSchema> {
  const [derived, ...rest] = derivedPriceFieldNames(currency)
  if (derived === undefined) return {}
  const out: Record<string, TSchema> = {
    [derived]: Type.Optional(
      Type.Boolean({ description: 'true when the price is ETH/USD over EUR/USD (no ETH/EUR feed)' }),
    ),
  }
  for (const name of rest) out[name] = Type.Optional(Nullable('string'))
  return out
}

/**
 * A record's derivation fields for its stored price in `currency`: for a derived price, true, the ETH / USD
 * and EUR / USD prices (exact decimal strings) and the EUR / USD round (feed, round id, ISO time); otherwise
 * false and nulls (a direct price, a missing one, a row stored before derived prices).
 *
 * @example
 * derivedPriceFields(price, 'eur')
 * // { price_eur_derived: true, price_eur_eth_usd: '3000', price_eur_usd: '1.087', price_eur_usd_feed: '0xb49f…',
 * //   price_eur_usd_round_id: '…', price_eur_usd_time: '2026-05-10T11:59:00.000Z' }
 */
export function derivedPriceFields(
  price: Price,
  currency: PriceCurrency,
): Record<string, string | boolean | null> {
  if (currency !== 'eur') return {}
  const p = `price_${currency}`
  const from = 'derived_from' in price ? price.derived_from : undefined
  if (!from) {
    return Object.fromEntries(
      derivedPriceFieldNames(currency).map((name) => [name, name === `${p}_derived` ? false : null]),
    )
  }
  return {
    [`${p}_derived`]: true,
    [`${p}_eth_usd`]: formatPrice(from.eth_usd.answer, from.eth_usd.decimals),
    [`${p}_usd`]: formatPrice(from.eur_usd.answer, from.eur_usd.decimals),
    [`${p}_usd_feed`]: from.eur_usd.feed,
    [`${p}_usd_round_id`]: from.eur_usd.round_id.toString(),
    [`${p}_usd_time`]: from.eur_usd.price_time.toISOString(),
  }
}
