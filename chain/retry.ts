/**
 * Retries with exponential backoff and jitter, and the classification of RPC errors into transient (worth a
 * retry) and permanent (fail fast). The chain clients are built with viem's own retries off, so this is the
 * one retry policy of `chain/`.
 */

export interface RetryOptions {
  /** Retries after the first attempt (0 = a single attempt). Default 5. */
  retries?: number
  /** Delay before the first retry, doubled at each further retry. Default 200 ms. */
  baseDelayMs?: number
  /** Cap of a single delay. Default 10 000 ms. */
  maxDelayMs?: number
  /** Whether an error deserves another attempt. Default `isTransientRpcError`. */
  isRetryable?: (error: unknown) => boolean
  /** Called before each retry's wait (for logs and counters). `attempt` counts from 1. */
  onRetry?: (info: { error: unknown; attempt: number; delayMs: number }) => void
  /** Aborts the waits between attempts (the abort reason is thrown). */
  signal?: AbortSignal
  /** Random source in [0, 1) for the jitter (tests pass a seeded one). Default Math.random. */
  random?: () => number
}

/**
 * Delay before retry number `attempt` (1-based): exponential, capped, with "equal jitter" (between half and
 * all of the exponential step), so that clients that failed together do not retry together.
 *
 * @example
 * backoffDelay(3, { baseDelayMs: 100, maxDelayMs: 10_000, random: () => 0 }) // 200 (half of 400)
 */
export function backoffDelay(
  attempt: number,
  options: { baseDelayMs: number; maxDelayMs: number; random?: () => number },
): number {
  const step = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** Math.max(0, attempt - 1))
  const random = options.random ?? Math.random
  return Math.round(step / 2 + (step / 2) * random())
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

/**
 * Runs `fn` until it succeeds, retrying retryable errors with backoff. A non-retryable error, or the last
 * error once the retries are spent, is thrown as it is (so callers can still classify it).
 *
 * @example
 * const head = await withRetry(() => client.getBlockNumber(), { retries: 3, baseDelayMs: 100 })
 */
export async function withRetry<T>(
  fn: (attempt: number) => Promise<T>,
  options: RetryOptions = {},
): Promise<T> {
  const retries = options.retries ?? 5
  const isRetryable = options.isRetryable ?? isTransientRpcError
  const delays = { baseDelayMs: options.baseDelayMs ?? 200, maxDelayMs: options.maxDelayMs ?? 10_000 }
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn(attempt)
    } catch (error) {
      if (attempt >= retries || !isRetryable(error) || options.signal?.aborted) throw error
      const delayMs = backoffDelay(
        attempt + 1,
        options.random ? { ...delays, random: options.random } : delays,
      )
      options.onRetry?.({ error, attempt: attempt + 1, delayMs })
      await sleep(delayMs, options.signal)
    }
  }
}

/** The error and its `cause` chain, outermost first (bounded, cycle-safe). */
export function errorChain(error: unknown): unknown[] {
  const chain: unknown[] = []
  let current: unknown = error
  while (current !== undefined && current !== null && chain.length < 12 && !chain.includes(current)) {
    chain.push(current)
    current =
      typeof current === 'object' && 'cause' in current ? (current as { cause: unknown }).cause : undefined
  }
  return chain
}

function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null && key in value
    ? (value as Record<string, unknown>)[key]
    : undefined
}

/** The short text of an error: viem's shortMessage and details (its full message repeats the request). */
function text(value: unknown): string {
  if (typeof value === 'string') return value
  const short = field(value, 'shortMessage')
  const parts = typeof short === 'string' ? [short, field(value, 'details')] : [field(value, 'message')]
  return parts.filter((p): p is string => typeof p === 'string').join(' | ')
}

/** Messages of nodes and providers that mean "this block range returns too much: ask for less". */
const RANGE_LIMIT_MESSAGE =
  /query returned more than|too many (results|logs|blocks)|more than \d+ results|block range (is )?too (large|wide|big)|range (is )?too (large|wide|big)|exceed(s|ed)? (the )?max(imum)? (block )?range|max(imum)? block range|range limit|response size (exceeded|is larger|too large)|(log|response) (size|limit) exceeded|limited to a? ?[\d,]+ (block )?range|result window is too large|query timeout exceeded/i

