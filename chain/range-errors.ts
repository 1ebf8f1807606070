/**
 * Recognizes the answers with which nodes and RPC providers refuse an `eth_getLogs` request as too large, and
 * reads the block range they suggest or allow. Each provider words it its own way (the texts, their codes and
 * where they were seen are in `range-errors.test.ts`); a generic rule catches the rest: a message about a
 * block range or about the size of the result, unless it is about request rate, quota or a timeout.
 *
 * viem wraps the node's answer (InvalidParamsRpcError -> RpcRequestError -> the raw `{code, message, data}`,
 * or HttpRequestError whose `details` hold the JSON error body): the whole `cause` chain is read, and of each
 * link its `details`, its `data` and the `message` of non-viem links. viem's own short messages ("Request
 * exceeds defined limit.") and the request body it quotes are never matched.
 */

/** What the node objects to: the span of blocks, or how much the span returns (logs, bytes, query time). */
export type RangeLimitKind = 'block-range' | 'result-size'

/** A refusal of a request as too large, and what the node said about the range that would work. */
export interface RangeLimit {
  /** Who answered, as recognized: a provider or node ('alchemy', 'reth', ...) or 'generic', 'code -32005', 'http 413'. */
  source: string
  kind: RangeLimitKind
  /**
   * Blocks the node says this request should span to succeed (Alchemy's and Infura's `[0x.., 0x..]`, reth's
   * `retry with the range a-b`), inclusive of both ends.
   */
  suggestedRange?: bigint
  /** Widest block span the node accepts at all, when its message states one ("Max range: 800"). */
  maxRange?: bigint
}

interface ProviderRule {
  source: string
  kind: RangeLimitKind
  pattern: RegExp
  /** The stated cap, from the match (group 1 unless told otherwise). */
  max?: (match: RegExpMatchArray) => bigint | undefined
}

/** "10,000" -> 10000n, "2K" -> 2000n; undefined when it is no count. */
function count(text: string | undefined): bigint | undefined {
  if (text === undefined) return undefined
  const found = /^([\d,._]+)\s*(k)?$/i.exec(text.trim())
  if (!found?.[1]) return undefined
  const digits = found[1].replace(/[,._]/g, '')
  if (digits === '') return undefined
  return BigInt(digits) * (found[2] ? 1000n : 1n)
}

const group1 = (match: RegExpMatchArray) => count(match[1])

/**
 * The providers' own wordings, most specific first. Numbers that count results (Infura's "more than 10000
 * results", erigon's "narrow your filter: 20000") are never read as a block range.
 */
