import { type Hex, keccak256 } from 'viem'

/**
 * The protocol's runtime codes by keccak256: which contract and version a code read with `eth_getCode` is.
 * `lsreport doctor` names each proxy's implementation by it, besides its address (chain/versions.ts).
 *
 * Facts, not the bytecode: the hash and size of every runtime code the protocol's deployment files hold
 * (fixtures/protocol/<chain>/bytecode/index.json, mainnet and Hoodi; `chain/code-hashes.test.ts` keeps them
 * equal). Hoodi's 1.2.1 builds differ from mainnet's for most contracts (other compiler metadata): both are
 * listed. No production path reads fixtures/.
 */

/** What a known runtime code is: an implementation version, the proxy (TUPProxy) or the firewall. */
export interface KnownCode {
  kind: 'implementation' | 'proxy' | 'firewall'
  /** River, Oracle, ... for an implementation; `TUPProxy` or `Firewall` */
  contract: string
  /** x.y.z of an implementation; null for the proxy and the firewall */
  version: string | null
  /** keccak256 of the runtime code, its immutables zeroed */
  hash: Hex
  /** bytes */
  size: number
  /** the deployments whose code it is */
  chains: readonly ('mainnet' | 'hoodi')[]
  /**
   * Byte offsets of the 32-byte words holding immutables, which a deployed code fills and the hash counts as
   * zero: only Hoodi's Firewall (solc 0.8.20) has one, its `destination`, in two words. Mainnet's Firewall
   * (0.8.10) keeps it in storage.
   */
  immutables: readonly number[]
}

type Chains = KnownCode['chains']

function build(contract: string, version: string, size: number, chains: Chains, hash: Hex): KnownCode {
  return { kind: 'implementation', contract, version, hash, size, chains, immutables: [] }
}

function shared(
  contract: 'TUPProxy' | 'Firewall',
  size: number,
  chains: Chains,
  hash: Hex,
  immutables: readonly number[] = [],
): KnownCode {
  const kind = contract === 'TUPProxy' ? 'proxy' : 'firewall'
  return { kind, contract, version: null, hash, size, chains, immutables }
}

