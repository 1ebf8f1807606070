/**
 * A chain of known logs for the log fetcher and block read tests: anvil with two copies of a tiny emitter
 * contract (standing in for River and the Allowlist) that emit the mainnet event signatures in bulk, raw logs
 * of any shape (a legacy indexed SetAllowlistPermissions, a malformed Transfer), a quiet tail of empty
 * blocks, and a counter for historical reads. The expected logs come from the receipts, decoded with viem.
 */
import solc from 'solc'
import {
  type Address,
  createPublicClient,
  createWalletClient,
  decodeEventLog,
  encodeAbiParameters,
  type Hash,
  type Hex,
  http,
  keccak256,
  parseAbi,
  toEventSelector,
  toHex,
} from 'viem'
import { allowlistAbi, riverAbi } from '../../chain/abi.ts'
import { chainFor } from '../../chain/client.ts'
import type { LogMeta } from '../../chain/log-decoding.ts'
import { toAddress } from '../../common/address.ts'
import { type Anvil, startAnvil } from '../../devnet/anvil.ts'

/**
 * A tiny contract that emits the mainnet event signatures in bulk (Transfer and UserDeposit of River,
 * SetAllowlistPermissions of the Allowlist), raw logs of any shape, and keeps a counter for historical reads.
 */
const EMITTER_SOURCE = `
// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;
contract Emitter {
  event Transfer(address indexed from, address indexed to, uint256 value);
  event UserDeposit(address indexed depositor, address indexed recipient, uint256 amount);
  event SetAllowlistPermissions(address[] accounts, uint256[] permissions);
  uint256 public total;

  function transfers(uint256 start, uint256 count) external {
    for (uint256 i = start; i < start + count; i++) {
      emit Transfer(address(uint160(i)), address(uint160(i + 1)), i * 1e18 + 1);
    }
    total += count;
  }
  function deposit(address recipient, uint256 amount) external {
    emit UserDeposit(msg.sender, recipient, amount);
  }
  function permissions(address[] calldata accounts, uint256[] calldata perms) external {
    emit SetAllowlistPermissions(accounts, perms);
  }
  function raw(bytes32[] calldata topics, bytes calldata data) external {
    bytes memory d = data;
    uint256 n = topics.length;
    assembly {
      let ptr := add(d, 32)
      let len := mload(d)
      let t := topics.offset
      switch n
      case 0 { log0(ptr, len) }
      case 1 { log1(ptr, len, calldataload(t)) }
      case 2 { log2(ptr, len, calldataload(t), calldataload(add(t, 32))) }
      case 3 { log3(ptr, len, calldataload(t), calldataload(add(t, 32)), calldataload(add(t, 64))) }
      default { log4(ptr, len, calldataload(t), calldataload(add(t, 32)), calldataload(add(t, 64)), calldataload(add(t, 96))) }
    }
  }
  function boom() external pure returns (uint256) {
    revert("boom");
  }
}
`

/** The emitter's calls (emitting, raw logs, the `total` counter, a reverting view). */
/** viem's decoded args with every address (alone or in an array) lower case, as chain/log-decoding.ts gives them. */
function storedAddresses(args: unknown): unknown {
  const one = (v: unknown): unknown =>
    typeof v === 'string' && /^0x[0-9a-fA-F]{40}$/.test(v) ? toAddress(v) : Array.isArray(v) ? v.map(one) : v
  if (Array.isArray(args)) return args.map(one)
  if (args && typeof args === 'object')
    return Object.fromEntries(Object.entries(args).map(([k, v]) => [k, one(v)]))
  return args
}

export const emitterAbi = parseAbi([
  'function transfers(uint256 start, uint256 count)',
  'function deposit(address recipient, uint256 amount)',
  'function permissions(address[] accounts, uint256[] perms)',
  'function raw(bytes32[] topics, bytes data)',
  'function total() view returns (uint256)',
  'function boom() view returns (uint256)',
])

/** riverAbi and allowlistAbi events together: what the fetcher requests from both emitters. */
export const emittedAbi = [...riverAbi, ...allowlistAbi] as const