const PROVIDER_RULES: readonly ProviderRule[] = [
  // Alchemy: "Log response size exceeded. ... this block range should work: [0x.., 0x..]" (-32602), also the
  // timeout variant; the free tier says "up to a 500 block range. Based on ..." (-32600), a hard cap.
  {
    source: 'alchemy',
    kind: 'result-size',
    pattern: /log response size exceeded|query timeout exceeded\. consider reducing your block range/i,
  },
  {
    source: 'alchemy',
    kind: 'block-range',
    pattern: /eth_getLogs requests with up to an? ([\d,.]+k?) block range\./i,
    max: group1,
  },
  // Infura: "query returned more than 10000 results. Try with this block range [0x.., 0x..]." (-32005); the
  // same words from geth-based nodes and proxies, without the hint.
  { source: 'infura', kind: 'result-size', pattern: /query returned more than [\d,]+ results/i },
  // Infura's range cap: "range 1000000 exceeds limit of 10000" (-32602); Tenderly / thirdweb put
  // "range 9009594 is bigger than range limit 2000" in `data`.
  { source: 'infura', kind: 'block-range', pattern: /\brange \d+ exceeds limit of ([\d,]+)/i, max: group1 },
  {
    source: 'tenderly',
    kind: 'block-range',
    pattern: /\brange \d+ is bigger than range limit ([\d,]+)/i,
    max: group1,
  },
  // Polygon zkEVM: "logs are limited to a 10000 block range" (-32602).
  {
    source: 'polygon-zkevm',
    kind: 'block-range',
    pattern: /logs are limited to an? ([\d,.]+) block range/i,
    max: group1,
  },
  // QuickNode (-32614, HTTP 413) and Blast: "eth_getLogs is limited to a 10,000 range".
  {
    source: 'quicknode',
    kind: 'block-range',
    pattern: /limited to an? ([\d,.]+k?) (?:blocks? )?range/i,
    max: group1,
  },
  // Cloudflare: "Invalid eth_getLogs request. 'fromBlock'-'toBlock' range too large. Max range: 800" (-32047).
  {
    source: 'cloudflare',
    kind: 'block-range',
    pattern: /range too large\. max range: ([\d,]+)/i,
    max: group1,
  },
  // Ankr: "block range is too wide" (-32600); on some chains "maximum [from, to] blocks distance: 10000".
  {
    source: 'ankr',
    kind: 'block-range',
    pattern: /maximum \[from, to\] blocks distance: ([\d,]+)/i,
    max: group1,
  },
  // Moonbeam / Frontier: "block range is too wide (maximum 1024)"; Ankr says it without the number.
  {
    source: 'frontier',
    kind: 'block-range',
    pattern: /block range is too wide \(maximum ([\d,]+)\)/i,
    max: group1,
  },
  { source: 'ankr', kind: 'block-range', pattern: /block range is too wide/i },
  // Chainstack: "Block range limit exceeded. See more details at https://docs.chainstack.com/..." (-32602).
  { source: 'chainstack', kind: 'block-range', pattern: /block range limit exceeded/i },
  // dRPC (and Avalanche): "requested too many blocks from 0 to 16777216, maximum is set to 2048" (-32000);
  // dRPC's free tier: "ranges over 10000 blocks are not supported on freetier".
  {
    source: 'drpc',
    kind: 'block-range',
    pattern: /requested too many blocks from \d+ to \d+, maximum is set to ([\d,]+)/i,
    max: group1,
  },
  {
    source: 'drpc',
    kind: 'block-range',
    pattern: /ranges over ([\d,]+) blocks are not supported/i,
    max: group1,
  },
  // PublicNode and BSC (geth fork): "exceed maximum block range: 50000".
  {
    source: 'publicnode',
    kind: 'block-range',
    pattern: /exceed maximum block range: ([\d,]+)/i,
    max: group1,
  },
  // reth (-32602): "query exceeds max block range 1000", "query exceeds max results 20000[, retry with the
  // range a-b]"; erigon: "query returns too many logs, narrow your filter: 20000".
  { source: 'reth', kind: 'block-range', pattern: /query exceeds max block range ([\d,]+)/i, max: group1 },
  { source: 'reth', kind: 'result-size', pattern: /query exceeds max results/i },
  { source: 'erigon', kind: 'result-size', pattern: /query returns too many logs/i },
  // Nethermind (-32602): "Block range 10001 exceeds the maximum of 10000 blocks per logs request. ..."
  {
    source: 'nethermind',
    kind: 'block-range',
    pattern: /block range \d+ exceeds the maximum of ([\d,]+) blocks per logs request/i,
    max: group1,
  },
  // Other geth forks: "block range is larger than max block range, block range = 5120, max block range = 5000"
  // (Morph), "too wide blocks range, the limit is 100", "block range is bigger than maxBlockRange" (Scroll).
  { source: 'geth-fork', kind: 'block-range', pattern: /max block range = ([\d,]+)/i, max: group1 },
  {
    source: 'geth-fork',
    kind: 'block-range',
    pattern: /too wide blocks range, the limit is ([\d,]+)/i,
    max: group1,
  },
  { source: 'geth-fork', kind: 'block-range', pattern: /block range is bigger than maxblockrange/i },
]

