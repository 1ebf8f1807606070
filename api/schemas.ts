import { Type } from 'typebox'
import type { WalletRow } from '../db/repos/index.ts'
import type { AccountView } from '../platform/service.ts'

/** `{message, status}`: the body of every non-2xx response. */
export const ErrorBodySchema = Type.Object(
  { message: Type.String(), status: Type.String({ pattern: '^IR[0-9]{4}$' }) },
  { $id: 'ErrorBody' },
)

export const WalletSchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  account_id: Type.String({ format: 'uuid' }),
  address: Type.String(),
  type: Type.String(),
  allowlisted: Type.Boolean(),
  on_platform: Type.Boolean(),
  originator_org_id: Type.String(),
  status: Type.Union(
    ['NOT_READY', 'ALLOWLISTED', 'NOT_ALLOWLISTED', 'PAUSED', 'PENDING_REMOVAL', 'REMOVED', 'DENIED'].map(
      (s) => Type.Literal(s),
    ),
  ),
  status_reason: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String({ format: 'date-time' }),
})

export const AccountSchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  key: Type.String(),
  org_id: Type.String(),
  status: Type.Union(['ACTIVE', 'PAUSED', 'REMOVED', 'DENIED'].map((s) => Type.Literal(s))),
  created_at: Type.String({ format: 'date-time' }),
  wallets: Type.Array(WalletSchema),
})

/** Wallet row -> API Wallet. */
export function walletJson(w: WalletRow) {
  return {
    id: w.id,
    account_id: w.account_id,
    address: w.address,
    type: w.type,
    allowlisted: w.allowlisted,
    on_platform: w.on_platform,
    originator_org_id: w.originator_org_id,
    status: w.status,
    status_reason: w.status_reason,
    created_at: w.created_at.toISOString(),
  }
}

/** Account (with wallets) -> API Account. */
export function accountJson(a: AccountView) {
  return {
    id: a.id,
    key: a.key,
    org_id: a.org_id,
    status: a.status,
    created_at: a.created_at.toISOString(),
    wallets: a.wallets.map(walletJson),
  }
}

/** Standard error responses for a route's schema (documented in OpenAPI). */
export function errorResponses(...codes: number[]) {
  return Object.fromEntries(codes.map((c) => [c, ErrorBodySchema]))
}

/** `true`/`false` as JSON booleans or the strings "true"/"false" (the guides send strings). */
export const BooleanLike = Type.Union([Type.Boolean(), Type.Literal('true'), Type.Literal('false')])

/** Reads a BooleanLike value. */
export function toBool(value: boolean | 'true' | 'false' | undefined, fallback: boolean): boolean {
  if (value === undefined) return fallback
  return value === true || value === 'true'
}