/** Every runtime code of the protocol's deployment files (mainnet, then Hoodi's builds that differ). */
export const KNOWN_CODES: readonly KnownCode[] = [
  build(
    'River',
    '0.4.0',
    12372,
    ['mainnet'],
    '0x7ff549c14a6e6b1c19aa9b69439f479dfec51aa66556a1a6b264d40f50f7615a',
  ),
  build(
    'River',
    '0.5.0',
    13846,
    ['mainnet'],
    '0x66a077589ccccbce31ed1bd08159200597772d675e4d5f69063b5b941628e8a9',
  ),
  build(
    'River',
    '1.0.0',
    24500,
    ['mainnet'],
    '0x3f0a45d4a5202a387b96142c5bc5b4fadff3978dfb327c8d61137d0b53bc0bc7',
  ),
  build(
    'River',
    '1.0.1',
    24416,
    ['mainnet'],
    '0xa67048eee008f96bd8d970584e80efe0cf843e99cd48f924fc157594b71b29d2',
  ),
  build(
    'River',
    '1.2.1',
    22752,
    ['mainnet'],
    '0x8b042d6c10066290832a199738d71d4eef583442e2361bd29777ef5315f00044',
  ),
  build(
    'Oracle',
    '0.4.0',
    9054,
    ['mainnet'],
    '0xf40c49ee827cd33bc452e7afe0ff6b5544f6aaf90d0c3d98a96c08e30427e91f',
  ),
  build(
    'Oracle',
    '1.0.0',
    7184,
    ['mainnet'],
    '0x0537bb0e2b4e40d9c6d954fdc013b56adfd0f4a8bc5d53e294a9aa6d1a5af76f',
  ),
  build(
    'Oracle',
    '1.2.1',
    6109,
    ['mainnet'],
    '0x50e90806a4108e26298834cb5d797c2f20c36d6f610f30f33fec89db2ffb1ac2',
  ),
  build(
    'Allowlist',
    '0.4.0',
    3038,
    ['mainnet'],
    '0x1ee73674b5ec96f49fe791dc097b99476d854713856d8bd225940ed65abb4695',
  ),
  build(
    'Allowlist',
    '0.5.0',
    3024,
    ['mainnet'],
    '0xfcb697f4c72eeedecb01e10e55d068b3e3c0fb4163d6b958ff64b556f388470c',
  ),
  build(
    'Allowlist',
    '1.2.1',
    3551,
    ['mainnet', 'hoodi'],
    '0x15d03c586f13117e497cd00bd120a4886b58451c9d57262f98f5b497f018292f',
  ),
  build(
    'RedeemManager',
    '1.0.0',
    8516,
    ['mainnet'],
    '0x7622f0fbeecd9e03a92f35edbef6d7f21ca03033a666367539d3947b75ed15dc',
  ),
  build(
    'RedeemManager',
    '1.1.0',
    8530,
    ['mainnet'],
    '0xe018d6927f0d04d447c034fb26ebf4a4c315745b2ad999d4f1146e259156c031',
  ),
  build(
    'RedeemManager',
    '1.2.1',
    8835,
    ['mainnet'],
    '0xd92524f58d09d5435c9abb72240ddcab8d25104fa136cd046bf1bb94b88afb09',
  ),
  build(
    'OperatorsRegistry',
    '0.4.0',
    12856,
    ['mainnet'],
    '0x8672f7cb11dabc165698cf2b5d485b9b853d566884dd66fcd75e89728bea8dcd',
  ),
  build(
    'OperatorsRegistry',
    '1.0.0',
    21510,
    ['mainnet'],
    '0xe6e5a672b5de3a0400a204bafb0f0f536a46ecfae69f401311ea34c53b72690f',
  ),
  build(
    'OperatorsRegistry',
    '1.0.1',
    21212,
    ['mainnet'],
    '0xea22b02bf0dcd7ea4aa0fb07c44ebaa98570deaa5dbf54af8ae139d16d2db6ff',
  ),
  build(
    'OperatorsRegistry',
    '1.1.0',
    21416,
    ['mainnet'],
    '0xcc3abe65c9b6b50f680a658dd4ec5e041a9ad4453ecb0ba9f3f160031752e40d',
  ),
  build(
    'OperatorsRegistry',
    '1.2.1',
    16717,
    ['mainnet'],
    '0x3ceb7f7bc49256f83142c337f91873163b690950f241c27877c084c9ce4559e9',
  ),
  build(
    'Withdraw',
    '0.4.0',
    179,
    ['mainnet'],
    '0x5c06bb4627e0c516d602629f83286f60e6c49d85d81a0b912d5aeb6be3ad7704',
  ),
  build(
    'Withdraw',
    '1.0.0',
    1142,
    ['mainnet'],
    '0xc8a1eabb12564837e498df8079174ad6be29b2bafd6d2adeab757e8487624be0',
  ),
  build(
    'Withdraw',
    '1.2.1',
    941,
    ['mainnet'],
    '0xaf2b40605b22adff2f5de3fe9c034a36f64867420b8f97e4360dbcc3932b3ef7',
  ),
  build(
    'ELFeeRecipient',
    '0.4.0',
    1029,
    ['mainnet'],
    '0x1c033b2b05e7a141fdaeb2b420682dd962eb037122be2ba0ee4eb5ad6ffc3c57',
  ),
  build(
    'ELFeeRecipient',
    '1.0.0',
    1040,
    ['mainnet'],
    '0x8826d261a0b8e16978dbbce1f749d0124953690819a1473c8af349e35a663e72',
  ),
  build(
    'ELFeeRecipient',
    '1.2.1',
    820,
    ['mainnet'],
    '0x9def5bbb94e0f3d7366f64215fe6fd5371cdb801ba9402dcbc282a074ccbd2f4',
  ),
  build(
    'CoverageFund',
    '0.5.0',
    1556,
    ['mainnet'],
    '0x978c1de176eaf4dc9a92852cc4feafe1e3f8ad3c818825c60aa4fcee74099d60',
  ),
  build(
    'CoverageFund',
    '1.2.1',
    1347,
    ['mainnet'],
    '0x6c35b06a73ce8a5b50d075447130988d2abc82d0ef529be5ae1a3da63ccd2933',
  ),
  shared('TUPProxy', 2763, ['mainnet'], '0x77db0c85b1557b39a74e99ce41b9f714618026cff35b5b2bff78f77beed3a2c4'),
  shared('Firewall', 1837, ['mainnet'], '0x44e3f886783ecece85b4e5511b26b046270140a12eaae34711751eb94aeb1d7b'),
  build(
    'River',
    '1.2.1',
    22752,
    ['hoodi'],
    '0x4fba2feabc1ea593793bf8f4fb32c9d6b73309fd3937a29131dfc674ae994740',
  ),
  build(
    'Oracle',
    '1.2.1',
    6109,
    ['hoodi'],
    '0xc23528bb0e047b1af41d737925c2dea4c522bdada1fe2820f2614616ba865bd7',
  ),
  build(
    'RedeemManager',
    '1.2.1',
    8835,
    ['hoodi'],
    '0x365cf067018272a8fc3466310e9a1f735ac2a4f0bdc1829179e9abcd7978d7d0',
  ),
  build(
    'OperatorsRegistry',
    '1.2.1',
    16717,
    ['hoodi'],
    '0x0822ed827690600d9e8f188dc725d18c023c1c909407bb7e6f88059f5e9f0ba6',
  ),
  build(
    'Withdraw',
    '1.2.1',
    941,
    ['hoodi'],
    '0xba9a82fcb28a642d8edfa0839d656abfc52c9bb76f62b79697750d451c9af34c',
  ),
  build(
    'ELFeeRecipient',
    '1.2.1',
    820,
    ['hoodi'],
    '0x86419a43827dee05736a5a62bd6a082238bb86a6c09e94f850ecb79ce917a1b1',
  ),
  build(
    'CoverageFund',
    '1.2.1',
    1347,
    ['hoodi'],
    '0x607e11386bfd4b28e4da0c63b5b930e186b268b372881b1f3bf349d5241a2be7',
  ),
  shared('TUPProxy', 2329, ['hoodi'], '0x6464f76471f127941907dfbec102277f137b5e3cc2ea5007057117cdc89f1961'),
  shared(
    'Firewall',
    1625,
    ['hoodi'],
    '0xf041f788515e6af2eb9d9b0f4f3e68ceaebc02d5f51f1795b3e27da1b2e0fade',
    [1070, 1297],
  ),
]