/** A range the node proposes: `[0xa, 0xb]` (Alchemy, Infura) or `retry with the range a-b` (reth, erigon, dRPC). */
const SUGGESTED_HEX = /(?:should work|block range):?\s*\[\s*(0x[0-9a-f]+)\s*,\s*(0x[0-9a-f]+)\s*\]/i
const SUGGESTED_DECIMAL = /retry with the range (\d+)\s*-\s*(\d+)/i

/**
 * Messages about request rate, quota or keys: a pause or another provider cures them, a smaller range does
 * not. They veto everything but a provider's own wording above.
 */
const NOT_ABOUT_RANGE =
  /rate.?limit|too many requests|requests? per (second|minute)|\/second|per second|compute units|capacity|daily request|request count|throughput|quota|credits|api key|unauthori[sz]ed/i

/**
 * Texts the generic rule leaves alone: timeouts (the fetcher has its own rule for them; a node's -32005 still
 * counts, EIP-1474's "limit exceeded" being what Infura answers a query over 10 s with) and a reversed range.
 */
const NOT_GENERIC = /timed? ?out\b|timeout|invalid block range/i

/** Generic: the message speaks of the block range, or of how many results / how big a response it is. */
const GENERIC_BLOCK_RANGE =
  /\bblocks? range\b|\brange of blocks\b|\branges? over [\d,]+ blocks\b|\brange (is )?too (large|wide|big|high)\b|\btoo (wide|many) blocks\b|\bmore than [\d,]+ blocks\b|\b(block )?range\b.*\b(exceeds?|exceeded|limit|bigger|larger|maximum)\b|\bmax(imum)? (block )?range\b/i
const GENERIC_RESULT_SIZE =
  /\btoo many (results|logs)\b|\bmore than [\d,]+ (results|logs)\b|\bmax(imum)? (number of )?(results|logs)\b|\b(results?|logs?) (limit|cap) (exceeded|reached)\b|\blimit\b.*\b(results|logs|response)\b|\bresponse (size|is too (large|big)|too (large|big))\b|\bresult (set|window) (is )?too large\b|\bresponse exceeds?\b/i

/** A cap stated in words the generic rule meets: "max range: 1000", "maximum block range 500", "more than 1000 blocks". */
const GENERIC_CAP = /\bmax(?:imum)? (?:block )?range(?: is)?[:=]?\s*([\d,]+)|\bmore than ([\d,]+) blocks\b/i

function genericCap(texts: readonly string[]): bigint | undefined {
  for (const text of texts) {
    const match = GENERIC_CAP.exec(text)
    const cap = count(match?.[1] ?? match?.[2])
    if (cap !== undefined) return cap
  }
  return undefined
}

function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined
}

/** The error, its `cause` chain and any nested `error` (ethers puts the JSON-RPC error there); bounded, cycle-safe. */
function links(error: unknown): unknown[] {
  const seen: unknown[] = []
  const queue: unknown[] = [error]
  while (queue.length > 0 && seen.length < 16) {
    const node = queue.shift()
    if (node === undefined || node === null || seen.includes(node)) continue
    seen.push(node)
    queue.push(field(node, 'cause'), field(node, 'error'))
  }
  return seen
}

function stringifyData(data: unknown): string | undefined {
  if (typeof data === 'string') return data
  if (typeof data !== 'object' || data === null) return undefined
  try {
    return JSON.stringify(data, (_key, value) => (typeof value === 'bigint' ? value.toString() : value))
  } catch {
    return undefined
  }
}

/**
 * The node's words in one link: `details` and `data`, and `message` unless the link is a viem error (whose
 * message repeats the request body and whose short message is viem's, not the node's).
 */
function textsOf(node: unknown): string[] {
  if (typeof node === 'string') return [node]
  const texts: string[] = []
  const details = field(node, 'details')
  if (typeof details === 'string' && details !== '') texts.push(details)
  const message = field(node, 'message')
  if (typeof field(node, 'shortMessage') !== 'string' && typeof message === 'string' && message !== '') {
    texts.push(message)
  }
  const data = stringifyData(field(node, 'data'))
  if (data) texts.push(data)
  return texts
}

