import type { FastifySchemaValidationError } from 'fastify'
import { Type } from 'typebox'
import type { WalletView } from '../db/repos/index.ts'
import type { AccountView } from '../platform/service.ts'
import { ApiError } from './errors.ts'

/**
 * A string of a fixed set, as `enum`: fast-json-stringify writes it as a string (a union of literals would be
 * validated value by value when serialized).
 */
export function StringEnum<const T extends readonly string[]>(
  values: T,
  options: { description?: string } = {},
) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options })
}

/** A value or null, as a type list (not anyOf: serialized without validating each value). */
export function Nullable<T extends 'string' | 'integer'>(
  type: T,
  options: { format?: string; description?: string } = {},
) {
  return Type.Unsafe<(T extends 'string' ? string : number) | null>({ type: [type, 'null'], ...options })
}

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
  status: StringEnum([
    'NOT_READY',
    'ALLOWLISTED',
    'NOT_ALLOWLISTED',
    'PAUSED',
    'PENDING_REMOVAL',
    'REMOVED',
    'DENIED',
  ]),
  status_reason: Nullable('string'),
  created_at: Type.String({ format: 'date-time' }),
})

export const AccountSchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  key: Type.String(),
  org_id: Type.String(),
  status: StringEnum(['ACTIVE', 'PAUSED', 'REMOVED', 'DENIED']),
  created_at: Type.String({ format: 'date-time' }),
  wallets: Type.Array(WalletSchema),
})

