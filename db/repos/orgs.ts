import { randomUUID } from 'node:crypto'
import type { Queryable } from '../index.ts'

/**
 * One row of `orgs`: an organization (platform), whether it may allowlist wallets, and whether it is an
 * operator organization (its `impersonate:org` clients may read as any organization).
 */
export interface OrgRow {
  id: string
  name: string
  can_allowlist: boolean
  operator: boolean
  created_at: Date
}

/** Organizations (platforms). */
export function createOrgsRepo(db: Queryable) {
  return {
    /** Creates an org with id `org_<uuid without dashes>`. */
    async create(input: { name: string; canAllowlist: boolean; operator?: boolean }): Promise<OrgRow> {
      const [row] = await db<OrgRow>('orgs')
        .insert({
          id: `org_${randomUUID().replaceAll('-', '')}`,
          name: input.name,
          can_allowlist: input.canAllowlist,
          operator: input.operator ?? false,
        })
        .returning('*')
      return row!
    },
    /** The organization with this id, or undefined. */
    async get(id: string): Promise<OrgRow | undefined> {
      return db<OrgRow>('orgs').where({ id }).first()
    },
    /** Every organization, oldest first. */
    async list(): Promise<OrgRow[]> {
      return db<OrgRow>('orgs').orderBy('created_at')
    },
  }
}
/** The organizations repository `createOrgsRepo` returns. */
export type OrgsRepo = ReturnType<typeof createOrgsRepo>