function suggestionIn(text: string): bigint | undefined {
  const hex = SUGGESTED_HEX.exec(text)
  const decimal = hex ? undefined : SUGGESTED_DECIMAL.exec(text)
  const pair = hex ?? decimal
  if (!pair?.[1] || !pair[2]) return undefined
  const from = BigInt(pair[1])
  const to = BigInt(pair[2])
  return to >= from ? to - from + 1n : undefined
}

function withRange(
  source: string,
  kind: RangeLimitKind,
  texts: readonly string[],
  maxRange?: bigint,
): RangeLimit {
  const limit: RangeLimit = { source, kind }
  for (const text of texts) {
    const suggested = suggestionIn(text)
    if (suggested !== undefined && suggested > 0n) {
      limit.suggestedRange = suggested
      break
    }
  }
  if (maxRange !== undefined && maxRange > 0n) limit.maxRange = maxRange
  return limit
}

/**
 * Whether an error is a node's or provider's refusal of an `eth_getLogs` request as too large, and if so
 * who said it and what range it suggests or allows. Rate limits, quotas and timeouts are not range limits.
 *
 * @example
 * rangeLimitOf(new InvalidParamsRpcError(new RpcRequestError({ body, url, error: { code: -32602,
 *   message: 'Log response size exceeded. ... this block range should work: [0x10, 0x4f]' } })))
 * // { source: 'alchemy', kind: 'result-size', suggestedRange: 64n }
 * rangeLimitOf(new LimitExceededRpcError(rpcError(-32005, 'daily request count exceeded, request rate limited')))
 * // undefined
 */
export function rangeLimitOf(error: unknown): RangeLimit | undefined {
  const nodes = links(error)
  const texts = nodes.flatMap(textsOf)
  for (const rule of PROVIDER_RULES) {
    for (const text of texts) {
      const match = text.match(rule.pattern)
      if (match) return withRange(rule.source, rule.kind, texts, rule.max?.(match))
    }
  }
  if (texts.some((text) => NOT_ABOUT_RANGE.test(text))) return undefined
  for (const text of texts) {
    if (NOT_GENERIC.test(text)) continue
    if (GENERIC_BLOCK_RANGE.test(text)) return withRange('generic', 'block-range', texts, genericCap(texts))
    if (GENERIC_RESULT_SIZE.test(text)) return withRange('generic', 'result-size', texts)
  }
  for (const node of nodes) {
    // EIP-1474 "limit exceeded": what nodes answer a too-wide eth_getLogs with when they say nothing more.
    if (field(node, 'code') === -32005) return withRange('code -32005', 'result-size', texts)
    if (field(node, 'name') === 'HttpRequestError' && field(node, 'status') === 413) {
      return withRange('http 413', 'result-size', texts)
    }
    if (field(node, 'name') === 'ResponseBodyTooLargeError')
      return withRange('response body too large', 'result-size', texts)
  }
  return undefined
}

/**
 * The range to retry a refused chunk of `size` blocks with: what the node suggests for this request, else the
 * widest span it accepts, when that is smaller than `size`; otherwise half of `size` (a suggestion that is not
 * smaller, as reth's echo of the requested range, would repeat the refusal).
 *
 * @example
 * nextRange(2000n, { source: 'alchemy', kind: 'block-range', suggestedRange: 500n }) // 500n
 * nextRange(2000n, { source: 'infura', kind: 'result-size' }) // 1000n
 */
export function nextRange(size: bigint, limit: RangeLimit | undefined): bigint {
  const usable = (value: bigint | undefined) => value !== undefined && value >= 1n && value < size
  if (usable(limit?.suggestedRange)) return limit?.suggestedRange as bigint
  if (usable(limit?.maxRange)) return limit?.maxRange as bigint
  return size / 2n
}
