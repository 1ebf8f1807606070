import knex from 'knex'
import { LsReportError } from '../common/errors.ts'
import type { Db } from './index.ts'

/**
 * A database handle that connects to nothing: every query fails with "`purpose` queries no database". For code
 * that needs a handle to be built but must never use it (`lsreport openapi` builds the API to read its OpenAPI
 * document): a query made anyway fails loudly instead of reaching a server. Close it with `db.destroy()`.
 *
 * @example
 * const db = unconnectedDb('the OpenAPI document')
 * await db('orgs').select() // rejects: "the OpenAPI document queries no database"
 */
export function unconnectedDb(purpose: string): Db {
  return knex({
    client: 'pg',
    connection: async () => {
      throw new LsReportError(`${purpose} queries no database`)
    },
    pool: { min: 0, max: 1 },
    acquireConnectionTimeout: 1_000,
  })
}
