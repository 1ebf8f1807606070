import { describe, expect, test } from 'vitest'
import { redactUrl } from './redact-url.ts'

describe('redactUrl', () => {
  test('behavior: the values of secret parameters are replaced, everything else kept byte for byte', () => {
    expect(redactUrl('/v0/x?access_token=abc&limit=5')).toBe('/v0/x?access_token=[redacted]&limit=5')
    expect(redactUrl('/a?CLIENT_SECRET=s&Password=p&x=%20y')).toBe(
      '/a?CLIENT_SECRET=[redacted]&Password=[redacted]&x=%20y',
    )
    expect(redactUrl('https://h.example/hook?token=t&api_key=k#frag')).toBe(
      'https://h.example/hook?token=[redacted]&api_key=[redacted]#frag',
    )
    // a percent-encoded or plus-padded name is the same name to a server
    expect(redactUrl('/a?%61ccess_token=t&code+=c')).toBe('/a?%61ccess_token=[redacted]&code+=[redacted]')
    // names without a value, and URLs without a query, are unchanged (the same string)
    const plain = '/health?token&x=1'
    expect(redactUrl(plain)).toBe(plain)
    expect(redactUrl('/health')).toBe('/health')
    expect(redactUrl('/a?%E0%A4%A=1')).toBe('/a?%E0%A4%A=1')
  })
})
