/**
 * Query parameters whose values are secrets (lower case; matched case-insensitively): OAuth tokens, client
 * secrets and codes, passwords, API keys. One list for every URL a log line holds (docs/operations.md "Logs").
 */
export const SECRET_QUERY_NAMES: ReadonlySet<string> = new Set([
  'access_token',
  'refresh_token',
  'id_token',
  'token',
  'client_secret',
  'secret',
  'password',
  'passwd',
  'pwd',
  'api_key',
  'apikey',
  'key',
  'code',
  'signature',
  'sig',
  'auth',
  'authorization',
  'credential',
  'credentials',
  'session',
])

/** What a redacted value reads in a log. */
export const REDACTED = '[redacted]'

/**
 * The URL (a path with its query, or an absolute URL) with the value of every query parameter named in
 * SECRET_QUERY_NAMES replaced by `[redacted]`; everything else is kept byte for byte (a URL without such a
 * parameter is returned as it is). A name is compared after percent-decoding, so `%61ccess_token` is caught.
 *
 * @example
 * redactUrl('/v0/x?access_token=eyJ...&limit=5') // '/v0/x?access_token=[redacted]&limit=5'
 */
export function redactUrl(url: string): string {
  const q = url.indexOf('?')
  if (q < 0) return url
  const hash = url.indexOf('#', q)
  const end = hash < 0 ? url.length : hash
  const pairs = url.slice(q + 1, end).split('&')
  let changed = false
  for (let i = 0; i < pairs.length; i++) {
    const pair = pairs[i]!
    const eq = pair.indexOf('=')
    if (eq < 0) continue
    if (SECRET_QUERY_NAMES.has(decodedName(pair.slice(0, eq)))) {
      pairs[i] = `${pair.slice(0, eq)}=${REDACTED}`
      changed = true
    }
  }
  return changed ? `${url.slice(0, q + 1)}${pairs.join('&')}${url.slice(end)}` : url
}

/** A query parameter's name as a server reads it: `+` is a space, percent escapes decoded, lower case. */
function decodedName(raw: string): string {
  const name = raw.replaceAll('+', ' ')
  try {
    return decodeURIComponent(name).trim().toLowerCase()
  } catch {
    return name.trim().toLowerCase()
  }
}