/** Wallet (a row, or its view) -> API Wallet. */
export function walletJson(w: WalletView) {
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

// ---------------------------------------------------------------------------------------------------------
// Path parameters of the platform routes: format checks as schema patterns

/** A 0x address as input: `0x` and 40 hex digits of any case (the EIP-55 check happens in `toAddress`). */
export const ADDRESS_PATTERN = '^0x[0-9a-fA-F]{40}$'

/** A UUID of any case (ids of accounts and wallets). */
export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$'

/** An account id or key (a key is any string of 1 to 256 characters). */
const AccountIdOrKey = Type.String({ minLength: 1, maxLength: 256 })

/** `{idOrKey}` of /v0/platform/accounts/{idOrKey}/... */
export const AccountParams = Type.Object({ idOrKey: AccountIdOrKey })

/** `{idOrKey}` and `{idOrAddress}` of the wallet routes under an account (looked up as given). */
export const AccountWalletParams = Type.Object({
  idOrKey: AccountIdOrKey,
  idOrAddress: Type.String({ minLength: 1, maxLength: 64 }),
})

/**
 * `{idOrAddress}` of GET /v0/platform/wallets/{idOrAddress}: a 0x address when it starts with 0x (any case
 * of the x), else a wallet id (UUID). Two rules, each its own `allOf` member so `walletIdOrAddressErrors`
 * tells which failed and gives it its catalog code: a value starting with 0x is an address (IR3101), any
 * other value is a UUID (IR1000). (Not if/then/else, which OpenAPI 3.0 schema objects do not allow.)
 */
export const WalletIdOrAddressParams = Type.Object({
  idOrAddress: Type.String({
    minLength: 1,
    maxLength: 64,
    allOf: [
      { anyOf: [{ pattern: '^(?!0[xX])' }, { pattern: ADDRESS_PATTERN }] },
      { anyOf: [{ pattern: '^0[xX]' }, { pattern: UUID_PATTERN }] },
    ],
    description: 'a wallet id (UUID) or a 0x address',
  }),
})

/**
 * Schema error formatter of the routes taking `WalletIdOrAddressParams`: a malformed 0x address is IR3101, a
 * value that is neither an address nor a UUID IR1000; any other failure reads like Fastify's own message.
 */
export function walletIdOrAddressErrors(errors: FastifySchemaValidationError[], dataVar: string): Error {
  const failed = (rule: number) => errors.some((e) => e.schemaPath.includes(`/idOrAddress/allOf/${rule}/`))
  if (failed(0)) {
    return new ApiError('IR3101', 'idOrAddress must be a wallet id or 0x followed by 40 hexadecimal digits')
  }
  if (failed(1)) return new ApiError('IR1000', 'idOrAddress must be a wallet id (UUID) or a 0x address')
  return new Error(errors.map((e) => `${dataVar}${e.instancePath} ${e.message}`).join(', '))
}

// ---------------------------------------------------------------------------------------------------------
// Input rules shared by every route (registered once by plugins/input-rules.ts; docs/decisions.md "Errors", issue 9)

/** The largest integer any route takes (offsets, ids, chain ids): Postgres `integer` and JS exact. */
export const MAX_INPUT_INTEGER = 2_147_483_647

/** A bounded integer (every integer input has both bounds: plugins/input-rules.ts refuses a route without them). */
export function BoundedInteger(options: { minimum: number; maximum: number; description?: string }) {
  return Type.Integer(options)
}

/** The largest page of a list route (`limit`). */
export const MAX_PAGE = 1000
/** The page size of a list route when `limit` is absent. */
export const DEFAULT_PAGE = 100

/** The `offset` and `limit` query fields every list route takes (oldest first; X-Total-Count gives the total). */
export const PageQueryFields = {
  offset: Type.Optional(BoundedInteger({ minimum: 0, maximum: MAX_INPUT_INTEGER })),
  limit: Type.Optional(BoundedInteger({ minimum: 1, maximum: MAX_PAGE })),
}

/**
 * The page a list request asks for, defaults applied.
 *
 * @example
 * pageOf({ limit: 10 }) // { offset: 0, limit: 10 }
 */
export function pageOf(query: { offset?: number; limit?: number }): { offset: number; limit: number } {
  return { offset: query.offset ?? 0, limit: query.limit ?? DEFAULT_PAGE }
}

/**
 * Answers one page of a list: the total count in `X-Total-Count`, the rows presented by `present`.
 *
 * @example
 * return sendPage(reply, await repos.webhooks.list(orgId, page), webhookJson)
 */
export function sendPage<Row, Shown>(
  reply: { header(name: string, value: string): unknown },
  page: { rows: Row[]; total: number },
  present: (row: Row) => Shown,
): Shown[] {
  reply.header('x-total-count', String(page.total))
  return page.rows.map(present)
}

/**
 * A NUL (Postgres text cannot hold it) or a lone UTF-16 surrogate (not Unicode: it cannot be stored as
 * UTF-8 without being replaced). Valid surrogate pairs (emoji) are fine.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding NUL is the point
const UNSAFE_STRING = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/
/** JSON nesting deeper than this is refused (no route takes more than 3 levels). */
export const MAX_INPUT_DEPTH = 32

/** A quick scan for the characters UNSAFE_STRING looks at: most strings have none of them. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding NUL is the point
const MAYBE_UNSAFE = /[\u0000\ud800-\udfff]/

function unsafeString(text: string): boolean {
  return MAYBE_UNSAFE.test(text) && UNSAFE_STRING.test(text)
}

/**
 * The first problem of a parsed input (params, querystring, headers or body): a string or a property
 * name with a NUL or a lone surrogate, or nesting deeper than MAX_INPUT_DEPTH (which bounds the recursion).
 * Nothing is allocated unless there is a problem.
 *
 * @example
 * unsafeInput({ key: 'a\u0000b' }, 'body') // 'body/key must not contain NUL or lone surrogate characters'
 */
export function unsafeInput(value: unknown, part: string): string | undefined {
  const problem = problemIn(value, 0)
  if (!problem) return undefined
  problem.path.push(part)
  return `${problem.path.reverse().join('/')} ${problem.message}`
}

/** A problem found by `problemIn`: its path from the value found (innermost segment first). */
type InputProblem = { path: string[]; message: string }

/** Depth first, array items in order, an object's property names before its values (the last one first). */
function problemIn(value: unknown, depth: number): InputProblem | undefined {
  if (typeof value === 'string') {
    return unsafeString(value)
      ? { path: [], message: 'must not contain NUL or lone surrogate characters' }
      : undefined
  }
  if (value === null || typeof value !== 'object') return undefined
  if (depth >= MAX_INPUT_DEPTH)
    return { path: [], message: `is nested deeper than ${MAX_INPUT_DEPTH} levels` }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const problem = problemIn(value[i], depth + 1)
      if (problem) {
        problem.path.push(String(i))
        return problem
      }
    }
    return undefined
  }
  const keys = Object.keys(value)
  for (const key of keys) {
    if (unsafeString(key)) {
      return { path: [], message: 'has a property name with NUL or lone surrogate characters' }
    }
  }
  for (let i = keys.length - 1; i >= 0; i--) {
    const key = keys[i] as string
    const problem = problemIn((value as Record<string, unknown>)[key], depth + 1)
    if (problem) {
      problem.path.push(key)
      return problem
    }
  }
  return undefined
}

