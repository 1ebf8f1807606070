import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import type { ExportRow, StoredExportSpec } from '../../../db/repos/exports.ts'
import type { Repos } from '../../../db/repos/index.ts'
import { journalAccountNames } from '../../../engine/index.ts'
import { ImpersonateHeaders } from '../../auth/impersonation.ts'
import { caller } from '../../auth/plugin.ts'
import { ApiError } from '../../errors.ts'
import { daySpan, MAX_SUMMARY_DAYS, parseDate } from '../../reporting/dates.ts'
import { errorResponses } from '../../schemas.ts'
import { onlyChain } from '../admin-backfill.ts'
import { downloadRoute } from './download.ts'
import { DEFAULT_LINK_TTL_SECONDS, downloadPath, exportLinkKey } from './link.ts'
import {
  CreateExportBody,
  type CreateExportInput,
  ExportParams,
  ExportQuery,
  ExportSchema,
  exportJson,
} from './schemas.ts'

/** What the export routes use: the repositories and the service's secret (the links' key is derived from it). */
export interface ExportRouteDeps {
  repos: Repos
  /** SIGNING_KEY_SECRET (or the embedded one). */
  secret: () => Promise<Buffer>
}

const tags = ['exports']

/**
 * Exports as jobs (docs/interface.md "Exports"): POST /v1/exports records a request (202, state queued) that a
 * worker builds (jobs/exports); GET /v1/exports/{id} tells its state and progress and, once completed, gives a
 * signed, expiring download link; GET /v1/exports/{id}/download streams the file to whoever holds the link (no
 * Authorization header: a browser or a spreadsheet opens it). Scope read:eth-rewards, the scope of the reward
 * reads whose figures the file holds. Another organization's export answers like an unknown one (404).
 */
export function exportRoutes(app: FastifyInstance, deps: ExportRouteDeps) {
  const { repos } = deps
  const read = { onRequest: app.requireScope('read:eth-rewards') }
  let key: Buffer | undefined
  const linkKey = async () => {
    key ??= exportLinkKey(await deps.secret())
    return key
  }
  const find = async (orgId: string, id: string): Promise<ExportRow> => {
    const row = await repos.exports.get(orgId, id)
    if (!row) throw new ApiError('IR3800', `export ${id} not found`)
    return row
  }

  app.post(
    '/v1/exports',
    {
      ...read,
      schema: {
        tags,
        headers: ImpersonateHeaders,
        summary: 'Ask for an export file (built by a worker; answers 202 at once)',
        description:
          'An organization-wide export (or of the listed accounts) over `from`..`to` (at most 366 days), by ' +
          '`granularity`: `records` (rolled-up records) or `journal` (double-entry lines). Poll the `Location` ' +
          '(GET /v1/exports/{id}) until `state` is completed, then download from its `download_url`; the ' +
          'export.completed webhook event names it when done.',
        security: [{ bearer: [] }],
        body: CreateExportBody,
        response: { 202: ExportSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const body = request.body as CreateExportInput
      const from = parseDate(body.from, 'from')
      const to = parseDate(body.to, 'to')
      if (from > to) throw new ApiError('IR4001', `from ${from} is after to ${to}`)
      if (daySpan(from, to) > MAX_SUMMARY_DAYS) {
        throw new ApiError(
          'IR4001',
          `an export covers at most ${MAX_SUMMARY_DAYS} days (asked ${daySpan(from, to)})`,
        )
      }
      const kind = body.kind
      if (body.journal_accounts && kind !== 'journal') {
        throw new ApiError('IR1000', 'journal_accounts goes with kind journal')
      }
      // an unknown ledger key or an unprintable name: 400 IR1000 (engine/journal.ts)
      if (body.journal_accounts) journalAccountNames(body.journal_accounts)
      const auth = caller(request)
      const accountIds = body.account_ids ? await accountsOf(repos, auth.orgId, body.account_ids) : null
      const spec: StoredExportSpec = {
        accountIds,
        from,
        to,
        granularity: body.granularity ?? 'month',
        currency: body.currency ?? null,
        kind,
        apiVersion: body.api_version ?? 'v1',
        format: 'csv',
        ...(body.journal_accounts ? { journalAccounts: body.journal_accounts } : {}),
      }
      const row = await repos.exports.create({
        id: randomUUID(),
        orgId: auth.orgId,
        chainId: await onlyChain(repos),
        clientId: auth.clientId,
        spec,
      })
      request.log.info({ export_id: row.id, org_id: auth.orgId, kind, from, to }, 'export requested')
      return reply.code(202).header('location', `/v1/exports/${row.id}`).send(exportJson(row))
    },
  )

  app.get(
    '/v1/exports/:id',
    {
      ...read,
      schema: {
        tags,
        headers: ImpersonateHeaders,
        summary: "An export's state and progress; once completed, its signed download link",
        description:
          '`download_url` (completed only) needs no Authorization header and lasts `link_ttl` seconds (default ' +
          "3600, at most 7 days, never past the file's `expires_at`); ask again for a fresh one.",
        security: [{ bearer: [] }],
        params: ExportParams,
        querystring: ExportQuery,
        response: { 200: ExportSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const { id } = request.params as { id: string }
      const { link_ttl: ttl } = request.query as { link_ttl?: number }
      const row = await find(caller(request).orgId, id)
      reply.header('cache-control', 'no-store')
      if (row.state !== 'completed' || !row.expires_at) return exportJson(row)
      const kept = Math.floor(row.expires_at.getTime() / 1000)
      const expires = Math.min(Math.floor(Date.now() / 1000) + (ttl ?? DEFAULT_LINK_TTL_SECONDS), kept)
      const grant = { exportId: row.id, orgId: row.org_id, expires }
      return exportJson(row, { path: downloadPath(await linkKey(), grant), expires })
    },
  )

  downloadRoute(app, { repos, linkKey })
}

/** The organization's accounts among ids or keys (404 IR3000 naming the ones it does not have). */
async function accountsOf(repos: Repos, orgId: string, values: string[]): Promise<string[]> {
  const rows = await repos.reports.accountsByIdsOrKeys(orgId, values)
  const ids = new Set(rows.map((r) => r.id))
  const keys = new Map(rows.map((r) => [r.key, r.id]))
  const found: string[] = []
  const missing: string[] = []
  for (const value of values) {
    const id = ids.has(value.toLowerCase()) ? value.toLowerCase() : keys.get(value)
    if (id) found.push(id)
    else missing.push(value)
  }
  if (missing.length > 0) {
    throw new ApiError(
      'IR3000',
      `account(s) not found in the organization: ${missing.slice(0, 10).join(', ')}`,
    )
  }
  return [...new Set(found)].sort()
}
