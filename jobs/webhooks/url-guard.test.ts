import { describe, expect, test } from 'vitest'
import { WebhookUrlError } from './errors.ts'
import { isPrivateAddress, parseWebhookUrl, resolveWebhookTarget } from './url-guard.ts'

describe('isPrivateAddress', () => {
  test('behavior: loopback, private, link-local, unique-local and mapped addresses are refused; public ones pass', () => {
    for (const a of [
      '127.0.0.1',
      '10.0.0.5',
      '172.16.3.4',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      '::',
      'fc00::1',
      'fd12:3456::1',
      'fe80::1',
      '::ffff:127.0.0.1',
      '::ffff:10.1.1.1',
      'not-an-ip',
    ]) {
      expect(isPrivateAddress(a), a).toBe(true)
    }
    for (const a of ['8.8.8.8', '93.184.215.14', '172.32.0.1', '2606:4700::1111', '::ffff:8.8.8.8']) {
      expect(isPrivateAddress(a), a).toBe(false)
    }
  })
})

describe('resolveWebhookTarget', () => {
  test('behavior: only http(s) without credentials', () => {
    for (const bad of ['ftp://example.com/x', 'file:///etc/passwd', 'javascript:alert(1)', 'not a url']) {
      expect(() => parseWebhookUrl(bad), bad).toThrow(WebhookUrlError)
    }
    expect(() => parseWebhookUrl('https://user:pw@example.com/')).toThrow(/credentials/)
    expect(parseWebhookUrl('https://example.com/hook').hostname).toBe('example.com')
  })

  test('behavior: a private literal or a name resolving to loopback is refused unless allowed', async () => {
    for (const url of [
      'http://127.0.0.1:8080/x',
      'http://[::1]/x',
      'http://localhost/x',
      'http://10.0.0.1/',
    ]) {
      await expect(resolveWebhookTarget(url, { allowPrivate: false }), url).rejects.toThrow(WebhookUrlError)
    }
    await expect(
      resolveWebhookTarget('http://127.0.0.1:8080/x', { allowPrivate: true }),
    ).resolves.toMatchObject({
      address: '127.0.0.1',
      family: 4,
    })
    await expect(
      resolveWebhookTarget('https://203.0.113.10/hook', { allowPrivate: false }),
    ).resolves.toMatchObject({ address: '203.0.113.10' })
  })
})
