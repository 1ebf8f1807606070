import fs from 'node:fs/promises'
import path from 'node:path'
import { buildApp } from '../api/app.ts'
import type { SigningKeys } from '../api/auth/signing-keys.ts'
import { loadConfig } from '../common/config.ts'
import { LsReportError } from '../common/errors.ts'
import { createLogger } from '../common/logger.ts'
import { unconnectedDb } from '../db/unconnected.ts'
import { printJsonLine } from './output.ts'

/** What the document is built without: a reason the refusals below name. */
const PURPOSE = 'the OpenAPI document'

/**
 * Signing keys that refuse every use: building the app takes a key set, serving the document signs and verifies
 * no token.
 */
function refusingKeys(tokenTtlSeconds: number): SigningKeys {
  const refuse = async (): Promise<never> => {
    throw new LsReportError(`${PURPOSE} is built without signing keys`)
  }
  return {
    tokenTtlSeconds,
    current: refuse,
    verificationKey: refuse,
    jwks: refuse,
    keyStatusNow: () => undefined,
    keyStatus: refuse,
  }
}

/**
 * The OpenAPI document the API serves at GET /docs/json, built with no database, no signing key and no
 * network: the app (`buildApp`) is built on a handle that refuses any query, over the configuration `env` makes
 * (only BASE_URL shows in the document: its `servers`), then asked for `app.swagger()`. Deterministic: the same
 * sources and env give the same document.
 *
 * @example
 * const doc = await openApiDocument({ BASE_URL: 'https://reports.example.com' })
 * doc.paths['/oauth/token'].post.operationId // 'createToken'
 */
export async function openApiDocument(
  env: Record<string, string | undefined>,
): Promise<Record<string, unknown>> {
  const config = loadConfig(env)
  const db = unconnectedDb(PURPOSE)
  try {
    const app = await buildApp({
      config,
      logger: createLogger({ level: 'silent' }),
      db,
      signingKeys: refusingKeys(config.tokenTtlSeconds),
    })
    try {
      await app.ready()
      // a copy: the document's objects are @fastify/swagger's cache
      return JSON.parse(JSON.stringify(app.swagger())) as Record<string, unknown>
    } finally {
      await app.close()
    }
  } finally {
    await db.destroy()
  }
}

/** The document as the committed file holds it: JSON indented by two spaces, one newline at the end. */
export function documentText(document: unknown): string {
  return `${JSON.stringify(document, null, 2)}\n`
}

/**
 * `lsreport openapi [--out FILE]`: the document of `openApiDocument(env)`, as one JSON line on stdout or
 * indented into `out`.
 *
 * @example
 * await openApiCommand(process.env, { out: 'clients/typescript/openapi.json' })
 */
export async function openApiCommand(
  env: Record<string, string | undefined>,
  opts: { out?: string },
): Promise<void> {
  const document = await openApiDocument(env)
  if (opts.out === undefined) return printJsonLine(document)
  await fs.mkdir(path.dirname(path.resolve(opts.out)), { recursive: true })
  await fs.writeFile(opts.out, documentText(document))
}
