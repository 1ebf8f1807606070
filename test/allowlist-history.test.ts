/**
 * The Allowlist as mainnet runs it, on a devnet chain driven by hand: its allower is the AllowlistFirewall, so the
 * writer's route is detected (executor or admin of the firewall; any other key refused with a message naming
 * the key, the Allowlist and its allower), and 1.2.1's `setDenyPermissions` stores exactly DENY or 0 whatever
 * value its event carries: the follower stores what the chain stored, from the calldata when it is the write,
 * from `getPermissions` behind a wrapper that hides it.
 */
import {
  type Address,
  decodeEventLog,
  encodeFunctionData,
  getAddress,
  type Hex,
  parseAbi,
  toFunctionSelector,
} from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { allowlistAbi, PERMISSION } from '../chain/abi.ts'
import { toContracts } from '../chain/addresses.ts'
import { resolveAllowlistWriteRoute } from '../chain/allowlist-route.ts'
import { createChainClient } from '../chain/client.ts'
import { AllowlistWriteRefusedError } from '../chain/errors.ts'
import { createLogFetcher } from '../chain/log-fetcher.ts'
import { createLogger } from '../common/logger.ts'
import { type DbHandle, migrate, openDb } from '../db/index.ts'
import { createRepos } from '../db/repos/index.ts'
import { devnetAllowlistAbi, devnetFirewallAbi } from '../devnet/abi.ts'
import { startTestChain, type TestChain } from '../devnet/testing.ts'
import { createFollower } from '../jobs/follower/index.ts'
import { createJobs, JOBS } from '../jobs/index.ts'
import { UnrecoverableError } from '../jobs/runner.ts'
import { createPlatformService } from '../platform/service.ts'
import { compileContract } from './helpers/solidity.ts'

const DENY = PERMISSION.DENY
const DEPOSIT_REDEEM = PERMISSION.DEPOSIT | PERMISSION.REDEEM

