import {
  HttpRequestError,
  LimitExceededRpcError,
  ResponseBodyTooLargeError,
  RpcRequestError,
  TimeoutError,
} from 'viem'
import { buildRequest } from 'viem/utils'
import { describe, expect, test } from 'vitest'
import { ChainRpcError } from './errors.ts'
import { nextRange, type RangeLimit, rangeLimitOf } from './range-errors.ts'

const url = 'http://127.0.0.1:8545'
const body = { method: 'eth_getLogs', params: [{ fromBlock: '0x1', toBlock: '0x2710' }] }

interface RpcErrorBody {
  code: number
  message: string
  data?: unknown
}

/**
 * The error viem's http transport throws for a JSON-RPC error answer: an RpcRequestError, which viem's
 * `buildRequest` maps by code (-32602 -> InvalidParamsRpcError, -32005 -> LimitExceededRpcError, -32000 ->
 * InvalidInputRpcError, other codes stay RpcRequestError), exactly as a client request would.
 */
async function viemRpcError(error: RpcErrorBody): Promise<unknown> {
  const request = buildRequest(
    async () => {
      throw new RpcRequestError({ body, error, url })
    },
    { retryCount: 0 },
  )
  return request({ method: 'eth_getLogs', params: [] }).catch((e: unknown) => e)
}

/** The error viem (before 2.4x) threw for a non-2xx answer with a JSON error body: HttpRequestError, body in `details`. */
function viemHttpError(status: number, error: RpcErrorBody): HttpRequestError {
  return new HttpRequestError({ body, details: JSON.stringify(error), status, url })
}

/** An answer seen without its JSON-RPC code: the text as a plain error (web3.js / ethers `message`). */
const plain = (message: string) => new Error(message)

interface ProviderCase {
  name: string
  /** Where the exact text (and code) was seen. */
  seen: string
  code?: number
  message: string
  data?: unknown
  /** The answer's HTTP status when it was not 200. */
  status?: number
  expected: RangeLimit
}

const hexSpan = (from: string, to: string) => BigInt(to) - BigInt(from) + 1n

