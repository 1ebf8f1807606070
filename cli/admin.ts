import fs from 'node:fs/promises'
import path from 'node:path'
import { CLIENT_STATUS_TTL_MS } from '../api/auth/revocation.ts'
import { parseScopes, SCOPES, type Scope } from '../api/auth/scopes.ts'
import { hashSecret, newClientCredentials } from '../api/auth/secrets.ts'
import { toAddress } from '../common/address.ts'
import { DEFAULT_TENANT_LIMITS, type TenantLimits } from '../common/config.ts'
import { ValidationError } from '../common/errors.ts'
import type { Db } from '../db/index.ts'
import { createRepos, type OrgRow } from '../db/repos/index.ts'
import { createDelegations } from '../platform/delegations.ts'
import { createPlatformService } from '../platform/service.ts'

/** Org as the CLI prints it. */
export function orgJson(org: OrgRow) {
  return {
    id: org.id,
    name: org.name,
    can_allowlist: org.can_allowlist,
    operator: org.operator,
    created_at: org.created_at.toISOString(),
  }
}

/** `lsreport orgs create`; `operator`: its `impersonate:org` clients may read as any organization. */
export async function createOrg(db: Db, input: { name: string; canAllowlist: boolean; operator?: boolean }) {
  if (input.name.trim() === '') throw new ValidationError('--name must not be empty')
  return orgJson(
    await createRepos(db).orgs.create({
      name: input.name.trim(),
      canAllowlist: input.canAllowlist,
      operator: input.operator ?? false,
    }),
  )
}

/**
 * `lsreport orgs delegate`: `orgId` names `delegateOrgId` a delegate (its `impersonate:org` clients may read
 * as `orgId`); recorded with actor 'operator'. Idempotent (`changed` false when it already was).
 */
export async function delegateOrg(db: Db, input: { orgId: string; delegateOrgId: string }) {
  return createDelegations(db).delegate(input.orgId, input.delegateOrgId, 'operator')
}

/** `lsreport orgs undelegate`: the next impersonated request of `delegateOrgId` as `orgId` is refused. */
export async function undelegateOrg(db: Db, input: { orgId: string; delegateOrgId: string }) {
  return createDelegations(db).undelegate(input.orgId, input.delegateOrgId, 'operator')
}

/**
 * `lsreport clients create`: the secret is returned once and stored only as a scrypt hash. Refused past the
 * organization's MAX_CLIENTS_PER_ORG live clients (`limits`, default DEFAULT_TENANT_LIMITS).
 */
export async function createClient(
  db: Db,
  input: { orgId: string; scopes: string; name?: string },
  limits: Pick<TenantLimits, 'clientsPerOrg'> = DEFAULT_TENANT_LIMITS,
) {
  const repos = createRepos(db)
  const org = await repos.orgs.get(input.orgId)
  if (!org) throw new ValidationError(`org ${input.orgId} not found`)
  const { scopes, unknown } = parseScopes(input.scopes)
  if (unknown.length > 0) {
    throw new ValidationError(`unknown scope(s): ${unknown.join(' ')} (known: ${SCOPES.join(' ')})`)
  }
  if (scopes.length === 0) throw new ValidationError('--scopes must name at least one scope')
  const { clientId, clientSecret } = newClientCredentials()
  await repos.clients.create({
    id: clientId,
    orgId: org.id,
    name: input.name ?? `${org.name} client`,
    scopes,
    secretHash: await hashSecret(clientSecret),
    limit: limits.clientsPerOrg,
  })
  return { client_id: clientId, client_secret: clientSecret, scopes: scopes.join(' '), org_id: org.id }
}

/**
 * `lsreport clients add-secret`: another secret for rotation (the old ones work until revoked with
 * `revokeOldClientSecrets` or with the client). Refused past MAX_SECRETS_PER_CLIENT live secrets (`limits`).
 */
export async function addClientSecret(
  db: Db,
  clientId: string,
  limits: Pick<TenantLimits, 'secretsPerClient'> = DEFAULT_TENANT_LIMITS,
) {
  const { clientSecret } = newClientCredentials()
  const added = await createRepos(db).clients.addSecret(
    clientId,
    await hashSecret(clientSecret),
    limits.secretsPerClient,
  )
  if (!added) throw new ValidationError(`client ${clientId} not found or revoked`)
  return { client_id: clientId, client_secret: clientSecret }
}

/**
 * `lsreport clients revoke-old-secrets`: the end of a rotation, every live secret of the client but the newest
 * is revoked (no new token with them; tokens issued before stay valid until they expire).
 */
export async function revokeOldClientSecrets(db: Db, clientId: string) {
  const repos = createRepos(db)
  const client = await repos.clients.get(clientId)
  if (!client || client.revoked_at !== null)
    throw new ValidationError(`client ${clientId} not found or revoked`)
  return { client_id: clientId, secrets_revoked: await repos.clients.revokeOlderSecrets(clientId) }
}

