import { describe, expect, test } from 'vitest'
import type { Price } from '../db/repos/index.ts'
import { derivedPrice } from '../engine/cross-price.ts'
import { formatPrice } from '../engine/index.ts'
import { derivedPriceFieldNames, derivedPriceFields, derivedPriceSchema } from './price-fields.ts'

const ETH_USD_FEED = '0x5f4ec3df9cbd43714fe2740f5e3616155c5b8419'
const EUR_USD_FEED = '0xb49f677943bc038e9857d61e7d053caa2c1734c1'
const ethUsd = {
  feed: ETH_USD_FEED,
  round_id: 110680464442257320000n,
  answer: 300_000_000_000n,
  decimals: 8,
  price_time: new Date('2026-05-10T11:58:47Z'),
}
const eurUsd = {
  feed: EUR_USD_FEED,
  round_id: 110680464442257310000n,
  answer: 108_700_000n,
  decimals: 8,
  price_time: new Date('2026-05-10T09:00:11Z'),
}
const derived: Price = {
  ...ethUsd,
  ...derivedPrice(ethUsd, eurUsd),
  derived_from: { eth_usd: ethUsd, eur_usd: eurUsd },
}

describe('derivedPriceFields', () => {
  test('behavior: a derived EUR price names both prices and the EUR / USD round; its quotient is the price shown', () => {
    expect(derivedPriceFields(derived, 'eur')).toEqual({
      price_eur_derived: true,
      price_eur_eth_usd: '3000',
      price_eur_usd: '1.087',
      price_eur_usd_feed: EUR_USD_FEED,
      price_eur_usd_round_id: '110680464442257310000',
      price_eur_usd_time: '2026-05-10T09:00:11.000Z',
    })
    // the price itself (price_eur, from fiat-view's priceFields) is the 18-decimal quotient
    expect('answer' in derived && formatPrice(derived.answer, derived.decimals)).toBe(
      '2759.889604415823367065',
    )
  })

  test('behavior: a direct, a missing or an old row reads as not derived, with every field present (stable CSV columns)', () => {
    const direct: Price = { ...ethUsd }
    const missing: Price = { feed: null, missing_reason: 'no ETH/EUR feed is configured for chain 560048' }
    for (const price of [direct, missing]) {
      const fields = derivedPriceFields(price, 'eur')
      expect(Object.keys(fields)).toEqual(derivedPriceFieldNames('eur'))
      expect(fields).toEqual({
        price_eur_derived: false,
        price_eur_eth_usd: null,
        price_eur_usd: null,
        price_eur_usd_feed: null,
        price_eur_usd_round_id: null,
        price_eur_usd_time: null,
      })
    }
  })

  test('behavior: USD prices carry no derivation fields', () => {
    expect(derivedPriceFieldNames('usd')).toEqual([])
    expect(derivedPriceFields(derived, 'usd')).toEqual({})
    expect(derivedPriceSchema('usd')).toEqual({})
    expect(Object.keys(derivedPriceSchema('eur'))).toEqual(derivedPriceFieldNames('eur'))
  })
})