/** Real refusals, verbatim, with where each was seen. */
const PROVIDER_CASES: ProviderCase[] = [
  {
    name: 'Alchemy: log response size, with the range that should work',
    seen: 'https://github.com/ethereum/go-ethereum/issues/25343',
    code: -32602,
    message:
      'Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit on the response size, or you can request any block range with a cap of 10K logs in the response. Based on your parameters and the response size limit, this block range should work: [0x0, 0x87fe9]',
    expected: { source: 'alchemy', kind: 'result-size', suggestedRange: hexSpan('0x0', '0x87fe9') },
  },
  {
    name: 'Alchemy: the same, another range (Chainlink test vector)',
    seen: 'https://github.com/smartcontractkit/chainlink/blob/develop/core/chains/evm/client/errors_test.go',
    code: -32602,
    message:
      'Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit on the response size, or you can request any block range with a cap of 10K logs in the response. Based on your parameters and the response size limit, this block range should work: [0x0, 0x133e71]',
    expected: { source: 'alchemy', kind: 'result-size', suggestedRange: hexSpan('0x0', '0x133e71') },
  },
  {
    name: 'Alchemy: the older wording, without a range',
    seen: 'https://github.com/bancorprotocol/webapp/issues/523',
    message: 'Log response size exceeded. Please reduce query block range.',
    expected: { source: 'alchemy', kind: 'result-size' },
  },
  {
    name: 'Alchemy: the 500-block cap of a plan, with the range that should work',
    seen: 'https://github.com/BobTheBuidler/dank_mids/issues/772',
    code: -32600,
    message:
      'You can make eth_getLogs requests with up to a 500 block range. Based on your parameters, this block range should work: [0x123c9b2, 0x123cba5]',
    expected: { source: 'alchemy', kind: 'block-range', suggestedRange: 500n, maxRange: 500n },
  },
  {
    name: 'Alchemy: the 500-block cap, HTTP 400 (boundless prover log)',
    seen: 'https://github.com/boundless-xyz/boundless/issues/838',
    code: -32600,
    status: 400,
    message:
      'You can make eth_getLogs requests with up to a 500 block range. Based on your parameters, this block range should work: [0x1a30dfd, 0x1a30ff0]',
    expected: { source: 'alchemy', kind: 'block-range', suggestedRange: 500n, maxRange: 500n },
  },
  {
    name: 'Infura: too many results, with the range to try',
    seen: 'https://github.com/smartcontractkit/chainlink/blob/develop/core/chains/evm/client/errors_test.go',
    code: -32005,
    data: { from: '0xCB3D', limit: 10000, to: '0x7B737' },
    message: 'query returned more than 10000 results. Try with this block range [0xCB3D, 0x7B737].',
    expected: { source: 'infura', kind: 'result-size', suggestedRange: hexSpan('0xCB3D', '0x7B737') },
  },
  {
    name: 'Infura: too many results, no range',
    seen: 'https://github.com/status-im/nimbus-eth2/issues/1823',
    code: -32005,
    message: 'query returned more than 10000 results',
    expected: { source: 'infura', kind: 'result-size' },
  },
  {
    name: 'Infura (2019): the 1000-result cap',
    seen: 'https://github.com/omni/bridge-ui/issues/214',
    code: -32005,
    message: 'query returned more than 1000 results',
    expected: { source: 'infura', kind: 'result-size' },
  },
  {
    name: 'Infura: the block-range cap the docs do not describe',
    seen: 'https://github.com/INFURA/infura/issues/237',
    code: -32602,
    message: 'range 1000000 exceeds limit of 10000',
    expected: { source: 'infura', kind: 'block-range', maxRange: 10_000n },
  },
  {
    name: 'Aurora relayer: the Infura wording with request data',
    seen: 'https://github.com/aurora-is-near/aurora-relayer/pull/327',
    code: -32005,
    data: { host: 'localhost:8545', request_body: { jsonrpc: '2.0', method: 'eth_getLogs' } },
    message: 'query returned more than 10000 results',
    expected: { source: 'infura', kind: 'result-size' },
  },
  {
    name: 'Cosmos EVM (ZetaChain): the same words under -32000',
    seen: 'https://github.com/zeta-chain/node/issues/3265',
    code: -32000,
    message: 'query returned more than 10000 results',
    expected: { source: 'infura', kind: 'result-size' },
  },
  {
    name: 'thirdweb: the Infura wording and range in `data` of an "invalid params"',
    seen: 'https://github.com/ponder-sh/ponder/blob/main/packages/utils/src/parseGetLogsError/parseGetLogsError.ts',
    code: -32602,
    message: 'invalid params',
    data: 'Query returned more than 10000 results. Try with this block range [0x800000, 0x800054].',
    expected: { source: 'infura', kind: 'result-size', suggestedRange: hexSpan('0x800000', '0x800054') },
  },
  {
    name: 'QuickNode: 10,000-block cap, HTTP 413',
    seen: 'https://github.com/eternalsafe/wallet/issues/57',
    code: -32614,
    status: 413,
    message: 'eth_getLogs is limited to a 10,000 range',
    expected: { source: 'quicknode', kind: 'block-range', maxRange: 10_000n },
  },
  {
    name: 'QuickNode: the same (arbitrum-sdk report)',
    seen: 'https://github.com/OffchainLabs/arbitrum-sdk/issues/609',
    code: -32614,
    message: 'eth_getLogs is limited to a 10,000 range',
    expected: { source: 'quicknode', kind: 'block-range', maxRange: 10_000n },
  },
  {
    name: 'Polygon zkEVM: 10000-block cap',
    seen: 'https://github.com/0xPolygon/zkevm-node/issues/3136',
    code: -32602,
    message: 'logs are limited to a 10000 block range',
    expected: { source: 'polygon-zkevm', kind: 'block-range', maxRange: 10_000n },
  },
  {
    name: 'Cloudflare: 800-block cap',
    seen: 'https://github.com/ponder-sh/ponder/blob/main/packages/utils/src/parseGetLogsError/parseGetLogsError.ts',
    code: -32047,
    message: "Invalid eth_getLogs request. 'fromBlock'-'toBlock' range too large. Max range: 800",
    expected: { source: 'cloudflare', kind: 'block-range', maxRange: 800n },
  },
  {
    name: 'Ankr: block range too wide',
    seen: 'https://github.com/ponder-sh/ponder/blob/main/packages/utils/src/parseGetLogsError/parseGetLogsError.ts',
    code: -32600,
    message: 'block range is too wide',
    expected: { source: 'ankr', kind: 'block-range' },
  },
  {
    name: 'Ankr: the newer wording, with the cap (InvalidInputRpcError in viem)',
    seen: 'https://github.com/ponder-sh/ponder/issues/1940',
    code: -32000,
    message: 'maximum [from, to] blocks distance: 10000',
    expected: { source: 'ankr', kind: 'block-range', maxRange: 10_000n },
  },
  {
    name: 'Chainstack: block range limit, no number',
    seen: 'https://github.com/matter-labs/zksync-era/pull/2974',
    code: -32602,
    message:
      'Block range limit exceeded. See more details at https://docs.chainstack.com/docs/limits#evm-range-limits',
    expected: { source: 'chainstack', kind: 'block-range' },
  },
  {
    name: 'dRPC: too many blocks, with the cap',
    seen: 'https://github.com/smartcontractkit/chainlink/blob/develop/core/chains/evm/client/errors_test.go',
    code: -32000,
    message: 'requested too many blocks from 0 to 16777216, maximum is set to 2048',
    expected: { source: 'drpc', kind: 'block-range', maxRange: 2048n },
  },
  {
    name: 'PublicNode: 50000-block cap',
    seen: 'https://github.com/ponder-sh/ponder/blob/main/packages/utils/src/_test/publicnode.test.ts',
    message: 'exceed maximum block range: 50000',
    expected: { source: 'publicnode', kind: 'block-range', maxRange: 50_000n },
  },
  {
    name: 'BSC public node: 5000-block cap',
    seen: 'https://github.com/AlphaWallet/alpha-wallet-android/issues/2736',
    code: -32000,
    message: 'exceed maximum block range: 5000',
    expected: { source: 'publicnode', kind: 'block-range', maxRange: 5000n },
  },
  {
    name: 'reth: max block range',
    seen: 'https://github.com/paradigmxyz/reth/pull/8558',
    code: -32602,
    message: 'query exceeds max block range 5000',
    expected: { source: 'reth', kind: 'block-range', maxRange: 5000n },
  },
  {
    name: 'reth: max results, with a retry range (here the requested one)',
    seen: 'https://github.com/paradigmxyz/reth/issues/23810',
    code: -32602,
    message: 'query exceeds max results 20000, retry with the range 25766988-25775072',
    expected: { source: 'reth', kind: 'result-size', suggestedRange: 25775072n - 25766988n + 1n },
  },
  {
    name: 'Ankr / LlamaRPC (erigon and reth nodes): max results',
    seen: 'https://github.com/ponder-sh/ponder/blob/main/packages/utils/src/_test/ankr.test.ts',
    code: -32602,
    message: 'query exceeds max results',
    expected: { source: 'reth', kind: 'result-size' },
  },
  {
    name: 'erigon 3.5: too many logs (20000 is a log count, not a range)',
    seen: 'https://github.com/trezor/blockbook/pull/1692',
    message: 'query returns too many logs, narrow your filter: 20000',
    expected: { source: 'erigon', kind: 'result-size' },
  },
  {
    name: 'Nethermind: block depth cap ("invalid params"; message template filled with its numbers)',
    seen: 'https://github.com/NethermindEth/nethermind/blob/master/src/Nethermind/Nethermind.Facade/Find/RangeLimitedLogFinder.cs',
    code: -32602,
    message:
      'Block range 10001 exceeds the maximum of 10000 blocks per logs request. Use a narrower fromBlock/toBlock range or increase Receipt.MaxBlockDepth.',
    expected: { source: 'nethermind', kind: 'block-range', maxRange: 10_000n },
  },
  {
    name: 'Tenderly: the cap in `data.payload` of an "invalid params"',
    seen: 'https://github.com/bobanetwork/boba_legacy/issues/827',
    code: -32602,
    message: 'invalid params',
    data: {
      error_id: '4ed94073-0317-4648-a167-107fba5f44b3',
      payload: 'range 9009594 is bigger than range limit 2000',
    },
    expected: { source: 'tenderly', kind: 'block-range', maxRange: 2000n },
  },
  {
    name: 'Moonbeam (Frontier): too wide, with the cap',
    seen: 'https://github.com/moonbeam-foundation/moonbeam/pull/3250',
    message: 'block range is too wide (maximum 1024)',
    expected: { source: 'frontier', kind: 'block-range', maxRange: 1024n },
  },
  {
    name: 'SimplyVC: too wide blocks range',
    seen: 'https://github.com/smartcontractkit/chainlink/blob/develop/core/chains/evm/client/errors_test.go',
    code: -32000,
    message: 'too wide blocks range, the limit is 100',
    expected: { source: 'geth-fork', kind: 'block-range', maxRange: 100n },
  },
  {
    name: 'Scroll (geth fork): bigger than maxBlockRange',
    seen: 'https://github.com/scroll-tech/go-ethereum/pull/529',
    code: -32000,
    message: 'block range is bigger than maxBlockRange',
    expected: { source: 'geth-fork', kind: 'block-range' },
  },
]

