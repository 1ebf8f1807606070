import { Webhook } from 'standardwebhooks'
import { describe, expect, test } from 'vitest'
import { newWebhookSecret } from '../../db/repos/webhooks.ts'
import { retryDelayMs } from './backoff.ts'
import { signWebhook, webhookHeaders } from './sign.ts'

describe('signWebhook', () => {
  test("behavior: matches the Standard Webhooks specification's example vector", () => {
    expect(
      signWebhook(
        'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
        'msg_p5jXN8AQM9LWM0D4loKWxJek',
        1614265330,
        '{"test": 2432232314}',
      ),
    ).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=')
  })

  test('behavior: the standardwebhooks package verifies our headers and refuses a tampered body', () => {
    const secret = newWebhookSecret()
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    const body = JSON.stringify({ id: 'evt_1', type: 'day.finalized', data: { version: 1 } })
    const headers = webhookHeaders(secret, 'evt_1', body)
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body))
    expect(() => new Webhook(secret).verify(body.replace('1}', '2}'), headers)).toThrow()
    expect(() => new Webhook(newWebhookSecret()).verify(body, headers)).toThrow()
  })
})

describe('retryDelayMs', () => {
  test('behavior: doubles from the base and stops at one hour', () => {
    expect([1, 2, 3, 4].map((n) => retryDelayMs(n, 100))).toEqual([100, 200, 400, 800])
    expect(retryDelayMs(40, 10_000)).toBe(3_600_000)
  })
})
