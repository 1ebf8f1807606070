import { SAFE_REQUEST_ID } from '../schemas.ts'

/**
 * The response headers the API sends, as OpenAPI header objects: the document's `components.headers`
 * (api/openapi/document.ts references them from every response that carries them). `required` means the
 * answer always has it; test/helpers/openapi-answers.ts holds every answer of the API tests to them.
 */

/** An OpenAPI 3.0 header object. */
export interface HeaderObject {
  description: string
  required: boolean
  schema: Record<string, unknown>
}

const count = { type: 'integer', minimum: 0, maximum: 2_147_483_647 }

/** Every header the document declares, by its name in the document. */
export const HEADERS = {
  'X-Request-Id': {
    description:
      "The request's id: the client's X-Request-Id when safe to echo, else a new UUID. Quote it when reporting a problem.",
    required: true,
    schema: { type: 'string', pattern: SAFE_REQUEST_ID.source },
  },
  'RateLimit-Policy': {
    description:
      'The quota policy of the rate limit (draft-ietf-httpapi-ratelimit-headers): `q` requests per `w` seconds, ' +
      'per client (token subject, else address).',
    required: true,
    schema: { type: 'string', pattern: '^"default";q=[0-9]+;w=[0-9]+$', example: '"default";q=600;w=60' },
  },
  RateLimit: {
    description:
      'What is left of the quota (draft-ietf-httpapi-ratelimit-headers): `r` requests remain, the window ' +
      'restarts in `t` seconds.',
    required: true,
    schema: { type: 'string', pattern: '^"default";r=[0-9]+;t=[0-9]+$', example: '"default";r=598;t=57' },
  },
  'X-RateLimit-Limit': {
    description: 'Legacy form of RateLimit-Policy `q`: requests allowed per window.',
    required: true,
    schema: count,
  },
  'X-RateLimit-Remaining': {
    description: 'Legacy form of RateLimit `r`: requests left in this window.',
    required: true,
    schema: count,
  },
  'X-RateLimit-Reset': {
    description: 'Legacy form of RateLimit `t`: seconds until the window restarts.',
    required: true,
    schema: count,
  },
  'Retry-After': {
    description: 'Seconds to wait before trying again.',
    required: true,
    schema: count,
  },
  'X-Total-Count': {
    description: 'How many items the whole list has (the answer holds one page of them).',
    required: true,
    schema: count,
  },
  ETag: {
    description:
      'The identity of this answer: send it back in If-None-Match to get 304 Not Modified while the report ' +
      'is unchanged. Absent while one of its days is being recomputed (Cache-Control: no-cache then).',
    required: false,
    schema: { type: 'string', pattern: '^"[^"]+"$' },
  },
  'X-Report-Epoch': {
    description: "The consensus epoch of the oracle report of the answer's last day.",
    required: true,
    schema: count,
  },
  'X-Report-Date': {
    description: "The answer's last report date.",
    required: true,
    schema: { type: 'string', format: 'date' },
  },
  'X-Report-Version': {
    description: "The visible version of the last day's report (a restatement makes a new one).",
    required: true,
    schema: { type: 'integer', minimum: 1, maximum: 2_147_483_647 },
  },
  'X-Report-Data-As-Of': {
    description:
      "When the newest of the answer's report versions became visible (the answer's data_as_of): a read " +
      '`as_of` that instant or later answers the same until the next restatement.',
    required: true,
    schema: { type: 'string', format: 'date-time' },
  },
  'X-Fee-Models': {
    description:
      'The fee models of the days the answer covers, comma separated (v0 before 2026-05-01, v3 after).',
    required: true,
    schema: { type: 'string', pattern: '^(v0|v3)(, (v0|v3))*$' },
  },
  Link: {
    description:
      'RFC 8288 links: the same read in the other record version (rel="alternate") when the answer covers ' +
      'both fee models, or the successor of a deprecated operation (rel="successor-version").',
    required: false,
    schema: { type: 'string' },
  },
  Deprecation: {
    description: 'Present on deprecated operations: use the operation in the Link header instead.',
    required: true,
    schema: { type: 'string', enum: ['true'] },
  },
  'X-Projection-Basis': {
    description: 'The case the estimate was decided by (equals `explanation.case`).',
    required: true,
    schema: { type: 'string', enum: ['satisfied', 'buffer', 'exit_queue', 'no_demand'] },
  },
  'Content-Disposition': {
    description: 'With a text/csv answer: the file name to save it under.',
    required: false,
    schema: { type: 'string', pattern: '^attachment; filename="[^"]+\\.csv"$' },
  },
} as const satisfies Record<string, HeaderObject>

/** A header the document declares. */
export type HeaderName = keyof typeof HEADERS

/** The headers of every answer of a rate-limited operation (its 2xx and its 429 alike). */
export const RATE_LIMIT_HEADERS: readonly HeaderName[] = [
  'RateLimit-Policy',
  'RateLimit',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
]

/**
 * The rate limit's headers as a 429 declares them, under the component names `<name>.optional`: there they
 * may be absent (the 429 of the budget of requests refused by authentication, api/auth/plugin.ts, carries
 * only Retry-After).
 */
export const OPTIONAL_RATE_LIMIT_HEADERS: Record<string, HeaderObject> = Object.fromEntries(
  RATE_LIMIT_HEADERS.map((name) => [
    `${name}.optional`,
    {
      ...HEADERS[name],
      required: false,
      description: `${HEADERS[name].description} Absent on the 429 of the budget of requests refused by authentication.`,
    },
  ]),
)

/** The headers of a reporting read (one computed report or a range of them). */
export const REPORT_HEADERS: readonly HeaderName[] = [
  'X-Report-Epoch',
  'X-Report-Date',
  'X-Report-Version',
  'X-Report-Data-As-Of',
  'ETag',
]