/** Wordings no rule names: the generic rule must take them. */
const GENERIC_CASES: ProviderCase[] = [
  {
    name: 'Candle: block range too high',
    seen: 'https://github.com/AlphaWallet/alpha-wallet-ios/issues/5277',
    code: -32600,
    message: 'block range too high',
    expected: { source: 'generic', kind: 'block-range' },
  },
  {
    name: 'Ronin: filter block range higher than the limit',
    seen: 'https://github.com/axieinfinity/ronin-archive/pull/224',
    message: 'filter block range is higher than the limit',
    expected: { source: 'generic', kind: 'block-range' },
  },
  {
    name: "Aion: can't query more than 1000 blocks",
    seen: 'https://github.com/aionnetwork/aion/pull/1080',
    message: "jsonrpc - eth_newFilter(): can't query more than 1000 blocks",
    expected: { source: 'generic', kind: 'block-range', maxRange: 1000n },
  },
]

/** Rate limits, quotas and timeouts: a smaller range does not cure them. */
const NEGATIVE_CASES: Omit<ProviderCase, 'expected'>[] = [
  {
    name: 'Infura: daily request count (-32005, HTTP 429)',
    seen: 'https://github.com/gochain/web3/issues/180',
    code: -32005,
    status: 429,
    message: 'daily request count exceeded, request rate limited',
    data: {
      rate: { allowed_rps: 1, backoff_seconds: 0, current_rps: 2.2 },
      see: 'https://infura.io/dashboard',
    },
  },
  {
    name: 'Infura: project rate limit (-32005)',
    seen: 'https://github.com/status-im/status-go/pull/4807',
    code: -32005,
    message: 'exceeded project rate limit',
    data: {
      rate: { allowed_rps: 5, backoff_seconds: 30, current_rps: 5.2 },
      see: 'https://infura.io/dashboard',
    },
  },
  {
    name: 'Alchemy: compute units per second (code 429)',
    seen: 'https://github.com/conduitxyz/node/issues/36',
    code: 429,
    status: 429,
    message:
      'Your app has exceeded its compute units per second capacity. If you have retries enabled, you can safely ignore this message. If not, check out https://docs.alchemy.com/reference/throughput',
  },
  {
    name: 'Alchemy: monthly capacity (HTTP 403)',
    seen: 'https://github.com/xmtp/xmtpd/issues/672',
    code: -32600,
    status: 403,
    message:
      'Monthly capacity limit exceeded. Visit https://dashboard.alchemyapi.io/settings/billing to upgrade your scaling policy for continued service.',
  },
  {
    name: 'QuickNode: requests per second (-32007)',
    seen: 'https://github.com/alloy-rs/alloy/blob/main/crates/json-rpc/src/response/error.rs (wording also in viem src/utils/buildRequest.ts)',
    code: -32007,
    message:
      '20/second request limit reached - reduce calls per second or upgrade your account at quicknode.com',
  },
  {
    name: 'a node-side timeout (-32002)',
    seen: 'https://github.com/smartcontractkit/chainlink/blob/develop/core/chains/evm/client/errors_test.go',
    code: -32002,
    message: 'request timed out',
  },
  {
    name: 'reth: a reversed range is invalid, not too large',
    seen: 'https://github.com/paradigmxyz/reth/blob/main/crates/rpc/rpc-eth-types/src/logs_utils.rs',
    code: -32602,
    message: 'invalid block range params',
  },
]

