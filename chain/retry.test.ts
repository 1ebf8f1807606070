import {
  ContractFunctionRevertedError,
  HttpRequestError,
  InternalRpcError,
  InvalidInputRpcError,
  InvalidParamsRpcError,
  LimitExceededRpcError,
  RpcRequestError,
  TimeoutError,
} from 'viem'
import { describe, expect, test } from 'vitest'
import { ChainRpcError, LogDecodeError } from './errors.ts'
import { backoffDelay, isTransientRpcError, withRetry } from './retry.ts'

const url = 'http://127.0.0.1:8545'
const rpcError = (code: number, message: string) =>
  new RpcRequestError({ body: {}, error: { code, message }, url })
const fetchFailed = (code: string) =>
  new HttpRequestError({ url, cause: Object.assign(new TypeError('fetch failed'), { cause: { code } }) })

describe('isTransientRpcError', () => {
  const cases: [string, unknown, boolean][] = [
    ['HTTP 500', new HttpRequestError({ url, status: 500 }), true],
    ['HTTP 502', new HttpRequestError({ url, status: 502 }), true],
    ['HTTP 429', new HttpRequestError({ url, status: 429 }), true],
    ['HTTP 400', new HttpRequestError({ url, status: 400 }), false],
    ['HTTP 403', new HttpRequestError({ url, status: 403 }), false],
    ['connection reset (no status)', fetchFailed('ECONNRESET'), true],
    ['connection refused', fetchFailed('ECONNREFUSED'), true],
    ['bare node error', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }), true],
    ['timeout', new TimeoutError({ body: {}, url }), true],
    [
      '-32005 too many results',
      new LimitExceededRpcError(rpcError(-32005, 'query returned more than 10000 results')),
      true,
    ],
    [
      '-32005 rate limit',
      new LimitExceededRpcError(rpcError(-32005, 'daily request count exceeded, request rate limited')),
      true,
    ],
    ['-32603 internal', new InternalRpcError(rpcError(-32603, 'internal error')), true],
    ['-32000 header not found', new InvalidInputRpcError(rpcError(-32000, 'header not found')), true],
    [
      '-32602 invalid params',
      new InvalidParamsRpcError(rpcError(-32602, 'invalid argument 0: hex string has length 3')),
      false,
    ],
    [
      '-32602 Alchemy log size',
      new InvalidParamsRpcError(
        rpcError(
          -32602,
          'Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range',
        ),
      ),
      true,
    ],
    ['-32000 revert', new InvalidInputRpcError(rpcError(-32000, 'execution reverted')), false],
    [
      'contract revert',
      new ContractFunctionRevertedError({ abi: [], functionName: 'f', message: 'boom' }),
      false,
    ],
    [
      'our decode error',
      new LogDecodeError('bad', { blockNumber: 1n, transactionHash: '0x', logIndex: 0 }),
      false,
    ],
    [
      'wrapped transient',
      new ChainRpcError('eth_getLogs failed', { cause: new HttpRequestError({ url, status: 503 }) }),
      true,
    ],
    ['unknown error', new Error('something odd'), false],
    ['not an error', 'nope', false],
  ]
  for (const [name, error, transient] of cases) {
    test(`behavior: ${name} is ${transient ? 'transient' : 'permanent'}`, () => {
      expect(isTransientRpcError(error)).toBe(transient)
    })
  }
})

describe('backoffDelay', () => {
  test('behavior: doubles per attempt, jitters between half and all of the step, and caps', () => {
    const opts = { baseDelayMs: 100, maxDelayMs: 1_000 }
    expect(backoffDelay(1, { ...opts, random: () => 0 })).toBe(50)
    expect(backoffDelay(1, { ...opts, random: () => 0.999999 })).toBe(100)
    expect(backoffDelay(3, { ...opts, random: () => 0 })).toBe(200)
    expect(backoffDelay(20, { ...opts, random: () => 0.999999 })).toBe(1_000)
    for (let attempt = 1; attempt < 10; attempt++) {
      const d = backoffDelay(attempt, opts)
      const step = Math.min(1_000, 100 * 2 ** (attempt - 1))
      expect(d).toBeGreaterThanOrEqual(step / 2)
      expect(d).toBeLessThanOrEqual(step)
    }
  })
})

describe('withRetry', () => {
  const transient = () => new HttpRequestError({ url, status: 503 })

  test('behavior: retries transient errors until success and reports each retry', async () => {
    const seen: number[] = []
    let calls = 0
    const result = await withRetry(
      async () => {
        calls++
        if (calls < 3) throw transient()
        return 'ok'
      },
      { retries: 5, baseDelayMs: 1, onRetry: ({ attempt }) => seen.push(attempt) },
    )
    expect(result).toBe('ok')
    expect(calls).toBe(3)
    expect(seen).toEqual([1, 2])
  })

  test('behavior: a permanent error is thrown at the first attempt', async () => {
    let calls = 0
    const error = new InvalidParamsRpcError(rpcError(-32602, 'invalid argument'))
    await expect(
      withRetry(
        async () => {
          calls++
          throw error
        },
        { retries: 5, baseDelayMs: 1 },
      ),
    ).rejects.toBe(error)
    expect(calls).toBe(1)
  })

  test('behavior: the last error is thrown once the retries are spent', async () => {
    let calls = 0
    const errors: Error[] = []
    await expect(
      withRetry(
        async () => {
          calls++
          const e = transient()
          errors.push(e)
          throw e
        },
        { retries: 3, baseDelayMs: 1 },
      ),
    ).rejects.toSatisfy((e) => e === errors.at(-1))
    expect(calls).toBe(4)
  })

  test('behavior: a custom isRetryable decides', async () => {
    let calls = 0
    await expect(
      withRetry(
        async () => {
          calls++
          throw new Error('flaky')
        },
        { retries: 2, baseDelayMs: 1, isRetryable: (e) => (e as Error).message === 'flaky' },
      ),
    ).rejects.toThrow('flaky')
    expect(calls).toBe(3)
  })

  test('behavior: an abort during the backoff wait stops the retries', async () => {
    const controller = new AbortController()
    let calls = 0
    const promise = withRetry(
      async () => {
        calls++
        throw transient()
      },
      { retries: 10, baseDelayMs: 10_000, signal: controller.signal },
    )
    setTimeout(() => controller.abort(new Error('shutting down')), 20)
    await expect(promise).rejects.toThrow('shutting down')
    expect(calls).toBe(1)
  })
})
