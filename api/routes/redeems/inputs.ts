import { toAddress as normalizeAddress } from '../../../common/address.ts'
import { ApiError } from '../../errors.ts'
import { MAX_REQUEST_ID } from './schemas.ts'

/** At most this many ids per GET /eth/v1/redeems (docs/decisions.md "Limits"). */
export const MAX_REDEEM_IDS = 500

/**
 * A comma-separated query list (`ids`, `owner`): items trimmed; an empty item ("1,,2", a trailing comma) is
 * refused, never skipped; more than MAX_REDEEM_IDS items: 400 IR1006.
 */
function parseList(value: string, field: string, what: string): string[] {
  const items = value.split(',').map((i) => i.trim())
  if (items.some((i) => i === '')) {
    throw new ApiError('IR1000', `${field} must be a comma-separated list of ${what} without empty items`)
  }
  if (items.length > MAX_REDEEM_IDS) {
    throw new ApiError('IR1006', `${field} lists more than ${MAX_REDEEM_IDS} ${what}`)
  }
  return items
}

/**
 * The `owner` query list as checksummed addresses (undefined: not given).
 *
 * @example
 * parseOwners('0xAb…, 0xcd…') // ['0xAb…', '0xCd…']
 */
export function parseOwners(owner: string | undefined): string[] | undefined {
  if (owner === undefined) return undefined
  return parseList(owner, 'owner', '0x addresses').map((o) => normalizeAddress(o, 'owner'))
}

/**
 * The `ids` query list as uint32 request ids (undefined: not given); anything else: 400 IR1000.
 *
 * @example
 * parseIds('1,2') // [1, 2]
 */
export function parseIds(ids: string | undefined): number[] | undefined {
  if (ids === undefined) return undefined
  return parseList(ids, 'ids', 'redeem request ids').map((p) => {
    if (!/^\d{1,10}$/.test(p) || Number(p) > MAX_REQUEST_ID) {
      throw new ApiError(
        'IR1000',
        `ids must be integers from 0 to ${MAX_REQUEST_ID} (got ${JSON.stringify(p)})`,
      )
    }
    return Number(p)
  })
}
