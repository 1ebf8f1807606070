import { Readable } from 'node:stream'
import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import type { Repos } from '../../../db/repos/index.ts'
import { ApiError } from '../../errors.ts'
import { errorResponses } from '../../schemas.ts'
import { linkSignatureValid } from './link.ts'
import { DownloadQuery, ExportParams } from './schemas.ts'

/**
 * GET /v1/exports/{id}/download: an export's file to whoever holds its signed link (no Authorization header,
 * docs/interface.md "Exports"). The export is looked up by id alone and the signature checked against its own
 * organization, so a link moved to another export (of any organization) is refused like an altered one. The
 * file is streamed from its chunks, a few at a time.
 */
export function downloadRoute(app: FastifyInstance, deps: { repos: Repos; linkKey: () => Promise<Buffer> }) {
  const { repos, linkKey } = deps
  app.get(
    '/v1/exports/:id/download',
    {
      schema: {
        tags: ['exports'],
        summary: "An export's file, through its signed link (no Authorization header)",
        description:
          'The link of GET /v1/exports/{id} `download_url`: 403 IR3801 when its signature does not match the ' +
          'export (altered, or another export), 410 IR3802 once it expired. Streams the CSV with Content-Length, ' +
          'ETag (the sha256) and Content-Disposition: attachment.',
        security: [],
        params: ExportParams,
        querystring: DownloadQuery,
        response: {
          200: {
            description: 'The CSV file (Content-Length; ETag: its sha256)',
            content: { 'text/csv': { schema: Type.String() } },
          },
          ...errorResponses(400, 403, 410),
        },
      },
    },
    async (request, reply) => {
      const { id } = request.params as { id: string }
      const { expires, signature } = request.query as { expires: number; signature: string }
      const row = await repos.exports.byId(id)
      const refused = new ApiError(
        'IR3801',
        'download link refused: its signature does not match this export',
      )
      if (
        !row ||
        !linkSignatureValid(await linkKey(), { exportId: id, orgId: row.org_id, expires }, signature)
      ) {
        throw refused
      }
      if (expires < Date.now() / 1000) {
        throw new ApiError(
          'IR3802',
          `download link expired at ${new Date(expires * 1000).toISOString()}: ask GET /v1/exports/${id} for a new one`,
        )
      }
      if (row.state !== 'completed' || (row.expires_at && row.expires_at.getTime() <= Date.now())) {
        throw new ApiError('IR3802', `export ${id} has no file any more (it is kept 7 days)`)
      }
      const name = `lsreport-${row.spec.kind}-${row.spec.from}-${row.spec.to}-${row.id.slice(0, 8)}.csv`
      return reply
        .header('content-type', 'text/csv; charset=utf-8')
        .header('content-length', String(row.bytes))
        .header('content-disposition', `attachment; filename="${name}"`)
        .header('etag', `"${row.sha256}"`)
        .header('cache-control', 'private, no-cache')
        .send(Readable.from(repos.exports.chunks(row.id), { objectMode: false }))
    },
  )
}
