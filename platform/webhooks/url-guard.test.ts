import { describe, expect, test } from 'vitest'
import { WebhookUrlError } from './errors.ts'
import { embeddedIpv4, isPrivateAddress, parseWebhookUrl, resolveWebhookTarget } from './url-guard.ts'

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

describe('embedded IPv4 forms and reserved nets', () => {
  test.each([
    ['::ffff:127.0.0.1', '127.0.0.1'], // mapped
    ['::ffff:7f00:1', '127.0.0.1'], // mapped, hex
    ['::ffff:0:7f00:1', '127.0.0.1'], // translated (SIIT)
    ['::127.0.0.1', '127.0.0.1'], // compatible
    ['::7f00:1', '127.0.0.1'], // compatible, as the URL parser writes it
    ['64:ff9b::a00:1', '10.0.0.1'], // NAT64
    ['2002:7f00:1::', '127.0.0.1'], // 6to4
    ['2002:c0a8:101::1', '192.168.1.1'], // 6to4
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', '127.0.0.1'], // Teredo: client 0x80fffffe xor 0xffffffff
    ['2002:808:808::1', '8.8.8.8'], // 6to4 of a public address
  ])('behavior: %s carries %s', (v6, v4) => {
    expect(embeddedIpv4(v6)).toBe(v4)
  })

  test('behavior: an IPv6 form embedding a private IPv4 is refused, one embedding a public IPv4 is judged by it; documentation and test nets are refused', () => {
    for (const a of [
      '::7f00:1',
      '::127.0.0.1',
      '2002:7f00:1::',
      '64:ff9b::7f00:1',
      '::ffff:0:a00:1',
      '2001:0:4136:e378:8000:63bf:80ff:fffe',
      '64:ff9b:1::1',
      '192.0.2.10',
      '198.51.100.7',
      '203.0.113.9',
      '2001:db8::1',
      '3fff::1',
      '100::1',
    ]) {
      expect(isPrivateAddress(a), a).toBe(true)
    }
    for (const a of ['2002:808:808::1', '64:ff9b::808:808', '::ffff:1.1.1.1', '2001:4860:4860::8888']) {
      expect(isPrivateAddress(a), a).toBe(false)
    }
    expect(embeddedIpv4('2606:4700::1111')).toBeUndefined()
    expect(embeddedIpv4('::1')).toBeUndefined()
    expect(embeddedIpv4('::')).toBeUndefined()
  })

  test('behavior: the URL forms of the issue are refused; port 0 too', async () => {
    for (const url of ['http://[::127.0.0.1]/', 'http://[2002:7f00:1::]/', 'http://[::ffff:0:7f00:1]/']) {
      await expect(resolveWebhookTarget(url, { allowPrivate: false }), url).rejects.toThrow(/private/)
    }
    expect(() => parseWebhookUrl('http://example.com:0/hook')).toThrow(/port 0/)
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
      resolveWebhookTarget('https://93.184.215.14/hook', { allowPrivate: false }),
    ).resolves.toMatchObject({ address: '93.184.215.14' })
  })
})
