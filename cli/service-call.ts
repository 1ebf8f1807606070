import { LsReportError } from '../common/errors.ts'

/**
 * An HTTP call from the CLI to a running service (`lsreport backfill` through `up`, `lsreport export`): JSON in
 * and out, the bearer token when given; a non-2xx answer becomes an error naming the call and the service's
 * `message`.
 */
export async function callService<T>(
  method: string,
  url: string,
  token: string | undefined,
  body?: unknown,
): Promise<T> {
  const res = await fetch(url, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const answer = (await res.json().catch(() => ({}))) as { message?: string }
  if (!res.ok) {
    throw new LsReportError(
      `the running service answered ${res.status} to ${method} ${url}: ${answer.message ?? ''}`,
    )
  }
  return answer as T
}
