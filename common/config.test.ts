import { describe, expect, test } from 'vitest'
import { loadConfig } from './config.ts'

describe('loadConfig', () => {
  test('behavior: defaults describe the embedded mode', () => {
    const config = loadConfig({})
    expect(config).toMatchObject({
      databaseUrl: undefined,
      redisUrl: undefined,
      rpcUrl: undefined,
      chain: 'devnet',
      port: 8080,
      host: '127.0.0.1',
      baseUrl: 'http://127.0.0.1:8080',
      authUrl: 'http://127.0.0.1:8080',
      logLevel: 'info',
      confirmations: 0,
    })
    expect(config.dataDir.endsWith('/data')).toBe(true)
  })

  test('behavior: production settings are read and validated', () => {
    const config = loadConfig({
      DATABASE_URL: 'postgres://u@db:5432/x',
      REDIS_URL: 'redis://r:6379',
      RPC_URL: 'https://rpc.example',
      PORT: '9000',
      HOST: '0.0.0.0',
      BASE_URL: 'https://api.example/',
    })
    expect(config).toMatchObject({
      chain: 'mainnet',
      port: 9000,
      baseUrl: 'https://api.example',
      confirmations: 12,
    })
  })

  test.each([
    [{ DATABASE_URL: 'mysql://x' }, /DATABASE_URL/],
    [{ DATABASE_URL: 'not a url' }, /DATABASE_URL/],
    [{ REDIS_URL: 'http://x' }, /REDIS_URL/],
    [{ RPC_URL: 'ws//x' }, /RPC_URL/],
    [{ PORT: 'eighty' }, /PORT/],
    [{ PORT: '70000' }, /PORT/],
    [{ CHAIN: 'goerli' }, /CHAIN/],
    [{ CHAIN: 'mainnet' }, /RPC_URL is required/],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL/],
    [{ BASE_URL: '/' }, /BASE_URL/],
    [{ JWT_PRIVATE_KEY: 'abc' }, /JWT_PRIVATE_KEY/],
    [{ SIGNING_KEY_SECRET: 'too short' }, /SIGNING_KEY_SECRET must be 32 bytes/],
    [{ SIGNING_KEY_SECRET: 'ab'.repeat(31) }, /SIGNING_KEY_SECRET/],
    [{ SIGNING_KEY_SECRET: Buffer.alloc(31).toString('base64') }, /SIGNING_KEY_SECRET/],
    [{ TOKEN_TTL_SECONDS: '0' }, /TOKEN_TTL_SECONDS/],
    [{ ALLOWER_PRIVATE_KEY: '0x12' }, /ALLOWER_PRIVATE_KEY/],
    [{ CONFIRMATIONS: '-1' }, /CONFIRMATIONS/],
    [{ TRUST_PROXY: 'true' }, /TRUST_PROXY.*`true` is refused/],
    [{ TRUST_PROXY: '0' }, /TRUST_PROXY/],
    [{ TRUST_PROXY: '10.0.0.0/33' }, /TRUST_PROXY/],
    [{ TRUST_PROXY: '10.0.0.1, lb.internal' }, /TRUST_PROXY/],
  ])('behavior: %j fails naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message)
  })

  test('behavior: SIGNING_KEY_SECRET is 32 bytes as hex, base64 or base64url; TOKEN_TTL_SECONDS defaults to a day', () => {
    const bytes = Buffer.from(Array.from({ length: 32 }, (_, i) => 250 - i))
    for (const text of [bytes.toString('hex'), bytes.toString('base64'), bytes.toString('base64url')]) {
      expect(loadConfig({ SIGNING_KEY_SECRET: ` ${text}\n` }).signingKeySecret).toEqual(bytes)
    }
    expect(loadConfig({}).signingKeySecret).toBeUndefined()
    expect(loadConfig({}).tokenTtlSeconds).toBe(86_400)
    expect(loadConfig({ TOKEN_TTL_SECONDS: '900' }).tokenTtlSeconds).toBe(900)
  })

  test('behavior: TRUST_PROXY is off by default, a hop count, or proxy addresses and CIDR ranges', () => {
    expect(loadConfig({}).trustProxy).toBe(false)
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2)
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1,::1,fd00::/8' }).trustProxy).toEqual([
      '10.0.0.0/8',
      '127.0.0.1',
      '::1',
      'fd00::/8',
    ])
  })
})
