import type { FastifyInstance } from 'fastify'
import { type ApiContext, buildApp } from './app.ts'

/** Builds the app and listens on HOST:PORT. Returns the app and the address it listens on. */
export async function startServer(ctx: ApiContext): Promise<{ app: FastifyInstance; url: string }> {
  const app = await buildApp(ctx)
  const url = await app.listen({ host: ctx.config.host, port: ctx.config.port })
  return { app, url }
}