/** Messages of rate limiting, which a pause cures (not a smaller range). */
const RATE_LIMIT_MESSAGE =
  /rate.?limit|too many requests|request limit|daily request count|capacity exceeded|requests per second|exceeded .*(compute units|credits)|throughput/i

const TRANSIENT_MESSAGE =
  /timeout|timed out|temporarily unavailable|try again|header not found|unknown block|econnreset|econnrefused|econnaborted|epipe|etimedout|eai_again|socket hang up|other side closed|fetch failed|network error|service unavailable|bad gateway|gateway timeout|internal error|limit exceeded/i

const PERMANENT_MESSAGE =
  /execution reverted|revert|invalid (argument|params|address|opcode)|insufficient funds|nonce too low|method not found|does not exist\/is not available|unauthorized|forbidden/i

const TRANSIENT_NODE_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
])

/** JSON-RPC codes that are worth a retry: limit exceeded, internal error, 429-in-body, QuickNode's limit. */
const TRANSIENT_RPC_CODES = new Set([-32005, -32603, 429, -32007, -32016])
/** JSON-RPC codes that never succeed by repetition: parse, invalid request, method not found, invalid params. */
const PERMANENT_RPC_CODES = new Set([-32700, -32600, -32601, -32602, 3, 4001, 4100, 4200])

type Verdict = 'transient' | 'permanent' | 'unknown'

function classifyNode(node: unknown): Verdict {
  const name = field(node, 'name')
  const message = text(node)
  if (name === 'ContractFunctionRevertedError' || name === 'CallExecutionError' || name === 'AbortError') {
    // CallExecutionError wraps both reverts and transport failures: decide on its cause.
    if (name === 'CallExecutionError') return 'unknown'
    return 'permanent'
  }
  if (name === 'TimeoutError' || name === 'SocketClosedError') return 'transient'
  const status = field(node, 'status')
  if (name === 'HttpRequestError') {
    if (typeof status !== 'number') return 'transient' // the request never got an answer (reset, refused)
    if (status === 408 || status === 425 || status === 429 || status >= 500) return 'transient'
    return 'permanent'
  }
  const code = field(node, 'code')
  if (typeof code === 'string' && TRANSIENT_NODE_CODES.has(code)) return 'transient'
  if (typeof code === 'number') {
    if (TRANSIENT_RPC_CODES.has(code)) return 'transient'
    if (PERMANENT_RPC_CODES.has(code)) {
      return RANGE_LIMIT_MESSAGE.test(message) || RATE_LIMIT_MESSAGE.test(message) ? 'transient' : 'permanent'
    }
  }
  if (PERMANENT_MESSAGE.test(message)) return 'permanent'
  if (
    RANGE_LIMIT_MESSAGE.test(message) ||
    RATE_LIMIT_MESSAGE.test(message) ||
    TRANSIENT_MESSAGE.test(message)
  ) {
    return 'transient'
  }
  return 'unknown'
}

/**
 * Whether an RPC error is worth retrying: HTTP 408/429/5xx, a request that got no answer (connection reset
 * or refused, socket closed), timeouts, JSON-RPC -32005 / -32603 / 429 and "limit" or "timeout" messages.
 * Reverts, invalid params, unknown methods and other HTTP 4xx are permanent. The `cause` chain is walked;
 * a permanent link anywhere wins, an error that matches nothing is treated as permanent (fail fast).
 *
 * @example
 * isTransientRpcError(new HttpRequestError({ url, status: 503 })) // true
 * isTransientRpcError(new InvalidParamsRpcError(new Error('invalid address'))) // false
 */
export function isTransientRpcError(error: unknown): boolean {
  let transient = false
  for (const node of errorChain(error)) {
    const verdict = classifyNode(node)
    if (verdict === 'permanent') return false
    if (verdict === 'transient') transient = true
  }
  return transient
}

/** Whether an error is a request timeout (viem's TimeoutError or a timeout message or code). */
export function isTimeoutError(error: unknown): boolean {
  return errorChain(error).some((node) => {
    const name = field(node, 'name')
    const code = field(node, 'code')
    return (
      name === 'TimeoutError' ||
      code === 'ETIMEDOUT' ||
      code === 'UND_ERR_HEADERS_TIMEOUT' ||
      code === 'UND_ERR_BODY_TIMEOUT' ||
      field(node, 'status') === 408 ||
      field(node, 'status') === 504
    )
  })
}
