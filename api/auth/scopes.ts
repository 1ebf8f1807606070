/** Every scope a client may hold (docs/decisions.md "Authentication and scopes"). */
export const SCOPES = [
  'read:eth-rewards',
  'read:eth-redeems',
  'read:platform',
  'write:platform',
  'read:sol-allowlist',
  'write:sol-allowlist',
  'impersonate:org',
  'admin',
] as const

export type Scope = (typeof SCOPES)[number]

/** Parses a space- or comma-separated scope list; returns the unknown ones separately. */
export function parseScopes(input: string): { scopes: Scope[]; unknown: string[] } {
  const parts = input
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean)
  const scopes: Scope[] = []
  const unknown: string[] = []
  for (const part of parts) {
    if ((SCOPES as readonly string[]).includes(part)) {
      if (!scopes.includes(part as Scope)) scopes.push(part as Scope)
    } else unknown.push(part)
  }
  return { scopes, unknown }
}
