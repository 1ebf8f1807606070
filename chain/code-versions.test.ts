/**
 * `lsreport doctor` names implementations by their runtime code on a real node: the protocol's bytecode
 * (fixtures/protocol) deployed on anvil behind the real TUPProxy, with a Hoodi Firewall whose immutable
 * destination is filled, and a code of our own no table knows.
 */
import { type Hex, keccak256 } from 'viem'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { type Address, decodedAddress } from '../common/address.ts'
import { type Anvil, startAnvil } from '../devnet/anvil.ts'
import { creationData, deployCreations } from '../test/helpers/protocol-bytecode.ts'
import { type ChainContracts, toContracts } from './addresses.ts'
import { createChainClient } from './client.ts'
import { checkFirewallCode, checkImplementations } from './doctor.ts'

/** Init code returning the one-byte runtime code `0x00`: a contract no table knows. */
const UNKNOWN_CREATION: Hex = '0x6001600c60003960016000f300'
const PROXY_ADMIN = '0x00000000000000000000000000000000000a0111'

let anvil: Anvil
let contracts: ChainContracts
/** the implementations: mainnet's River 1.2.1, Hoodi's River 1.2.1, the unknown code */
let impl: { mainnetRiver: Address; hoodiRiver: Address; unknown: Address }

beforeAll(async () => {
  anvil = await startAnvil()
  const [mainnetRiver, hoodiRiver, unknown, firewall] = await deployCreations(anvil.rpcUrl, [
    creationData('mainnet', 'RiverV1_Implementation_1_2_1'),
    creationData('hoodi', 'RiverV1_Implementation_1_2_1'),
    UNKNOWN_CREATION,
    creationData('hoodi', 'Firewall', [PROXY_ADMIN, PROXY_ADMIN, PROXY_ADMIN, []]),
  ])
  impl = {
    mainnetRiver: decodedAddress(mainnetRiver!.address),
    hoodiRiver: decodedAddress(hoodiRiver!.address),
    unknown: decodedAddress(unknown!.address),
  }
  const proxies = await deployCreations(
    anvil.rpcUrl,
    [impl.mainnetRiver, impl.unknown, impl.hoodiRiver, impl.hoodiRiver].map((implementation) =>
      creationData('mainnet', 'TUPProxy', [implementation, PROXY_ADMIN, '0x']),
    ),
  )
  const [river, redeemManager, allowlist, oracle] = proxies.map((p) => p.address)
  contracts = toContracts({
    river: river!,
    redeemManager: redeemManager!,
    allowlist: allowlist!,
    oracle: oracle!,
    firewall: firewall!.address,
    startBlock: 1n,
  })
}, 30_000)

afterAll(async () => {
  await anvil?.stop()
})

describe('checkImplementations on real bytecode', () => {
  test('behavior: River 1.2.1 behind a TUPProxy is named by its code, mainnet’s and Hoodi’s builds; an unknown code is a warning', async () => {
    const client = createChainClient({ rpcUrl: anvil.rpcUrl })
    const [river, redeemManager, allowlist, oracle] = await checkImplementations(client, 31337, contracts)
    expect(river).toMatchObject({
      check: 'implementation_river',
      status: 'ok',
      message: `river runs River 1.2.1 by its code (${impl.mainnetRiver}, an address the version table does not list)`,
      details: {
        implementation: impl.mainnetRiver,
        code_contract: 'River',
        code_version: '1.2.1',
        code_size: 22752,
      },
    })
    expect(redeemManager).toMatchObject({
      status: 'warn',
      message: `redeemManager runs implementation ${impl.unknown}, not a known version (code not a known protocol build (keccak256 ${keccak256('0x00')}, 1 bytes)): the service's ABIs were checked against the known ones only`,
    })
    // Hoodi's River build behind the Allowlist's and the Oracle's proxies: River 1.2.1, not their contract
    expect(allowlist!.message).toBe(
      `allowlist runs implementation ${impl.hoodiRiver}, whose code is River 1.2.1, not a Allowlist version`,
    )
    expect(oracle).toMatchObject({
      status: 'warn',
      details: { code_contract: 'River', code_version: '1.2.1' },
    })
  })

  test('behavior: a devnet table naming the same version is ok; naming another is a warning with both', async () => {
    const client = createChainClient({ rpcUrl: anvil.rpcUrl })
    const table = (version: string) => [{ contract: 'River', version, address: impl.mainnetRiver, block: 1n }]
    const [agreed] = await checkImplementations(client, 31337, contracts, table('1.2.1'))
    expect(agreed).toMatchObject({
      status: 'ok',
      message: `river runs River 1.2.1 (${impl.mainnetRiver}; its code is River 1.2.1)`,
    })
    const [disagreed] = await checkImplementations(client, 31337, contracts, table('1.0.0'))
    expect(disagreed).toMatchObject({
      status: 'warn',
      message: `river runs implementation ${impl.mainnetRiver}, which the version table names River 1.0.0 but whose code is River 1.2.1`,
    })
  })
})

describe('checkFirewallCode on real bytecode', () => {
  test('behavior: a Hoodi Firewall deployed with a destination is the Firewall (its immutable masked)', async () => {
    const client = createChainClient({ rpcUrl: anvil.rpcUrl })
    const [firewall] = await checkFirewallCode(client, contracts)
    expect(firewall).toMatchObject({
      status: 'ok',
      message: `firewall ${contracts.firewall} runs the protocol's Firewall (hoodi build, its immutable destination masked)`,
    })
  })
})