/** A wrapper whose calldata hides the call it makes (as a multisig or a custom forwarder would). */
const FORWARDER = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;
contract Forwarder {
  function execute(address to, bytes calldata data) external {
    (bool ok, ) = to.call(data);
    require(ok, "forwarded call reverted");
  }
}`
const forwarderAbi = parseAbi(['function execute(address to, bytes data)'])

describe('the Allowlist behind its firewall, with 1.2.1 deny semantics', () => {
  let chain: TestChain
  let dbh: DbHandle

  beforeAll(async () => {
    chain = await startTestChain({ history: 'current' })
    // embedded (PGlite, in memory): this file's rows are its own
    dbh = await openDb({})
    await migrate(dbh.db)
  }, 120_000)
  afterAll(async () => {
    await dbh?.close()
    await chain?.stop()
  })

  const client = () => createChainClient({ rpcUrl: chain.anvil.rpcUrl, chainId: chain.anvil.chainId })

  test('behavior: the writer route: the executor and the admin write through the firewall; any other key, or an executor denied the selector, is refused naming the key, the Allowlist and its allower', async () => {
    const { contracts, roles } = chain.deployment
    const executor = await resolveAllowlistWriteRoute(client(), contracts.allowlist, roles.allower)
    expect(executor).toMatchObject({
      kind: 'firewall',
      to: getAddress(contracts.firewall),
      functionName: 'setAllowPermissions',
      role: 'executor',
      allower: getAddress(contracts.firewall),
    })
    const admin = await resolveAllowlistWriteRoute(client(), contracts.allowlist, roles.simulatorAllower)
    expect(admin).toMatchObject({ kind: 'firewall', role: 'admin' })

    const stranger = privateKeyToAccount(generatePrivateKey()).address
    const refused = await resolveAllowlistWriteRoute(client(), contracts.allowlist, stranger).catch((e) => e)
    expect(refused).toBeInstanceOf(AllowlistWriteRefusedError)
    expect((refused as Error).message).toBe(
      `the allowlist writer's key ${stranger} cannot write the Allowlist ${getAddress(contracts.allowlist)}: ` +
        `its allower is ${getAddress(contracts.firewall)}, a firewall whose admin is ` +
        `${getAddress(roles.simulatorAllower)} and executor ${getAddress(roles.allower)}: the key is neither`,
    )

    // the firewall's admin takes setAllowPermissions from the executor: the writer's key is refused, and why
    const selector = toFunctionSelector('setAllowPermissions(address[],uint256[])')
    const snapshot = await chain.testClient.snapshot()
    await chain.mine([
      {
        from: roles.simulatorAllower,
        to: contracts.firewall,
        data: encodeFunctionData({
          abi: devnetFirewallAbi,
          functionName: 'allowExecutor',
          args: [selector, false],
        }),
        gas: 200_000n,
        label: 'revoke',
      },
    ])
    const barred = await resolveAllowlistWriteRoute(client(), contracts.allowlist, roles.allower).catch(
      (e) => e,
    )
    expect(barred).toBeInstanceOf(AllowlistWriteRefusedError)
    expect((barred as Error).message).toMatch(
      /a firewall whose executor \(this key\) may not call setAllowPermissions \(0x55b3cd94\): its admin must allow it$/,
    )
    await chain.revert(snapshot)
  })

  test('behavior: the allowlist job with a key that can write neither way fails for good with the message; the change stays pending', async () => {
    const { contracts } = chain.deployment
    const repos = createRepos(dbh.db)
    const org = await repos.orgs.create({ name: 'refused', canAllowlist: true })
    const platform = createPlatformService(dbh.db)
    await platform.createAccount(org.id, 'customer', 'test')
    const wallet = privateKeyToAccount(generatePrivateKey()).address
    await platform.createWallet(org, 'customer', { address: wallet, type: 'ETH', allowlisted: true }, 'test')
    const strangerKey = generatePrivateKey()
    const stranger = privateKeyToAccount(strangerKey).address
    const jobs = createJobs({
      db: dbh.db,
      logger: createLogger({ level: 'silent' }),
      chain: {
        chainId: chain.anvil.chainId,
        rpcUrl: chain.anvil.rpcUrl,
        contracts: toContracts({ ...contracts, startBlock: 1n }),
        allowerPrivateKey: strangerKey,
      },
      confirmations: 0,
    })
    const job = { id: 'allowlist-test', name: JOBS.allowlist.name, data: {}, attemptsMade: 0, attempts: 5 }
    const outcome = await jobs.processors[JOBS.allowlist.name]!(job).catch((e) => e)
    expect(outcome).toBeInstanceOf(UnrecoverableError) // not retried: a key cannot gain a role by waiting
    expect((outcome as Error).message).toBe(
      `the allowlist writer's key ${stranger} cannot write the Allowlist ${getAddress(contracts.allowlist)}: ` +
        `its allower is ${getAddress(contracts.firewall)}, a firewall whose admin is ` +
        `${getAddress(chain.deployment.roles.simulatorAllower)} and executor ` +
        `${getAddress(chain.deployment.roles.allower)}: the key is neither`,
    )
    const pending = await repos.allowlistChanges.pending(10)
    expect(pending.map((c) => c.address)).toEqual([wallet.toLowerCase()])
  })

  test('behavior: a deny, its lift by a value without the DENY bit, and a lift behind a wrapper are stored as the chain stored them', async () => {
    const { contracts, roles } = chain.deployment
    const [a, b, c] = [0, 1, 2].map(() => privateKeyToAccount(generatePrivateKey()).address) as [
      Address,
      Address,
      Address,
    ]
    const denyTx = (accounts: Address[], values: bigint[]) =>
      encodeFunctionData({ abi: allowlistAbi, functionName: 'setDenyPermissions', args: [accounts, values] })
    const tx = (from: Address, to: Address, data: Hex, label: string) => ({
      from,
      to,
      data,
      gas: 500_000n,
      label,
    })

    const start = await chain.publicClient.getBlockNumber()
    await chain.mine([
      tx(roles.denier, contracts.allowlist, denyTx([a, b], [DENY | PERMISSION.DEPOSIT, DENY]), 'deny'),
    ])
    // the lift: a value without the DENY bit; the event carries it, the Allowlist stores 0
    const lift = await chain.mine([
      tx(roles.denier, contracts.allowlist, denyTx([a], [DEPOSIT_REDEEM]), 'lift'),
    ])
    // a forwarder becomes the denier (the Allowlist's admin is the firewall: its admin sends it there)
    const deployHash = await chain.testClient.request({
      method: 'eth_sendTransaction',
      params: [{ from: roles.admin, data: compileContract('Forwarder', FORWARDER), gas: '0x200000' }],
    } as never)
    await chain.mine([])
    const receipt = await chain.publicClient.getTransactionReceipt({ hash: deployHash as Hex })
    const forwarder = receipt.contractAddress as Address
    await chain.mine([
      tx(
        roles.simulatorAllower,
        contracts.firewall,
        encodeFunctionData({ abi: devnetAllowlistAbi, functionName: 'setDenier', args: [forwarder] }),
        'set denier',
      ),
    ])
    await chain.mine([
      tx(
        roles.admin,
        forwarder,
        encodeFunctionData({
          abi: forwarderAbi,
          functionName: 'execute',
          args: [contracts.allowlist, denyTx([b], [PERMISSION.REDEEM])],
        }),
        'lift through a wrapper',
      ),
    ])
    await chain.allow([c], DEPOSIT_REDEEM)

    // what the events carry: the lift says DEPOSIT|REDEEM
    const liftLogs = await chain.publicClient.getLogs({ address: contracts.allowlist, blockHash: lift.hash })
    const carried = decodeEventLog({
      abi: allowlistAbi,
      ...liftLogs[0]!,
      eventName: 'SetAllowlistPermissions',
    })
    expect(carried.args.permissions).toEqual([DEPOSIT_REDEEM])
    const stored = async (account: Address) =>
      chain.publicClient.readContract({
        address: contracts.allowlist,
        abi: allowlistAbi,
        functionName: 'getPermissions',
        args: [account],
      })
    expect([await stored(a), await stored(b), await stored(c)]).toEqual([0n, 0n, DEPOSIT_REDEEM])

    const follower = createFollower({
      db: dbh.db,
      client: client(),
      fetcher: createLogFetcher({ client: client() }),
      chainId: chain.anvil.chainId,
      contracts: toContracts({ ...contracts, startBlock: start + 1n }),
      confirmations: 0,
      logger: createLogger({ level: 'silent' }),
    })
    await follower.syncOnce()
    const rows = await dbh
      .db('allowlist_permissions')
      .where({ chain_id: chain.anvil.chainId })
      .whereIn(
        'address',
        [a, b, c].map((x) => x.toLowerCase()),
      )
      .orderBy([{ column: 'block_number' }, { column: 'log_index' }, { column: 'position' }])
      .select('address', 'permissions')
    expect(rows).toEqual([
      { address: a.toLowerCase(), permissions: DENY.toString() },
      { address: b.toLowerCase(), permissions: DENY.toString() },
      { address: a.toLowerCase(), permissions: '0' }, // the lift: stored 0, not the event's 5
      { address: b.toLowerCase(), permissions: '0' }, // behind the wrapper: getPermissions at its block
      { address: c.toLowerCase(), permissions: DEPOSIT_REDEEM.toString() },
    ])
  })
})
