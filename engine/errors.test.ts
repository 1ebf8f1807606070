import { describe, expect, test } from 'vitest'
import {
  EngineError,
  FeeScheduleError,
  InvalidInputError,
  RedeemStateError,
  ReportRangeError,
} from './errors.ts'

describe('EngineError', () => {
  test('behavior: carries a message, a stable code, details and a cause', () => {
    const cause = new Error('inner')
    const error = new EngineError('boom', { code: 'INVARIANT_VIOLATED', details: { a: 1 }, cause })
    expect(error).toBeInstanceOf(Error)
    expect(error.message).toBe('boom')
    expect(error.code).toBe('INVARIANT_VIOLATED')
    expect(error.details).toEqual({ a: 1 })
    expect(error.cause).toBe(cause)
    expect(new EngineError('x').code).toBe('INVALID_INPUT')
  })

  test('behavior: subclasses keep their default codes and names', () => {
    expect(new InvalidInputError('x')).toMatchObject({ name: 'InvalidInputError', code: 'INVALID_INPUT' })
    const range = new ReportRangeError('x', { code: 'LOT_RANGE_INVERTED' })
    expect(range).toBeInstanceOf(InvalidInputError)
    expect(range).toMatchObject({ name: 'ReportRangeError', code: 'LOT_RANGE_INVERTED' })
    expect(new FeeScheduleError('x')).toMatchObject({
      name: 'FeeScheduleError',
      code: 'FEE_SCHEDULE_INVALID',
    })
    expect(new RedeemStateError('x')).toMatchObject({
      name: 'RedeemStateError',
      code: 'REDEEM_STATE_INVALID',
    })
  })
})
