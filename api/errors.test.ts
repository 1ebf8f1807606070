import { describe, expect, test } from 'vitest'
import { toAddress } from '../common/address.ts'
import { ERROR_REASONS, NotFoundError, StateError, ValidationError } from '../common/errors.ts'
import { FeeScheduleError, InvalidInputError, RedeemStateError, ReportRangeError } from '../engine/index.ts'
import { toErrorReply } from './error-reply.ts'
import { apiErrorOf, ERROR_CATALOG, REASON_CODES } from './errors.ts'

describe('REASON_CODES', () => {
  test('behavior: every domain error reason maps to a catalog code, and nothing else is mapped', () => {
    expect(Object.keys(REASON_CODES).sort()).toEqual([...ERROR_REASONS].sort())
    for (const reason of ERROR_REASONS) expect(ERROR_CATALOG).toHaveProperty(REASON_CODES[reason])
  })

  test('behavior: not-found reasons answer 404, validation reasons 400', () => {
    expect(ERROR_CATALOG[REASON_CODES.account_not_found].http).toBe(404)
    expect(ERROR_CATALOG[REASON_CODES.wallet_not_found].http).toBe(404)
    for (const reason of ['invalid_input', 'invalid_address', 'address_checksum', 'zero_address'] as const) {
      expect(ERROR_CATALOG[REASON_CODES[reason]].http).toBe(400)
    }
  })
})

describe('apiErrorOf', () => {
  test('behavior: an engine input error is 400 with its message (a range one IR4001) whatever threw it; engine faults are not mapped', () => {
    expect(
      toErrorReply(new InvalidInputError('timestamp must be a non-negative integer of unix seconds')),
    ).toEqual({
      http: 400,
      body: { message: 'timestamp must be a non-negative integer of unix seconds', status: 'IR1000' },
      headers: {},
    })
    expect(toErrorReply(new ReportRangeError('from is after to')).body).toEqual({
      message: 'from is after to',
      status: 'IR4001',
    })
    expect(apiErrorOf(new FeeScheduleError('shares sum to 0.99'))).toBeUndefined()
    expect(toErrorReply(new RedeemStateError('claim exceeds the request')).http).toBe(500)
  })

  test('behavior: a domain error keeps its message and takes the code and status of its reason', () => {
    const notFound = apiErrorOf(new NotFoundError('account "a" not found', { reason: 'account_not_found' }))
    expect([notFound?.code, notFound?.http, notFound?.message]).toEqual([
      'IR3000',
      404,
      'account "a" not found',
    ])
    const refused = apiErrorOf(new StateError('may not allowlist', { reason: 'allowlist_not_permitted' }))
    expect([refused?.code, refused?.http]).toEqual(['IR3104', 403])
    const plain = apiErrorOf(new ValidationError('from is after to'))
    expect([plain?.code, plain?.http]).toEqual(['IR1000', 400])
  })

  test('behavior: an address that fails toAddress maps to IR3101 or IR3102 with its field named', () => {
    const caught = (value: string) => {
      try {
        toAddress(value, 'owner')
      } catch (err) {
        return apiErrorOf(err)
      }
      return undefined
    }
    expect([caught('0x12')?.code, caught('0x12')?.message]).toEqual([
      'IR3101',
      'owner must be 0x followed by 40 hexadecimal digits',
    ])
    expect(caught('0x8c1BEd5b9a0928467c9B1341Da1D7BD5e10b6549')).toBeUndefined()
    expect(caught('0x8c1BEd5b9a0928467c9B1341Da1D7BD5e10b6548')?.code).toBe('IR3102')
  })

  test('behavior: errors that are not domain errors are left to the other mappings', () => {
    expect(apiErrorOf(new Error('boom'))).toBeUndefined()
    expect(apiErrorOf('text')).toBeUndefined()
  })
})