/** Compiles the emitter with solc (in-process). */
function compileEmitter(): Hex {
  const input = {
    language: 'Solidity',
    sources: { 'Emitter.sol': { content: EMITTER_SOURCE } },
    settings: { evmVersion: 'prague', outputSelection: { '*': { '*': ['evm.bytecode.object'] } } },
  }
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as {
    errors?: { severity: string; formattedMessage: string }[]
    contracts: Record<string, Record<string, { evm: { bytecode: { object: string } } }>>
  }
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error')
  if (errors.length > 0) throw new Error(errors.map((e) => e.formattedMessage).join('\n'))
  return `0x${output.contracts['Emitter.sol']!.Emitter!.evm.bytecode.object}`
}

/** A log the chain holds, as the receipts and viem's strict decoding give it. */
export interface ExpectedLog extends LogMeta {
  key: string
  eventName: string
  args: unknown
}

/** `blockNumber:logIndex`, the identity of a log. */
export const logKey = (log: { blockNumber: bigint; logIndex: number }) => `${log.blockNumber}:${log.logIndex}`

/** The emitter chain and what it holds. */
export interface LogEmitterChain {
  anvil: Anvil
  /** the emitter standing in for River (Transfer, UserDeposit, the counter) */
  river: Address
  /** the emitter standing in for the Allowlist (SetAllowlistPermissions) */
  allowlist: Address
  /** blocks of the bulk region: busy blocks of ~250 logs separated by gaps of empty blocks */
  bulkFrom: bigint
  bulkTo: bigint
  /** every log of the bulk region, in (blockNumber, logIndex) order */
  expected: ExpectedLog[]
  /** the block of the one legacy indexed SetAllowlistPermissions */
  legacyBlock: bigint
  /** the block and transaction of the one malformed Transfer (2 bytes of data) */
  malformedBlock: bigint
  malformedTx: Hash
  /** a tail of 600 empty blocks */
  quietFrom: bigint
  quietTo: bigint
  /** each busy block and the emitter counter (`total`) after it */
  totalBlocks: { block: bigint; total: bigint }[]
}

/**
 * Starts anvil and builds the emitter chain (`busyBlocks` busy blocks, default 24). Stop it with `anvil.stop()`.
 *
 * @example
 * const chain = await startLogEmitterChain()
 * try { ... } finally { await chain.anvil.stop() }
 */
