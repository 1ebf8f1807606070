import { createPublicClient, createWalletClient, encodeFunctionData, type Hash, type Hex, http } from 'viem'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { type Anvil, startAnvil } from '../devnet/anvil.ts'
import { compileLegacyAllowlist } from '../test/helpers/legacy-allowlist.ts'
import { allowlistAbi } from './abi.ts'
import { recoverLegacyAllowlistAccounts } from './legacy-allowlist.ts'

const accounts = [
  '0x00000000000000000000000000000000000000a1',
  '0x00000000000000000000000000000000000000b2',
] as const
const permissions = [5n, 0n] as const

describe('recoverLegacyAllowlistAccounts', () => {
  let anvil: Anvil
  let input: Hex
  let accountsHash: Hash
  let logPermissions: readonly bigint[]

  beforeAll(async () => {
    anvil = await startAnvil()
    const transport = http(anvil.rpcUrl)
    const publicClient = createPublicClient({ transport })
    const wallet = createWalletClient({ transport, account: '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266' })
    const deployHash = await wallet.sendTransaction({ chain: null, data: compileLegacyAllowlist() })
    const { contractAddress } = await publicClient.waitForTransactionReceipt({ hash: deployHash })
    input = encodeFunctionData({
      abi: allowlistAbi,
      functionName: 'setAllowPermissions',
      args: [[...accounts], [...permissions]],
    })
    const hash = await wallet.sendTransaction({ chain: null, to: contractAddress!, data: input })
    const receipt = await publicClient.waitForTransactionReceipt({ hash })
    const log = receipt.logs[0]!
    accountsHash = log.topics[1] as Hash
    // data: the non-indexed uint256[] permissions
    const words = log.data
      .slice(2)
      .match(/.{64}/g)!
      .map((w) => BigInt(`0x${w}`))
    logPermissions = words.slice(2) // offset, length, elements
  }, 60_000)
  afterAll(async () => {
    await anvil?.stop()
  })

  test('behavior: recovers the accounts of a real legacy log from the transaction calldata', () => {
    expect(logPermissions).toEqual([...permissions])
    const recovered = recoverLegacyAllowlistAccounts(input, { accountsHash, permissions: logPermissions })
    // in the stored form: lower case
    expect(recovered).toEqual(accounts.map((a) => a.toLowerCase()))
  })

  test('behavior: refuses calldata that does not match the log, or is not the call', () => {
    const other = encodeFunctionData({
      abi: allowlistAbi,
      functionName: 'setAllowPermissions',
      args: [[accounts[0]], [5n]],
    })
    expect(
      recoverLegacyAllowlistAccounts(other, { accountsHash, permissions: logPermissions }),
    ).toBeUndefined()
    const wrongPerms = encodeFunctionData({
      abi: allowlistAbi,
      functionName: 'setAllowPermissions',
      args: [[...accounts], [5n, 5n]],
    })
    expect(
      recoverLegacyAllowlistAccounts(wrongPerms, { accountsHash, permissions: logPermissions }),
    ).toBeUndefined()
    expect(
      recoverLegacyAllowlistAccounts('0xdeadbeef', { accountsHash, permissions: logPermissions }),
    ).toBeUndefined()
  })
})
