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
  ['64:ff9b::', 96], // NAT64 (embeds IPv4)
] as const) {
  REFUSED.addSubnet(network, prefix, 'ipv6')
}

/**
 * True when `address` (an IP literal) is loopback, private, link-local, unique-local or otherwise not a
 * public unicast address. IPv4-mapped IPv6 addresses are judged by their IPv4 part.
 *
 * @example
 * isPrivateAddress('10.1.2.3') // true
 * isPrivateAddress('::ffff:127.0.0.1') // true
 * isPrivateAddress('93.184.215.14') // false
 */
export function isPrivateAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  if (mapped) return isPrivateAddress(mapped[1]!)
  const family = net.isIP(address)
  if (family === 4) return REFUSED.check(address, 'ipv4')
  if (family === 6) return REFUSED.check(address, 'ipv6')
  return true
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
