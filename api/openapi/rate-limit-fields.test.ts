import { describe, expect, test } from 'vitest'
import { rateLimitField, rateLimitPolicyField } from './rate-limit-fields.ts'

describe('rateLimitPolicyField', () => {
  test('behavior: the quota and the window in whole seconds, rounded up', () => {
    expect(rateLimitPolicyField(100, 60_000)).toBe('"default";q=100;w=60')
    expect(rateLimitPolicyField(5, 1_500)).toBe('"default";q=5;w=2')
  })
})

describe('rateLimitField', () => {
  test('behavior: what remains and when the window restarts', () => {
    expect(rateLimitField(42, 17)).toBe('"default";r=42;t=17')
    expect(rateLimitField(0, 60)).toBe('"default";r=0;t=60')
  })
})
