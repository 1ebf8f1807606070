import type { Queryable } from '../index.ts'
import { orgRowStatement } from '../statements.ts'
import { type Page, pageWithTotal } from './page.ts'

/** Lifecycle of an account: ACTIVE, PAUSED, REMOVED, or DENIED (final, set from a chain DENY). */
export type AccountStatus = 'ACTIVE' | 'PAUSED' | 'REMOVED' | 'DENIED'

/** One row of `accounts`: a platform's end customer, keyed per organization. */
export interface AccountRow {
  id: string
  org_id: string
  key: string
  status: AccountStatus
  created_at: Date
  updated_at: Date
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** True when the string is shaped like a UUID (so it may be an account or wallet id). */
export function isUuid(value: string): boolean {
  return UUID_RE.test(value)
}

/** Every column of `accounts` (the fields of AccountRow). */
const ACCOUNT_COLUMNS = 'id, org_id, key, status, created_at, updated_at'
const accountById = orgRowStatement('lsreport_account_by_id', 'accounts', ACCOUNT_COLUMNS, 'id')
const accountByKey = orgRowStatement('lsreport_account_by_key', 'accounts', ACCOUNT_COLUMNS, 'key')

/** Accounts of an org. Every read is scoped to an org: another org's account does not exist. */
export function createAccountsRepo(db: Queryable) {
  return {
    /** Inserts an ACTIVE account and returns its row. */
    async insert(input: { id: string; orgId: string; key: string }): Promise<AccountRow> {
      const [row] = await db<AccountRow>('accounts')
        .insert({ id: input.id, org_id: input.orgId, key: input.key, status: 'ACTIVE' })
        .returning('*')
      return row!
    },
    /** True when the org already has an account with this key. */
    async existsKey(orgId: string, key: string): Promise<boolean> {
      return (await db('accounts').where({ org_id: orgId, key }).first('id')) !== undefined
    },
    /** Resolves `idOrKey` as id first (when it is a UUID), then as key, within the org. */
    async findByIdOrKey(
      orgId: string,
      idOrKey: string,
      options: { forUpdate?: boolean } = {},
    ): Promise<AccountRow | undefined> {
      const find = async (by: 'id' | 'key', value: string): Promise<AccountRow | undefined> => {
        if (options.forUpdate) {
          return db<AccountRow>('accounts')
            .where({ org_id: orgId, [by]: value })
            .forUpdate()
            .first()
        }
        const [row] = await (by === 'id' ? accountById : accountByKey).rows<AccountRow>(db, [orgId, value])
        return row
      }
      if (isUuid(idOrKey)) {
        const byId = await find('id', idOrKey.toLowerCase())
        if (byId) return byId
      }
      // keys are stored NFC-normalized (platform/account-keys.ts): a key typed in another form finds its account
      return find('key', idOrKey.normalize('NFC'))
    },
    /** The org's accounts among `ids` (others' ids are left out), in no set order. */
    async findByIds(orgId: string, ids: string[]): Promise<AccountRow[]> {
      if (ids.length === 0) return []
      return db<AccountRow>('accounts').where({ org_id: orgId }).whereIn('id', ids)
    },
    /** The account with this id in any org, or undefined (for internal callers, not for API reads). */
    async get(id: string): Promise<AccountRow | undefined> {
      return db<AccountRow>('accounts').where({ id }).first()
    },
    /** One page of the org's accounts (oldest first) and how many the org has. */
    async list(orgId: string, page: Page): Promise<{ rows: AccountRow[]; total: number }> {
      return pageWithTotal<AccountRow>(() => db('accounts').where({ org_id: orgId }), page)
    },
    /** Sets the account's status (and updated_at) and returns the updated row. */
    async setStatus(id: string, status: AccountStatus): Promise<AccountRow> {
      const [row] = await db<AccountRow>('accounts')
        .where({ id })
        .update({ status, updated_at: db.fn.now() as unknown as Date })
        .returning('*')
      return row!
    },
  }
}
/** The accounts repository `createAccountsRepo` returns. */
export type AccountsRepo = ReturnType<typeof createAccountsRepo>
