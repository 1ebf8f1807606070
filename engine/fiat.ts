import { InvalidInputError } from './errors.ts'
import { formatUnits, WEI_PER_ETH } from './units.ts'

/**
 * Fiat values of ETH amounts at an on-chain price (a Chainlink-shaped feed's `answer` with `decimals`
 * decimals, stored beside each report): exact bigint arithmetic, one rounding.
 */

/** Fractional digits of a fiat value. */
export const FIAT_DECIMALS = 8

function checkDecimals(decimals: number): bigint {
  if (!Number.isSafeInteger(decimals) || decimals < 0 || decimals > 77) {
    throw new InvalidInputError('price decimals must be an integer in [0, 77]', {
      details: { decimals },
    })
  }
  return BigInt(decimals)
}

/**
 * The fiat value of `amountWei` at a price of `answer` / 10^`priceDecimals` per ETH, as a decimal string:
 * amount / 10^18 x answer / 10^priceDecimals. The exact product has 18 + priceDecimals fractional digits; it is
 * rounded once, ROUND_HALF_EVEN (a tie goes to the even last digit), to 8 decimal places, and trailing zeros are
 * trimmed as `formatUnits18` trims them. Negative amounts (or answers) round symmetrically: the value of -x is
 * minus the value of x. No float and no decimal.js on the way.
 *
 * @example
 * fiatValue(2_000_000_000_000_000_000n, 312_345_678_901n, 8) // '6246.91357802' (2 ETH at 3,123.45678901)
 * fiatValue(1_500_000_000_000_000_000n, 312_345_678_901n, 8) // '4685.18518352' (4685.185183515: a tie, to even)
 * fiatValue(5_000_000_000n, 100_000_000n, 8) // '0' (0.000000005 is a tie: to the even 0.00000000)
 * fiatValue(15_000_000_000n, 100_000_000n, 8) // '0.00000002' (the tie 0.000000015 goes up to the even 2)
 */
export function fiatValue(amountWei: bigint, answer: bigint, priceDecimals: number): string {
  const decimals = checkDecimals(priceDecimals)
  const product = amountWei * answer
  const negative = product < 0n
  const abs = negative ? -product : product
  // units of 10^-8: the product has 18 + decimals fractional digits, so divide by 10^(18 + decimals - 8)
  const divisor = (WEI_PER_ETH * 10n ** decimals) / 10n ** BigInt(FIAT_DECIMALS)
  const quotient = abs / divisor
  const twice = 2n * (abs % divisor)
  // rounding: ROUND_HALF_EVEN at 8 places, on the magnitude (so the sign rounds symmetrically)
  const rounded = twice > divisor || (twice === divisor && quotient % 2n === 1n) ? quotient + 1n : quotient
  return formatUnits(negative ? -rounded : rounded, FIAT_DECIMALS)
}

/**
 * A feed's price as an exact decimal string: `answer` / 10^`decimals`, trailing zeros trimmed (no rounding).
 *
 * @example
 * formatPrice(312_345_678_901n, 8) // '3123.45678901'
 * formatPrice(300_000_000_000n, 8) // '3000'
 */
export function formatPrice(answer: bigint, decimals: number): string {
  return formatUnits(answer, Number(checkDecimals(decimals)))
}