export async function startLogEmitterChain(options: { busyBlocks?: number } = {}): Promise<LogEmitterChain> {
  const busyBlocks = options.busyBlocks ?? 24
  const anvil = await startAnvil({})
  try {
    const transport = http(anvil.rpcUrl)
    const pub = createPublicClient({ transport, pollingInterval: 20 })
    const [sender] = await createWalletClient({ transport }).getAddresses()
    const wallet = createWalletClient({
      account: sender!,
      chain: chainFor(anvil.chainId, anvil.rpcUrl),
      transport,
    })
    const request = pub.request as unknown as (args: {
      method: string
      params: unknown[]
    }) => Promise<unknown>
    const rpc = (method: string, params: unknown[] = []) => request({ method, params })

    const bytecode = compileEmitter()
    const deploy = async () => {
      const hash = await wallet.deployContract({ abi: emitterAbi, bytecode })
      return (await pub.waitForTransactionReceipt({ hash })).contractAddress!
    }
    const river = await deploy()
    const allowlist = await deploy()

    // Bulk region: 24 busy blocks (3 emitting txs each, ~250 logs) separated by gaps of empty blocks.
    await rpc('evm_setAutomine', [false])
    const hashes: Hash[] = []
    const bulkFrom = (await pub.getBlockNumber({ cacheTime: 0 })) + 1n
    const totalBlocks: { block: bigint; total: bigint }[] = []
    let total = 0n
    for (let k = 0; k < busyBlocks; k++) {
      const base = BigInt(k * 1000 + 1)
      hashes.push(
        await wallet.writeContract({
          address: river,
          abi: emitterAbi,
          functionName: 'transfers',
          args: [base, 150n],
          gas: 5_000_000n,
        }),
      )
      const accounts = [1, 2, 3].map((j) => toHex(BigInt(k * 10 + j + 0x1000), { size: 20 }))
      hashes.push(
        await wallet.writeContract({
          address: allowlist,
          abi: emitterAbi,
          functionName: 'permissions',
          args: [accounts, [5n, 1n, (1n << 255n) | BigInt(k)]],
          gas: 1_000_000n,
        }),
      )
      hashes.push(
        await wallet.writeContract({
          address: river,
          abi: emitterAbi,
          functionName: 'deposit',
          args: [toHex(BigInt(k + 0x2000), { size: 20 }), BigInt(k) * 10n ** 18n],
          gas: 1_000_000n,
        }),
      )
      hashes.push(
        await wallet.writeContract({
          address: river,
          abi: emitterAbi,
          functionName: 'transfers',
          args: [base + 500n, 100n],
          gas: 5_000_000n,
        }),
      )
      await rpc('evm_mine')
      total += 250n
      totalBlocks.push({ block: await pub.getBlockNumber({ cacheTime: 0 }), total })
      await rpc('anvil_mine', [toHex(1 + ((k * 7) % 23))])
    }
    const bulkTo = await pub.getBlockNumber({ cacheTime: 0 })

    // Expected logs from the receipts (independent of eth_getLogs), decoded with viem directly.
    const expected: ExpectedLog[] = []
    for (const hash of hashes) {
      const receipt = await pub.getTransactionReceipt({ hash })
      if (receipt.status !== 'success') throw new Error(`emitter transaction ${hash} reverted`)
      for (const log of receipt.logs) {
        const decoded = decodeEventLog({ abi: emittedAbi, data: log.data, topics: log.topics, strict: true })
        expected.push({
          key: logKey({ blockNumber: log.blockNumber, logIndex: log.logIndex }),
          address: toAddress(log.address),
          blockNumber: log.blockNumber,
          blockHash: log.blockHash,
          transactionHash: log.transactionHash,
          transactionIndex: log.transactionIndex,
          logIndex: log.logIndex,
          eventName: decoded.eventName,
          // the decoder hands addresses over in their stored form (lower case)
          args: storedAddresses(decoded.args),
        })
      }
    }
    expected.sort((a, b) =>
      a.blockNumber === b.blockNumber ? a.logIndex - b.logIndex : a.blockNumber < b.blockNumber ? -1 : 1,
    )
    if (expected.length !== busyBlocks * (150 + 1 + 1 + 100)) {
      throw new Error(`expected ${busyBlocks * 252} logs in the receipts, got ${expected.length}`)
    }

    await rpc('evm_setAutomine', [true])
    // Legacy Allowlist log: `address[] indexed accounts`, so topic1 = keccak256 of the accounts.
    const legacyAccounts = encodeAbiParameters(
      [{ type: 'address[]' }],
      [['0x00000000000000000000000000000000000000a1']],
    )
    const legacyHash = await wallet.writeContract({
      address: allowlist,
      abi: emitterAbi,
      functionName: 'raw',
      args: [
        [
          toEventSelector('SetAllowlistPermissions(address[],uint256[])'),
          keccak256(`0x${legacyAccounts.slice(130)}`),
        ],
        encodeAbiParameters([{ type: 'uint256[]' }], [[5n]]),
      ],
    })
    const legacyBlock = (await pub.waitForTransactionReceipt({ hash: legacyHash })).blockNumber
    // Malformed log: Transfer's topic0 and topics, but 2 bytes of data instead of 32.
    const malformedTx = await wallet.writeContract({
      address: river,
      abi: emitterAbi,
      functionName: 'raw',
      args: [
        [
          toEventSelector('Transfer(address,address,uint256)'),
          toHex(1n, { size: 32 }),
          toHex(2n, { size: 32 }),
        ],
        '0x1234',
      ],
    })
    const malformedBlock = (await pub.waitForTransactionReceipt({ hash: malformedTx })).blockNumber
    // Quiet tail for the growth test.
    const quietFrom = malformedBlock + 1n
    await rpc('anvil_mine', [toHex(600)])
    const quietTo = await pub.getBlockNumber({ cacheTime: 0 })
    return {
      anvil,
      river,
      allowlist,
      bulkFrom,
      bulkTo,
      expected,
      legacyBlock,
      malformedBlock,
      malformedTx,
      quietFrom,
      quietTo,
      totalBlocks,
    }
  } catch (error) {
    await anvil.stop()
    throw error
  }
}
