import type { Queryable } from '../index.ts'

/** One row of `org_delegations`: `org_id` lets `delegate_org_id` read as it (Impersonate-Org). */
export interface DelegationRow {
  org_id: string
  delegate_org_id: string
  created_by: string
  created_at: Date
}

/** One row of `delegation_changes`: who named or dropped a delegate, and when. */
export interface DelegationChangeRow {
  id: string
  org_id: string
  delegate_org_id: string
  action: 'delegate' | 'undelegate'
  actor: string
  created_at: Date
}

/** One row of `impersonations`: one request read as another organization. */
export interface ImpersonationRow {
  id: string
  org_id: string
  client_id: string
  target_org_id: string
  method: string
  route: string
  request_id: string
  created_at: Date
}

/** What the impersonation rule needs to know about a caller's org and a target org (one query). */
export interface ImpersonationFacts {
  /** the target organization exists */
  targetExists: boolean
  /** the caller's organization is an operator organization */
  callerOperator: boolean
  /** the target organization named the caller's organization a delegate */
  delegated: boolean
}

/** Delegations between organizations, their audit, and the audit of impersonated requests. */
export function createDelegationsRepo(db: Queryable) {
  return {
    /** Names `delegateOrgId` a delegate of `orgId`; false when it already was. */
    async add(input: { orgId: string; delegateOrgId: string; actor: string }): Promise<boolean> {
      const rows = await db('org_delegations')
        .insert({ org_id: input.orgId, delegate_org_id: input.delegateOrgId, created_by: input.actor })
        .onConflict(['org_id', 'delegate_org_id'])
        .ignore()
        .returning('org_id')
      return rows.length > 0
    },
    /** Drops `delegateOrgId` from the delegates of `orgId`; false when it was none. */
    async remove(input: { orgId: string; delegateOrgId: string }): Promise<boolean> {
      const removed = await db('org_delegations')
        .where({ org_id: input.orgId, delegate_org_id: input.delegateOrgId })
        .delete()
      return removed > 0
    },
    /** The delegates `orgId` has named, oldest first. */
    async delegatesOf(orgId: string): Promise<DelegationRow[]> {
      return db<DelegationRow>('org_delegations').where({ org_id: orgId }).orderBy('created_at')
    },
    /** Records one delegation change (the audit of the operator commands). */
    async recordChange(change: {
      orgId: string
      delegateOrgId: string
      action: 'delegate' | 'undelegate'
      actor: string
    }): Promise<void> {
      await db('delegation_changes').insert({
        org_id: change.orgId,
        delegate_org_id: change.delegateOrgId,
        action: change.action,
        actor: change.actor,
      })
    },
    /** The delegation changes of `orgId`, oldest first. */
    async changesOf(orgId: string): Promise<DelegationChangeRow[]> {
      return db<DelegationChangeRow>('delegation_changes').where({ org_id: orgId }).orderBy('id')
    },
    /**
     * Whether the target exists, the caller's org is an operator org, and the target delegated to the
     * caller's org: one query, the same whether or not the target exists.
     */
    async impersonationFacts(callerOrgId: string, targetOrgId: string): Promise<ImpersonationFacts> {
      const result = await db.raw(
        `select exists (select 1 from orgs where id = :target) as target_exists,
           exists (select 1 from orgs where id = :caller and operator) as caller_operator,
           exists (select 1 from org_delegations where org_id = :target and delegate_org_id = :caller)
             as delegated`,
        { target: targetOrgId, caller: callerOrgId },
      )
      const row = (result as { rows: Record<string, boolean>[] }).rows[0]
      return {
        targetExists: row?.target_exists === true,
        callerOperator: row?.caller_operator === true,
        delegated: row?.delegated === true,
      }
    },
    /** Records one impersonated request (one insert). */
    async recordImpersonation(entry: {
      orgId: string
      clientId: string
      targetOrgId: string
      method: string
      route: string
      requestId: string
    }): Promise<void> {
      await db('impersonations').insert({
        org_id: entry.orgId,
        client_id: entry.clientId,
        target_org_id: entry.targetOrgId,
        method: entry.method,
        route: entry.route,
        request_id: entry.requestId,
      })
    },
    /** The impersonated requests made as `targetOrgId`, newest first (at most `limit`). */
    async impersonationsOf(targetOrgId: string, limit = 100): Promise<ImpersonationRow[]> {
      return db<ImpersonationRow>('impersonations')
        .where({ target_org_id: targetOrgId })
        .orderBy('id', 'desc')
        .limit(limit)
    },
  }
}
/** The delegations repository `createDelegationsRepo` returns. */
export type DelegationsRepo = ReturnType<typeof createDelegationsRepo>
