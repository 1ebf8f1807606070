import { ValidationError } from '../common/errors.ts'
import type { Db } from '../db/index.ts'
import type { ImpersonationFacts } from '../db/repos/delegations.ts'
import { createRepos, inTransaction, type Repos } from '../db/repos/index.ts'
import type { Actor } from './moves.ts'

/**
 * Impersonation as a delegation (docs/decisions.md "Authentication and scopes"): a client with `impersonate:org` may read
 * as another organization only when that organization exists and either named the client's organization a
 * delegate or the client's organization is an operator organization. Anything else is refused, an unknown
 * organization exactly like a foreign one (nothing tells the two apart).
 *
 * @example
 * impersonationAllowed({ targetExists: true, callerOperator: false, delegated: true }) // true
 * impersonationAllowed({ targetExists: false, callerOperator: true, delegated: false }) // false
 */
export function impersonationAllowed(facts: ImpersonationFacts): boolean {
  return facts.targetExists && (facts.callerOperator || facts.delegated)
}

/**
 * Whether `callerOrgId` may read as `targetOrgId` (one query, the same work for an unknown and a foreign
 * organization). Reading as one's own organization is no impersonation and always allowed.
 *
 * @example
 * if (!(await mayImpersonate(repos, claims.orgId, header))) throw refused()
 */
export async function mayImpersonate(r: Repos, callerOrgId: string, targetOrgId: string): Promise<boolean> {
  if (callerOrgId === targetOrgId) return true
  return impersonationAllowed(await r.delegations.impersonationFacts(callerOrgId, targetOrgId))
}

/** A delegation as the CLI prints it. */
export interface DelegationView {
  org_id: string
  delegate_org_id: string
  /** whether `delegate_org_id` is a delegate of `org_id` now */
  delegated: boolean
  /** whether this command changed it (false: it already was so; no audit row then) */
  changed: boolean
}

/** The operator commands on delegations: each change is recorded (who, when, what) in the same transaction. */
export function createDelegations(db: Db) {
  /** Both organizations exist and differ, else a ValidationError naming the one that does not. */
  async function checkPair(r: Repos, orgId: string, delegateOrgId: string) {
    if (orgId === delegateOrgId) {
      throw new ValidationError('an organization cannot be its own delegate (it reads as itself already)')
    }
    for (const [flag, id] of [
      ['--org', orgId],
      ['--to', delegateOrgId],
    ] as const) {
      if (!(await r.orgs.get(id))) throw new ValidationError(`${flag}: org ${JSON.stringify(id)} not found`)
    }
  }

  return {
    /** `orgId` names `delegateOrgId` a delegate: its `impersonate:org` clients may read as `orgId`. */
    async delegate(orgId: string, delegateOrgId: string, actor: Actor): Promise<DelegationView> {
      return inTransaction(db, async (r) => {
        await checkPair(r, orgId, delegateOrgId)
        const changed = await r.delegations.add({ orgId, delegateOrgId, actor })
        if (changed) await r.delegations.recordChange({ orgId, delegateOrgId, action: 'delegate', actor })
        return { org_id: orgId, delegate_org_id: delegateOrgId, delegated: true, changed }
      })
    },

    /** `orgId` drops `delegateOrgId`: the next impersonated request is refused (no cache in between). */
    async undelegate(orgId: string, delegateOrgId: string, actor: Actor): Promise<DelegationView> {
      return inTransaction(db, async (r) => {
        await checkPair(r, orgId, delegateOrgId)
        const changed = await r.delegations.remove({ orgId, delegateOrgId })
        if (changed) await r.delegations.recordChange({ orgId, delegateOrgId, action: 'undelegate', actor })
        return { org_id: orgId, delegate_org_id: delegateOrgId, delegated: false, changed }
      })
    },

    /** The organizations `orgId` has named delegates, oldest first. */
    async delegatesOf(orgId: string): Promise<string[]> {
      return (await createRepos(db).delegations.delegatesOf(orgId)).map((d) => d.delegate_org_id)
    },
  }
}