/**
 * `lsreport clients revoke`: no new token from now on, and the client's existing tokens are refused by every
 * running API within `CLIENT_STATUS_TTL_MS` (each request checks its client's status, cached that long).
 */
export async function revokeClient(db: Db, clientId: string) {
  if (!(await createRepos(db).clients.revoke(clientId)))
    throw new ValidationError(`client ${clientId} not found or already revoked`)
  return {
    client_id: clientId,
    revoked: true,
    existing_tokens_refused_within_seconds: CLIENT_STATUS_TTL_MS / 1000,
  }
}

/** `lsreport accounts deny`: operator command, DENIED is final for the platform. */
export async function denyAccount(db: Db, input: { orgId: string; account: string; reason?: string }) {
  const view = await createPlatformService(db).transitionAccount(
    input.orgId,
    input.account,
    'deny',
    'operator',
  )
  return { id: view.id, key: view.key, org_id: view.org_id, status: view.status }
}

/**
 * The demo client's scopes: the platform's, never `admin` or `impersonate:org` (docs/decisions.md "Authentication and
 * scopes": operators and impersonation are separate clients, made with `lsreport clients create`).
 */
export const DEMO_SCOPES = SCOPES.filter((s): s is Exclude<Scope, 'admin' | 'impersonate:org'> => {
  return s !== 'admin' && s !== 'impersonate:org'
})

export interface DemoClient {
  org_id: string
  client_id: string
  client_secret: string
  scopes: string
  token_url: string
  audience: string
  /** the demo account (key) and its wallets, when the embedded devnet supplied some */
  account?: { key: string; wallets: string[] }
}

/** What the demo account holds: LsETH holders of the devnet, registered to the demo organization. */
export interface DemoAccount {
  key: string
  wallets: readonly string[]
}

/**
 * Ensures the demo org and client of the embedded mode exist (their credentials live in
 * `$DATA_DIR/demo-client.json`, the only copy of the secret) and, given `account`, that the org has that
 * account with those wallets (Allowlist wallets: the allowlist job sends their permissions on chain).
 * Idempotent: an existing client, account or wallet is kept as it is.
 */
export async function ensureDemoClient(
  db: Db,
  options: { dataDir: string; baseUrl: string; authUrl: string; account?: DemoAccount },
) {
  const file = path.join(options.dataDir, 'demo-client.json')
  const repos = createRepos(db)
  let demo: DemoClient | undefined
  let demoOrgId: string | undefined
  let created = false
  try {
    const saved = JSON.parse(await fs.readFile(file, 'utf8')) as DemoClient
    const client = await repos.clients.get(saved.client_id)
    if (client && client.revoked_at === null) {
      // a demo client made before the demo held platform scopes only (it held admin and impersonate:org):
      // revoked, and a new one made for the same organization
      if (client.scopes.split(' ').every((s) => (DEMO_SCOPES as readonly string[]).includes(s))) demo = saved
      else {
        await repos.clients.revoke(client.id)
        demoOrgId = client.org_id
      }
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT' && !(err instanceof SyntaxError)) throw err
  }
  if (!demo) {
    const org = demoOrgId
      ? { id: demoOrgId }
      : await createOrg(db, { name: 'Demo Platform', canAllowlist: true })
    const client = await createClient(db, {
      orgId: org.id,
      scopes: DEMO_SCOPES.join(' '),
      name: 'demo client',
    })
    demo = {
      org_id: org.id,
      client_id: client.client_id,
      client_secret: client.client_secret,
      scopes: client.scopes,
      token_url: '',
      audience: '',
    }
    created = true
  }
  demo = { ...demo, token_url: `${options.authUrl}/oauth/token`, audience: options.baseUrl }
  if (options.account) {
    await ensureDemoAccount(db, demo.org_id, options.account)
    demo.account = { key: options.account.key, wallets: [...options.account.wallets] }
  }
  await fs.mkdir(options.dataDir, { recursive: true })
  await fs.writeFile(file, `${JSON.stringify(demo, null, 2)}\n`, { mode: 0o600 })
  return { file, demo, created }
}

/** The demo account and its Allowlist wallets; what exists already (in any org) is left as it is. */
async function ensureDemoAccount(db: Db, orgId: string, account: DemoAccount): Promise<void> {
  const repos = createRepos(db)
  const org = await repos.orgs.get(orgId)
  if (!org) throw new ValidationError(`demo org ${orgId} not found`)
  const platform = createPlatformService(db)
  if (!(await repos.accounts.existsKey(orgId, account.key))) {
    await platform.createAccount(orgId, account.key, 'demo')
  }
  for (const address of account.wallets) {
    if (await repos.wallets.findByAddressAnyOrg(toAddress(address, 'demo wallet'))) continue
    await platform.createWallet(org, account.key, { address, type: 'ETH', allowlisted: true }, 'demo')
  }
}
