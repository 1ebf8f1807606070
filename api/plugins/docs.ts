import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'
import { completeDocument, requireOperationDocs } from '../openapi/document.ts'
import { ErrorBodySchema } from '../schemas.ts'

/**
 * The OpenAPI document (GET /docs/json, /docs/yaml) and its browser UI (/docs), with the shared error
 * body schema and the bearer security scheme. Registered before the routes, so it sees every one.
 *
 * @example
 * await registerDocs(app, { baseUrl: 'https://reports.example' })
 */
export async function registerDocs(app: FastifyInstance, { baseUrl }: { baseUrl: string }): Promise<void> {
  app.addSchema(ErrorBodySchema)
  await app.register(swagger, {
    openapi: {
      info: {
        title: 'lsreport',
        version: '0.1.0',
        description:
          'Staking platform integration interface for LsETH: onboarding, redemptions, rewards and fees.',
      },
      servers: [{ url: baseUrl }],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        },
      },
    },
    transformObject: completeDocument,
  })
  await app.register(swaggerUi, { routePrefix: '/docs' })
  requireOperationDocs(app)
}

/**
 * Marks every operation that checks a bearer token with `security: [{ bearer: [] }]` in the OpenAPI
 * document (so /docs, once "Authorize" was given a token, sends it with "Try it out") and names its scope in
 * the description. A route is protected when one of its onRequest hooks was made by `requireScope`: the
 * hooks it makes are remembered here, so call it after the auth plugin and before any route is registered.
 *
 * @example
 * await app.register(authPlugin, options)
 * documentBearerSecurity(app)
 */
export function documentBearerSecurity(app: FastifyInstance): void {
  const scopeOf = new WeakMap<object, string>()
  const requireScope = app.requireScope.bind(app)
  app.requireScope = (scope) => {
    const hook = requireScope(scope)
    scopeOf.set(hook, scope)
    return hook
  }
  app.addHook('onRoute', (route) => {
    const hooks = route.onRequest === undefined ? [] : [route.onRequest].flat()
    const scopes = hooks.flatMap((hook) => scopeOf.get(hook) ?? [])
    if (scopes.length === 0) return
    const needs = `Needs a bearer token with the ${scopes.join(' and ')} scope.`
    const description = route.schema?.description ? `${route.schema.description}\n\n${needs}` : needs
    route.schema = { ...route.schema, description, security: [{ bearer: [] }] }
  })
}
