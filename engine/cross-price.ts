import { InvalidInputError } from './errors.ts'

/**
 * ETH's price in a currency without a feed of its own, derived from two Chainlink-shaped answers: ETH / USD
 * divided by the currency's USD price (EUR / USD for ETH / EUR). Exact bigint arithmetic, one rounding.
 */

/** Fractional digits of a derived price's answer (ETH / EUR = ETH / USD / EUR / USD, half-even). */
export const DERIVED_PRICE_DECIMALS = 18

/** A feed's answer: the price is `answer` / 10^`decimals`. */
export interface FeedAnswer {
  answer: bigint
  decimals: number
}

function checked(label: string, { answer, decimals }: FeedAnswer): bigint {
  if (!Number.isSafeInteger(decimals) || decimals < 0 || decimals > 77) {
    throw new InvalidInputError(`${label} decimals must be an integer in [0, 77]`, { details: { decimals } })
  }
  if (answer <= 0n) {
    throw new InvalidInputError(`${label} answer must be positive`, {
      details: { answer: answer.toString() },
    })
  }
  return BigInt(decimals)
}

/**
 * The price of ETH in a currency from ETH's USD price (`ethUsd`) and the currency's USD price (`quoteUsd`):
 * (ethUsd.answer / 10^ethUsd.decimals) / (quoteUsd.answer / 10^quoteUsd.decimals), as an answer with
 * `DERIVED_PRICE_DECIMALS` (18) decimals. The exact quotient is rounded once, ROUND_HALF_EVEN (a tie goes to the
 * even last digit), so derived x quoteUsd is ethUsd within half a unit of the 18th place times quoteUsd. Both
 * answers must be positive (a feed's non-positive answer is a missing price, never divided).
 *
 * @example
 * derivedPrice({ answer: 300_000_000_000n, decimals: 8 }, { answer: 108_700_000n, decimals: 8 })
 * // { answer: 2759889604415823367065n, decimals: 18 } (3,000 USD / 1.087 USD per EUR = 2,759.889604415823367065 EUR)
 * derivedPrice({ answer: 3n, decimals: 0 }, { answer: 2n, decimals: 0 }) // { answer: 1_500_000_000_000_000_000n, decimals: 18 }
 */
export function derivedPrice(ethUsd: FeedAnswer, quoteUsd: FeedAnswer): FeedAnswer {
  const ethDecimals = checked('ETH / USD', ethUsd)
  const quoteDecimals = checked('quote / USD', quoteUsd)
  // answer x 10^18 = (e / 10^de) / (q / 10^dq) x 10^18 = e x 10^(dq + 18) / (q x 10^de): integers, no negative power
  const numerator = ethUsd.answer * 10n ** (quoteDecimals + BigInt(DERIVED_PRICE_DECIMALS))
  const denominator = quoteUsd.answer * 10n ** ethDecimals
  const quotient = numerator / denominator
  const twice = 2n * (numerator % denominator)
  // rounding: ROUND_HALF_EVEN at 18 places (both sides positive)
  const rounded =
    twice > denominator || (twice === denominator && quotient % 2n === 1n) ? quotient + 1n : quotient
  return { answer: rounded, decimals: DERIVED_PRICE_DECIMALS }
}