type JsonSchema = {
  type?: string | string[]
  properties?: Record<string, JsonSchema>
  items?: JsonSchema
  anyOf?: JsonSchema[]
  oneOf?: JsonSchema[]
  allOf?: JsonSchema[]
  const?: unknown
  minimum?: number
  maximum?: number
  exclusiveMinimum?: number
  exclusiveMaximum?: number
}

const INTEGER_TEXT = /^-?[0-9]{1,16}$/
const NUMBER_TEXT = /^-?[0-9]{1,16}(\.[0-9]{1,18})?$/

function typesOf(schema: JsonSchema): string[] {
  if (schema.type !== undefined) return Array.isArray(schema.type) ? schema.type : [schema.type]
  if (schema.const !== undefined) return [typeof schema.const]
  const branches = schema.anyOf ?? schema.oneOf
  return branches ? branches.flatMap(typesOf) : []
}

/**
 * Coerces one query or path value by its schema, strictly: an integer from digits only ("0x1", " 1",
 * "1e3" stay strings and fail validation), a number from a plain decimal, a boolean from "true"/"false",
 * an array from a single value. Where the schema also accepts a string, the string stays.
 */
function coerceValue(value: unknown, schema: JsonSchema): unknown {
  const types = typesOf(schema)
  if (types.includes('array') && !Array.isArray(value)) {
    const items = schema.items ?? schema.anyOf?.find((s) => typesOf(s).includes('array'))?.items
    return [items ? coerceValue(value, items) : value]
  }
  if (typeof value !== 'string' || types.includes('string')) return value
  if (types.includes('integer') && INTEGER_TEXT.test(value)) return Number(value)
  if (types.includes('number') && NUMBER_TEXT.test(value)) return Number(value)
  if (types.includes('boolean') && (value === 'true' || value === 'false')) return value === 'true'
  return value
}

/**
 * Coerces the declared properties of a parsed querystring, params or headers object by the route's schema
 * (in place). Bodies are never coerced: JSON carries its own types (`{"key": 12}` is not a string).
 */
export function coerceBySchema(data: unknown, schema: unknown): void {
  const properties = (schema as JsonSchema | undefined)?.properties
  if (!properties || data === null || typeof data !== 'object') return
  const target = data as Record<string, unknown>
  for (const name in properties) {
    if (target[name] !== undefined) target[name] = coerceValue(target[name], properties[name] as JsonSchema)
  }
}

/**
 * Every integer or number of a request schema without both bounds, as `part/path` (a route declaring one
 * is refused when it is registered: an unbounded integer reaches SQL as out of range, a 500).
 */
export function unboundedNumbers(schema: unknown, at: string): string[] {
  const s = schema as JsonSchema | undefined
  if (!s || typeof s !== 'object') return []
  const out: string[] = []
  const types = s.type === undefined ? [] : Array.isArray(s.type) ? s.type : [s.type]
  if ((types.includes('integer') || types.includes('number')) && s.const === undefined) {
    const low = s.minimum !== undefined || s.exclusiveMinimum !== undefined
    const high = s.maximum !== undefined || s.exclusiveMaximum !== undefined
    if (!low || !high) out.push(at)
  }
  for (const [name, p] of Object.entries(s.properties ?? {}))
    out.push(...unboundedNumbers(p, `${at}/${name}`))
  if (s.items) out.push(...unboundedNumbers(s.items, `${at}/items`))
  for (const branch of [...(s.anyOf ?? []), ...(s.oneOf ?? []), ...(s.allOf ?? [])]) {
    out.push(...unboundedNumbers(branch, at))
  }
  return out
}

/** `x-request-id` values echoed back: at most 128 characters of [A-Za-z0-9._-]; anything else is replaced. */
export const SAFE_REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/
