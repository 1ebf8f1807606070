import { randomBytes } from 'node:crypto'
import { describe, expect, test } from 'vitest'
import { downloadPath, exportLinkKey, linkSignatureValid, signLink } from './link.ts'

describe('export download links', () => {
  const key = exportLinkKey(randomBytes(32))
  const grant = { exportId: '6f1c2f0e-3b8a-4d47-9a51-2c7e4b1d9f03', orgId: 'org_a', expires: 1_767_225_600 }

  test('behavior: a link verifies for its own export, organization and expiry only', () => {
    const signature = signLink(key, grant)
    expect(signature).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(linkSignatureValid(key, grant, signature)).toBe(true)
    expect(linkSignatureValid(key, { ...grant, orgId: 'org_b' }, signature)).toBe(false)
    expect(linkSignatureValid(key, { ...grant, expires: grant.expires + 1 }, signature)).toBe(false)
    expect(
      linkSignatureValid(key, { ...grant, exportId: grant.exportId.replace('6f', '7f') }, signature),
    ).toBe(false)
    expect(linkSignatureValid(key, grant, signature.slice(1))).toBe(false)
    expect(linkSignatureValid(exportLinkKey(randomBytes(32)), grant, signature)).toBe(false)
  })

  test('behavior: the key is derived for links alone (not the secret itself), the same for every process', () => {
    const secret = randomBytes(32)
    expect(exportLinkKey(secret)).toEqual(exportLinkKey(Buffer.from(secret)))
    expect(exportLinkKey(secret).equals(secret)).toBe(false)
    expect(downloadPath(key, grant)).toBe(
      `/v1/exports/${grant.exportId}/download?expires=${grant.expires}&signature=${signLink(key, grant)}`,
    )
  })
})
