import { Type } from 'typebox'
import type { ExportRow } from '../../../db/repos/exports.ts'
import { MAX_REPORT_ITEMS } from '../../reporting/inputs.ts'
import { BoundedInteger, Nullable, StringEnum } from '../../schemas.ts'
import { DATE_PATTERN } from '../admin.ts'
import { MAX_LINK_TTL_SECONDS } from './link.ts'

/** Request and response schemas of the export routes (api/routes/exports/). */

/** The body of POST /v1/exports. */
export const CreateExportBody = Type.Object(
  {
    from: Type.String({ pattern: DATE_PATTERN, description: 'first date (UTC, YYYY-MM-DD), included' }),
    to: Type.String({ pattern: DATE_PATTERN, description: 'last date (UTC), included; at most 366 days' }),
    granularity: Type.Optional(
      StringEnum(['day', 'month', 'quarter', 'year'] as const, {
        description: 'the periods of the file (UTC calendar periods; default month)',
      }),
    ),
    kind: StringEnum(['records', 'journal'] as const, {
      description: "records: the accounts' rolled-up records; journal: double-entry journal lines",
    }),
    format: Type.Optional(StringEnum(['csv'] as const, { description: 'the only format (default csv)' })),
    currency: Type.Optional(StringEnum(['usd', 'eur'] as const, { description: 'fiat values besides ETH' })),
    account_ids: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 256 }), {
        minItems: 1,
        maxItems: MAX_REPORT_ITEMS,
        description: 'account ids or keys of the organization; absent: every account (organization-wide)',
      }),
    ),
    api_version: Type.Optional(
      StringEnum(['v1', 'v0'] as const, {
        description: "whose fields: the /eth/v1 (default) or /eth/v0 reads'",
      }),
    ),
    journal_accounts: Type.Optional(
      Type.Record(
        Type.String({ minLength: 1, maxLength: 64 }),
        Type.String({ minLength: 1, maxLength: 200 }),
        {
          maxProperties: 6,
          description: 'journal only: ledger key -> the account name to print (the rest keep their default)',
        },
      ),
    ),
  },
  { additionalProperties: false },
)

/** The body as validated. */
export interface CreateExportInput {
  from: string
  to: string
  granularity?: 'day' | 'month' | 'quarter' | 'year'
  kind: 'records' | 'journal'
  format?: 'csv'
  currency?: 'usd' | 'eur'
  account_ids?: string[]
  api_version?: 'v1' | 'v0'
  journal_accounts?: Record<string, string>
}

/** The export id path parameter. */
export const ExportParams = Type.Object({ id: Type.String({ format: 'uuid' }) })

/** The query of GET /v1/exports/{id}: how long its download link lasts. */
export const ExportQuery = Type.Object(
  {
    link_ttl: Type.Optional(
      BoundedInteger({
        minimum: 1,
        maximum: MAX_LINK_TTL_SECONDS,
        description: "seconds the download link lasts (default 3600; never past the file's expires_at)",
      }),
    ),
  },
  { additionalProperties: false },
)

/** The query of the download link. */
export const DownloadQuery = Type.Object({
  expires: BoundedInteger({ minimum: 0, maximum: 2 ** 40, description: 'unix seconds the link lasts until' }),
  signature: Type.String({ pattern: '^[A-Za-z0-9_-]{43}$', description: 'HMAC-SHA256, base64url' }),
})

/** An export as GET /v1/exports/{id} (and the 202 of POST) shows it. */
export const ExportSchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  state: StringEnum(['queued', 'running', 'completed', 'failed'] as const),
  kind: StringEnum(['records', 'journal'] as const),
  format: StringEnum(['csv'] as const),
  from: Type.String({ format: 'date' }),
  to: Type.String({ format: 'date' }),
  granularity: Type.String(),
  currency: Nullable('string'),
  api_version: Type.String(),
  account_ids: Type.Union([Type.Array(Type.String()), Type.Null()], {
    description: 'null: organization-wide',
  }),
  progress: Type.Object({
    done: Type.Integer({ minimum: 0 }),
    total: Type.Integer({ minimum: 0 }),
    percent: Type.Number({ minimum: 0, maximum: 100 }),
  }),
  rows: Nullable('integer'),
  bytes: Nullable('integer'),
  sha256: Nullable('string'),
  error: Nullable('string'),
  created_at: Type.String({ format: 'date-time' }),
  completed_at: Nullable('string', { format: 'date-time' }),
  expires_at: Nullable('string', {
    format: 'date-time',
    description: 'when the file (and this export) is deleted: 7 days after it completed or failed',
  }),
  download_url: Nullable('string', {
    description:
      'completed: a signed link (path and query, relative to the service base URL) that needs no ' +
      'Authorization header, valid until download_expires_at',
  }),
  download_expires_at: Nullable('string', { format: 'date-time' }),
  links: Type.Object({ self: Type.String() }),
})

/**
 * An export as the API shows it; `download` is its signed link when it is completed.
 *
 * @example
 * exportJson(row, { path: '/v1/exports/…/download?…', expires: 1767225600 })
 */
export function exportJson(row: ExportRow, download?: { path: string; expires: number }) {
  const done = Number(row.progress_done)
  const total = Number(row.progress_total)
  const completed = row.state === 'completed'
  const percent = completed ? 100 : total > 0 ? Math.min(100, Math.floor((done * 1000) / total) / 10) : 0
  return {
    id: row.id,
    state: row.state,
    kind: row.spec.kind,
    format: row.spec.format,
    from: row.spec.from,
    to: row.spec.to,
    granularity: row.spec.granularity,
    currency: row.spec.currency,
    api_version: row.spec.apiVersion,
    account_ids: row.spec.accountIds,
    progress: { done, total, percent },
    rows: row.rows === null ? null : Number(row.rows),
    bytes: row.bytes === null ? null : Number(row.bytes),
    sha256: row.sha256,
    error: row.error,
    created_at: row.created_at.toISOString(),
    completed_at: row.completed_at?.toISOString() ?? null,
    expires_at: row.expires_at?.toISOString() ?? null,
    download_url: download?.path ?? null,
    download_expires_at: download ? new Date(download.expires * 1000).toISOString() : null,
    links: { self: `/v1/exports/${row.id}` },
  }
}