async function errorsOf(c: Omit<ProviderCase, 'expected'>): Promise<[string, unknown][]> {
  if (c.code === undefined) return [['plain error', plain(c.message)]]
  const rpc: RpcErrorBody = {
    code: c.code,
    message: c.message,
    ...(c.data === undefined ? {} : { data: c.data }),
  }
  const forms: [string, unknown][] = [['viem RPC error', await viemRpcError(rpc)]]
  if (c.status !== undefined) forms.push([`viem HttpRequestError ${c.status}`, viemHttpError(c.status, rpc)])
  return forms
}

describe('rangeLimitOf', () => {
  test.each(PROVIDER_CASES)('behavior: recognizes $name', async (c) => {
    for (const [form, error] of await errorsOf(c)) {
      expect(rangeLimitOf(error), form).toEqual(c.expected)
      // wrapped by chain/ as it travels up
      const wrapped = new ChainRpcError('eth_getLogs failed for blocks 1..10000', { cause: error })
      expect(rangeLimitOf(wrapped), `${form} in ChainRpcError`).toEqual(c.expected)
    }
  })

  test.each(GENERIC_CASES)('behavior: the generic rule takes $name', async (c) => {
    for (const [form, error] of await errorsOf(c)) expect(rangeLimitOf(error), form).toEqual(c.expected)
  })

  test.each(NEGATIVE_CASES)('behavior: $name is not a range limit', async (c) => {
    for (const [form, error] of await errorsOf(c)) expect(rangeLimitOf(error), form).toBeUndefined()
  })

  test('behavior: viem wraps the answer in the class its code maps to, and the text is read through it', async () => {
    const infura = await viemRpcError({ code: -32005, message: 'query returned more than 10000 results' })
    expect(infura).toBeInstanceOf(LimitExceededRpcError)
    // viem's own short message ("Request exceeds defined limit.") is not what matched
    expect((infura as LimitExceededRpcError).shortMessage).toBe('Request exceeds defined limit.')
    expect(rangeLimitOf(infura)?.source).toBe('infura')
    const alchemy = await viemRpcError({ code: -32602, message: 'Log response size exceeded.' })
    expect((alchemy as Error).name).toBe('InvalidParamsRpcError')
    const ankr = await viemRpcError({ code: -32000, message: 'maximum [from, to] blocks distance: 10000' })
    expect((ankr as Error).name).toBe('InvalidInputRpcError')
    const quicknode = await viemRpcError({
      code: -32614,
      message: 'eth_getLogs is limited to a 10,000 range',
    })
    expect(quicknode).toBeInstanceOf(RpcRequestError)
  })

  test('behavior: an ethers error keeps the node answer under `error` (Morph, via ethers in envio)', () => {
    // https://github.com/enviodev/hyperindex/issues/605
    const ethers = Object.assign(new Error('could not coalesce error'), {
      shortMessage: 'could not coalesce error',
      error: {
        code: -32000,
        message: 'block range is larger than max block range, block range = 5120, max block range = 5000',
      },
    })
    expect(rangeLimitOf(ethers)).toEqual({ source: 'geth-fork', kind: 'block-range', maxRange: 5000n })
  })

  test('behavior: an unexplained -32005, HTTP 413 and an oversized body shrink; other failures do not', async () => {
    expect(rangeLimitOf(await viemRpcError({ code: -32005, message: 'limit exceeded' }))?.source).toBe(
      'code -32005',
    )
    expect(rangeLimitOf(new HttpRequestError({ url, status: 413 }))).toEqual({
      source: 'http 413',
      kind: 'result-size',
    })
    expect(
      rangeLimitOf(new ResponseBodyTooLargeError({ maxSize: 10_485_760, size: 20_000_000 }))?.source,
    ).toBe('response body too large')
    expect(rangeLimitOf(new TimeoutError({ body, url }))).toBeUndefined()
    expect(
      rangeLimitOf(new HttpRequestError({ url, status: 500, details: 'Internal Server Error' })),
    ).toBeUndefined()
    expect(
      rangeLimitOf(new HttpRequestError({ url, status: 429, details: 'Too Many Requests' })),
    ).toBeUndefined()
    expect(rangeLimitOf(await viemRpcError({ code: -32000, message: 'header not found' }))).toBeUndefined()
    expect(rangeLimitOf(new Error('socket hang up'))).toBeUndefined()
    expect(rangeLimitOf(undefined)).toBeUndefined()
  })

  test('behavior: the quoted request body never matches (it names eth_getLogs and its range)', () => {
    const error = new HttpRequestError({
      body: {
        method: 'eth_getLogs',
        params: [{ fromBlock: '0x0', toBlock: '0xffff', note: 'block range too large' }],
      },
      status: 500,
      url,
    })
    expect(error.message).toContain('block range too large')
    expect(rangeLimitOf(error)).toBeUndefined()
  })
})

describe('nextRange', () => {
  test('behavior: takes a smaller suggestion, else a smaller stated cap, else halves', () => {
    expect(
      nextRange(2000n, { source: 'alchemy', kind: 'block-range', suggestedRange: 500n, maxRange: 500n }),
    ).toBe(500n)
    expect(nextRange(2000n, { source: 'cloudflare', kind: 'block-range', maxRange: 800n })).toBe(800n)
    expect(nextRange(2000n, { source: 'infura', kind: 'result-size' })).toBe(1000n)
    expect(nextRange(2000n, undefined)).toBe(1000n)
  })

  test('behavior: a suggestion that is not smaller (reth echoing the requested range) halves instead', () => {
    const reth = { source: 'reth', kind: 'result-size', suggestedRange: 8085n } as const
    expect(nextRange(8085n, reth)).toBe(4042n)
    expect(nextRange(100n, { source: 'publicnode', kind: 'block-range', maxRange: 50_000n })).toBe(50n)
  })
})
