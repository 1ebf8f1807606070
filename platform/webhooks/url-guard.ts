import { lookup } from 'node:dns/promises'
import net from 'node:net'
import { WebhookUrlError } from './errors.ts'

/** Networks no webhook is delivered to (unless WEBHOOK_ALLOW_PRIVATE=1). */
const REFUSED = new net.BlockList()
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this" network
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['192.0.2.0', 24], // documentation (TEST-NET-1)
  ['198.51.100.0', 24], // documentation (TEST-NET-2)
  ['203.0.113.0', 24], // documentation (TEST-NET-3)
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  REFUSED.addSubnet(network, prefix, 'ipv4')
}
for (const [network, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
  ['64:ff9b:1::', 48], // local-use NAT64 (embeds IPv4 at a prefix of the operator's choice)
  ['2001:db8::', 32], // documentation
  ['3fff::', 20], // documentation (RFC 9637)
  ['100::', 64], // discard-only
] as const) {
  REFUSED.addSubnet(network, prefix, 'ipv6')
}

/** The 16 bytes of an IPv6 literal (`::` expanded, a trailing dotted IPv4 read), or undefined. */
function ipv6Bytes(address: string): number[] | undefined {
  if (net.isIP(address) !== 6) return undefined
  let text = address.toLowerCase().replace(/%.*$/, '')
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text)
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number]
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const [head = '', tail] = text.split('::')
  const groups = (part: string) => (part === '' ? [] : part.split(':'))
  const left = groups(head)
  const right = tail === undefined ? [] : groups(tail)
  const missing = 8 - left.length - right.length
  const all = tail === undefined ? left : [...left, ...Array<string>(missing).fill('0'), ...right]
  return all.flatMap((group) => {
    const value = Number.parseInt(group, 16)
    return [value >> 8, value & 0xff]
  })
}

const v4 = (bytes: number[], at: number, xor = 0) =>
  bytes
    .slice(at, at + 4)
    .map((b) => b ^ xor)
    .join('.')
const zeros = (bytes: number[], from: number, to: number) => bytes.slice(from, to).every((b) => b === 0)

/**
 * The IPv4 address an IPv6 literal carries, in the forms that route to it: IPv4-mapped (::ffff:a.b.c.d),
 * IPv4-translated (::ffff:0:a.b.c.d), IPv4-compatible (::a.b.c.d), NAT64 (64:ff9b::a.b.c.d), 6to4
 * (2002:aabb:ccdd::) and Teredo (2001:0::, the client's address inverted in the last 32 bits); else undefined.
 *
 * @example
 * embeddedIpv4('::7f00:1') // '127.0.0.1' (IPv4-compatible)
 * embeddedIpv4('2002:7f00:1::') // '127.0.0.1' (6to4)
 */
export function embeddedIpv4(address: string): string | undefined {
  const b = ipv6Bytes(address)
  if (!b) return undefined
  const word = (i: number) => (b[i]! << 8) | b[i + 1]!
  if (zeros(b, 0, 10) && word(10) === 0xffff) return v4(b, 12) // mapped
  if (zeros(b, 0, 8) && word(8) === 0xffff && word(10) === 0) return v4(b, 12) // translated
  if (zeros(b, 0, 12) && !zeros(b, 12, 15)) return v4(b, 12) // compatible (not :: or ::1)
  if (word(0) === 0x64 && word(2) === 0xff9b && zeros(b, 4, 12)) return v4(b, 12) // NAT64
  if (word(0) === 0x2002) return v4(b, 2) // 6to4
  if (word(0) === 0x2001 && word(2) === 0) return v4(b, 12, 0xff) // Teredo client
  return undefined
}

/**
 * True when `address` (an IP literal) is loopback, private, link-local, unique-local, a documentation or test
 * net, or otherwise not a public unicast address. An IPv6 address that embeds an IPv4 one (mapped, translated,
 * compatible, NAT64, 6to4, Teredo) is judged by the IPv4 address it carries.
 *
 * @example
 * isPrivateAddress('10.1.2.3') // true
 * isPrivateAddress('::ffff:127.0.0.1') // true
 * isPrivateAddress('2002:7f00:1::') // true (6to4 of 127.0.0.1)
 * isPrivateAddress('93.184.215.14') // false
 */
export function isPrivateAddress(address: string): boolean {
  const family = net.isIP(address)
  if (family === 4) return REFUSED.check(address, 'ipv4')
  if (family !== 6) return true
  const inner = embeddedIpv4(address)
  if (inner !== undefined) return isPrivateAddress(inner)
  return REFUSED.check(address, 'ipv6')
}

/**
 * Parses and checks a webhook URL's form: http(s), a host, no credentials. Throws WebhookUrlError.
 *
 * @example
 * parseWebhookUrl('https://hooks.example.com/lsreport').hostname // 'hooks.example.com'
 */
export function parseWebhookUrl(raw: string): URL {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new WebhookUrlError('the webhook url is not a valid URL')
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new WebhookUrlError(`the webhook url must be http or https (got ${url.protocol})`)
  if (url.username || url.password) throw new WebhookUrlError('the webhook url must not carry credentials')
  if (!url.hostname) throw new WebhookUrlError('the webhook url has no host')
  if (url.port === '0') throw new WebhookUrlError('the webhook url must not use port 0')
  return url
}

/** The host of a URL as an IP literal (brackets of IPv6 removed), or undefined for a name. */
function ipLiteral(url: URL): string | undefined {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1')
  return net.isIP(host) ? host : undefined
}

/** How long a DNS lookup may take before the host counts as not resolving. */
const LOOKUP_TIMEOUT_MS = 5_000

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`DNS lookup took over ${ms} ms`)), ms)
    timer.unref()
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

/** Where to connect for a delivery: the address checked, so the connection cannot be re-pointed by DNS. */
export interface ResolvedTarget {
  url: URL
  address: string
  family: 4 | 6
}

/**
 * Resolves a webhook URL's host and refuses it when any of its addresses is private (unless
 * `allowPrivate`). `strictDns` false lets a name that does not resolve (yet) pass: the check at creation;
 * deliveries resolve strictly, and connect to the address checked here.
 */
export async function resolveWebhookTarget(
  raw: string,
  options: { allowPrivate: boolean; strictDns?: boolean },
): Promise<ResolvedTarget | undefined> {
  const url = parseWebhookUrl(raw)
  const literal = ipLiteral(url)
  let addresses: { address: string; family: number }[]
  if (literal) addresses = [{ address: literal, family: net.isIP(literal) }]
  else {
    try {
      addresses = await withTimeout(lookup(url.hostname, { all: true, verbatim: true }), LOOKUP_TIMEOUT_MS)
    } catch (err) {
      if (options.strictDns === false) return undefined
      throw new WebhookUrlError(`the webhook host ${url.hostname} does not resolve`, { cause: err })
    }
  }
  if (!options.allowPrivate) {
    const refused = addresses.find((a) => isPrivateAddress(a.address))
    if (refused) {
      throw new WebhookUrlError(
        `the webhook host ${url.hostname} is a loopback, private or link-local address (${refused.address}); ` +
          'set WEBHOOK_ALLOW_PRIVATE=1 to allow it',
      )
    }
  }
  const first = addresses[0]
  if (!first) throw new WebhookUrlError(`the webhook host ${url.hostname} has no address`)
  return { url, address: first.address, family: first.family === 6 ? 6 : 4 }
}
