import { describe, expect, test } from 'vitest'
import { createAnswerMemo, type KeptAnswer } from './answer-memo.ts'

const answer = (body: string | Buffer): KeptAnswer => ({
  body,
  contentType: 'application/json; charset=utf-8',
  contentDisposition: undefined,
})

describe('createAnswerMemo', () => {
  test('behavior: holds at most maxBytes, the least recently used leaving first', () => {
    const memo = createAnswerMemo({ maxBytes: 30, maxEntryBytes: 30 })
    memo.set('a', answer('x'.repeat(10)))
    memo.set('b', answer(Buffer.alloc(10)))
    memo.set('c', answer('z'.repeat(10)))
    expect(memo.bytes).toBe(30)
    expect(memo.get('a')?.body).toBe('x'.repeat(10)) // a is now the most recently used
    memo.set('d', answer('w'.repeat(10)))
    expect(memo.get('b')).toBeUndefined()
    expect(memo.get('a')).toBeDefined()
    expect(memo.get('c')).toBeDefined()
    expect(memo.bytes).toBe(30)
  })

  test('edge: an answer over the entry bound is not kept; bytes count UTF-8; a key set again replaces', () => {
    const memo = createAnswerMemo({ maxBytes: 100, maxEntryBytes: 8 })
    memo.set('big', answer('123456789'))
    expect(memo.get('big')).toBeUndefined()
    memo.set('utf8', answer('€€€')) // 9 bytes in UTF-8
    expect(memo.get('utf8')).toBeUndefined()
    memo.set('k', answer('1234'))
    memo.set('k', answer('12'))
    expect(memo.get('k')?.body).toBe('12')
    expect(memo.bytes).toBe(2)
  })
})
