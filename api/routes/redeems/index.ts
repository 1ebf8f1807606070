import type { FastifyInstance } from 'fastify'
import type { Repos } from '../../../db/repos/index.ts'
import { redeemReads } from './reads.ts'
import { redeemV0Routes } from './v0.ts'
import { redeemV1Routes } from './v1.ts'

/**
 * Redemption reads, v1 and v0 (public: docs/decisions.md "Authentication and scopes"), computed by the
 * engine from indexed events; one file per version, their schemas (schemas.ts), query lists (inputs.ts)
 * and the reads they share (reads.ts) beside them.
 */
export function redeemRoutes(app: FastifyInstance, deps: { repos: Repos }) {
  const reads = redeemReads(deps.repos)
  redeemV1Routes(app, reads)
  redeemV0Routes(app, reads)
}
