import type { FastifyInstance } from 'fastify'
import type { Repos } from '../../../db/repos/index.ts'
import { feeContext } from './context.ts'
import { feeV0Routes } from './v0.ts'
import { feeV1Routes } from './v1.ts'

/**
 * Fee records (platform: by the org owning the account; originator: by the org that added the wallet;
 * operators: the day's operator fees split by active validators) and the public protocol record.
 * Platform and originator records are the reading organization's own: other organizations' fees are
 * never shown. One file per version; their schemas (schemas.ts), handlers (handlers.ts), presentation
 * (presenting.ts) and what they share (context.ts) beside them.
 */
export function feeRoutes(app: FastifyInstance, deps: { repos: Repos }) {
  const ctx = feeContext(app, deps)
  feeV1Routes(app, ctx)
  feeV0Routes(app, ctx)
}
