/**
 * Allowlist permission bits of the protocol (PROTOCOL.md): one mask per address on the Allowlist contract.
 * The chain decoder, the platform rules and the devnet share these.
 */
export const PERMISSION = {
  DEPOSIT: 1n,
  DONATE: 2n,
  REDEEM: 4n,
  DENY: 1n << 255n,
} as const

/** The mask the platform grants an allowlisted wallet: deposit and redeem. */
export const ALLOW_MASK = PERMISSION.DEPOSIT | PERMISSION.REDEEM
