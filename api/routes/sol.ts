import { base58 } from '@scure/base'
import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import type { Repos } from '../../db/repos/index.ts'
import { ImpersonateHeaders } from '../auth/impersonation.ts'
import { caller } from '../auth/plugin.ts'
import { ApiError } from '../errors.ts'
import { errorResponses } from '../schemas.ts'

/**
 * Validates a Solana address: base58 that decodes to exactly 32 bytes. Returns it unchanged.
 *
 * @example
 * validateSolanaAddress('11111111111111111111111111111111') // ok: the system program
 */
export function validateSolanaAddress(address: string): string {
  let bytes: Uint8Array
  try {
    bytes = base58.decode(address)
  } catch {
    throw new ApiError('IR3300', 'address must be base58 (Solana address)')
  }
  if (bytes.length !== 32)
    throw new ApiError('IR3300', `address must decode to 32 bytes (got ${bytes.length})`)
  return address
}

const Permissions = Type.Object({ staking: Type.Boolean(), redemption: Type.Boolean() })
const Entry = Type.Object({ address: Type.String(), allowlisted: Type.Boolean(), permissions: Permissions })

/** GET /sol/v0/allowlist/{address}, POST /sol/v0/allowlist (docs/decisions.md "Solana allowlist"). */
export function solRoutes(app: FastifyInstance, deps: { repos: Repos }) {
  const tags = ['solana']
  app.get(
    '/sol/v0/allowlist/:address',
    {
      onRequest: app.requireScope('read:sol-allowlist'),
      schema: {
        tags,
        summary: 'Check a Solana address',
        params: Type.Object({ address: Type.String({ minLength: 1, maxLength: 64 }) }),
        response: { 200: Entry, ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const { address } = request.params as { address: string }
      validateSolanaAddress(address)
      const row = await deps.repos.solAllowlist.get(address)
      const staking = row?.staking ?? false
      const redemption = row?.redemption ?? false
      return { address, allowlisted: staking || redemption, permissions: { staking, redemption } }
    },
  )

  app.post(
    '/sol/v0/allowlist',
    {
      onRequest: app.requireScope('write:sol-allowlist'),
      schema: {
        tags,
        headers: ImpersonateHeaders,
        summary: 'Add or update a Solana address on the allowlist',
        body: Type.Object({ address: Type.String(), permissions: Permissions }),
        response: {
          200: Type.Object({ ...Entry.properties, created_at: Type.String({ format: 'date-time' }) }),
          ...errorResponses(400, 401, 403),
        },
      },
    },
    async (request) => {
      const body = request.body as { address: string; permissions: { staking: boolean; redemption: boolean } }
      validateSolanaAddress(body.address)
      const row = await deps.repos.solAllowlist.upsert({
        address: body.address,
        staking: body.permissions.staking,
        redemption: body.permissions.redemption,
        orgId: caller(request).orgId,
      })
      return {
        address: row.address,
        allowlisted: row.staking || row.redemption,
        permissions: { staking: row.staking, redemption: row.redemption },
        created_at: row.created_at.toISOString(),
      }
    },
  )
}