const BY_HASH = new Map(KNOWN_CODES.map((c) => [c.hash, c]))
const WITH_IMMUTABLES = KNOWN_CODES.filter((c) => c.immutables.length > 0)

/**
 * `code` with the 32-byte word at each byte offset zeroed: a deployed code's immutables, as the compiler's
 * `deployedBytecode` leaves them. Throws when a word lies beyond the code.
 *
 * @example
 * maskImmutables('0x7f' + 'ab'.repeat(32) + '00', [1]) // '0x7f' + '00'.repeat(32) + '00'
 */
export function maskImmutables(code: Hex, offsets: readonly number[]): Hex {
  let hex = code.slice(2)
  for (const offset of offsets) {
    if (offset < 0 || (offset + 32) * 2 > hex.length) {
      throw new RangeError(`immutable word at ${offset} beyond a code of ${hex.length / 2} bytes`)
    }
    hex = hex.slice(0, offset * 2) + '0'.repeat(64) + hex.slice((offset + 32) * 2)
  }
  return `0x${hex}`
}

/** What `identifyCode` found: the hash (the table's, immutables masked, when known) and the known code. */
export interface CodeIdentity {
  hash: Hex
  size: number
  known: KnownCode | undefined
}

/**
 * Names a runtime code read with `eth_getCode`: its keccak256 in the table, or, for a code with immutables
 * (Hoodi's Firewall), the hash with those words zeroed. `known` is undefined for any other code (a devnet's
 * own contracts, an unknown build, no code).
 *
 * @example
 * identifyCode(await client.getCode({ address: implementation }))
 * // {hash: '0x8b04...', size: 22752, known: {kind: 'implementation', contract: 'River', version: '1.2.1', ...}}
 */
export function identifyCode(code: Hex | undefined): CodeIdentity {
  const hex = code ?? '0x'
  const size = (hex.length - 2) / 2
  const hash = keccak256(hex)
  const direct = BY_HASH.get(hash)
  if (direct && direct.size === size) return { hash, size, known: direct }
  for (const candidate of WITH_IMMUTABLES) {
    if (candidate.size !== size) continue
    if (keccak256(maskImmutables(hex, candidate.immutables)) === candidate.hash) {
      return { hash: candidate.hash, size, known: candidate }
    }
  }
  return { hash, size, known: undefined }
}

/**
 * A known code's name for a person: `River 1.2.1`, `the TUPProxy`, `the Firewall`.
 *
 * @example
 * codeName(identifyCode(code).known!) // 'River 1.2.1'
 */
export function codeName(known: KnownCode): string {
  return known.version === null ? `the ${known.contract}` : `${known.contract} ${known.version}`
}
