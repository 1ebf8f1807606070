import type { FastifyInstance } from 'fastify'
import type { Repos } from '../../../db/repos/index.ts'
import type { PlatformService } from '../../../platform/service.ts'

/** What the platform routes use: the platform rules, the repositories and the gross protocol fee rate. */
export interface PlatformRouteDeps {
  platform: PlatformService
  repos: Repos
  grossFeeBps: () => Promise<number | undefined>
}

/** The scope hooks (read:platform, write:platform) and OpenAPI tags every platform route shares. */
export function platformRouteOptions(app: FastifyInstance) {
  return {
    read: { onRequest: app.requireScope('read:platform') },
    write: { onRequest: app.requireScope('write:platform') },
    tags: ['platform'],
  }
}
