import { hash } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { LRUCache } from 'lru-cache'
import type { ReportDay } from '../../db/repos/reports.ts'
import { currencyOf } from '../fiat-view.ts'

/**
 * The report headers of an answer, its ETag (304 on a matching If-None-Match) and the answers kept under their
 * ETag (api/answer-memo.ts).
 */

/** An answer's data_as_of: when the newest of its days' versions became visible (RFC 3339, ms). */
export function dataAsOfDays(days: readonly Pick<ReportDay, 'data_as_of'>[]): string {
  let asOf = (days[0] as Pick<ReportDay, 'data_as_of'>).data_as_of
  for (const day of days) if (day.data_as_of > asOf) asOf = day.data_as_of
  return isoOf(asOf)
}

/** The RFC 3339 text of the days' instants, worked out once per instant read (a day is read once a second). */
const isoTexts = new WeakMap<Date, string>()

/** `instant.toISOString()`, from `isoTexts` once worked out. */
function isoOf(instant: Date): string {
  let text = isoTexts.get(instant)
  if (text === undefined) {
    text = instant.toISOString()
    isoTexts.set(instant, text)
  }
  return text
}

/** The days of an answer as the report headers need them. */
type HeaderDay = Pick<ReportDay, 'report_epoch' | 'date' | 'visible_version' | 'data_as_of'>

/**
 * Sets the report headers of an answer over `days` (one day, or a range's days in order): `X-Report-Epoch`,
 * `X-Report-Date` and `X-Report-Version` name the last day's report and its version; `X-Report-Data-As-Of`
 * is when the newest of the days' versions became visible (the answer's `data_as_of`: a read `as_of` that
 * instant or later, until the next restatement, answers the same bytes). Returns that instant.
 */
export function setReportHeaders(reply: FastifyReply, days: HeaderDay | readonly HeaderDay[]): string {
  const list = Array.isArray(days) ? (days as readonly HeaderDay[]) : undefined
  const last = list ? (list[list.length - 1] as HeaderDay) : (days as HeaderDay)
  const dataAsOf = list ? dataAsOfDays(list) : isoOf(last.data_as_of)
  reply.header('x-report-epoch', last.report_epoch)
  reply.header('x-report-date', last.date)
  reply.header('x-report-version', String(last.visible_version))
  reply.header('x-report-data-as-of', dataAsOf)
  return dataAsOf
}

/** The days of an answer as its ETag needs them. */
type EtagDay = Pick<ReportDay, 'report_epoch' | 'visible_version' | 'content_hash' | 'status'>

/**
 * ETag of a response built from computed days: the days' (epoch, visible version, content hash) and the
 * request's normalized inputs. Set only when every day is `computed` (a day being recomputed answers with
 * `Cache-Control: no-cache` and no ETag). Returns true once the request is answered: 304 when If-None-Match
 * matches, else, on a route made with KEPT_ANSWERS, the bytes of an identical earlier answer
 * (`reportAnswers`). Returns false when the handler must build the answer.
 */
export function answeredFromCache(
  request: FastifyRequest,
  reply: FastifyReply,
  days: readonly EtagDay[],
  inputs: unknown,
): boolean {
  if (days.length === 0 || !allComputed(days)) {
    reply.header('cache-control', 'no-cache')
    return false
  }
  // Fastify builds a new routeOptions object at each read: read it once
  const route = request.routeOptions
  return answeredWithEtag(
    request,
    reply,
    etagOfRoute(request, route.url, days, inputs),
    route.config.keepsAnswers,
  )
}

/**
 * The ETag `answeredFromCache` gives an answer over computed `days` with `inputs` (a handler that keeps it
 * beside what it answers calls it once, and `answeredWithEtag` with it on each request).
 */
export function answerEtag(request: FastifyRequest, days: readonly EtagDay[], inputs: unknown): string {
  return etagOfRoute(request, request.routeOptions.url, days, inputs)
}

/** The ETag of an answer of the route `url` over computed `days` with `inputs`. */
function etagOfRoute(
  request: FastifyRequest,
  url: string | undefined,
  days: readonly EtagDay[],
  inputs: unknown,
): string {
  // the currency asked for changes the answer (fiat values), as the inputs do
  let text = `${request.method} ${url}\n${JSON.stringify(inputs)}\n${currencyOf(request) ?? ''}\n`
  for (const d of days) text += `${d.report_epoch}:${d.visible_version}:${d.content_hash ?? ''}\n`
  return etagOf(text)
}

/**
 * `answeredFromCache` given the answer's ETag (of computed days): sets ETag and Cache-Control, answers 304
 * when If-None-Match matches, else, when the route `keepsAnswers`, the bytes of an identical earlier answer.
 * Returns false when the handler must build the answer.
 */
export function answeredWithEtag(
  request: FastifyRequest,
  reply: FastifyReply,
  etag: string,
  keepsAnswers: boolean | undefined,
): boolean {
  reply.header('etag', etag)
  reply.header('cache-control', 'private, no-cache')
  const match = request.headers['if-none-match']
  if (match !== undefined) {
    const tags = match.split(',').map((t) => t.trim().replace(/^W\//, ''))
    if (tags.includes(etag) || tags.includes('*')) {
      reply.code(304).send()
      return true
    }
  }
  // a route without the keepAnswer hook never fills the memo: nothing to look up
  if (keepsAnswers !== true) return false
  const kept = request.server.reportAnswers.get(etag)
  if (kept) {
    reply.type(kept.contentType)
    if (kept.contentDisposition !== undefined) reply.header('content-disposition', kept.contentDisposition)
    reply.send(kept.body)
    return true
  }
  // on the reply itself: no table keyed by short-lived replies to grow until the next full GC
  reply.answerEtag = etag
  return false
}

/** Whether every day is `computed`. */
function allComputed(days: readonly Pick<ReportDay, 'status'>[]): boolean {
  for (const day of days) if (day.status !== 'computed') return false
  return true
}

/**
 * Route onSend hook of the reporting reads: keeps a 200 answer's bytes under its ETag in the app's
 * `reportAnswers`, so the next identical request is answered from them (`answeredFromCache`).
 */
function keepAnswer(
  request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  done: (err: Error | null, payload: unknown) => void,
): void {
  const etag = reply.answerEtag
  if (
    etag !== undefined &&
    reply.statusCode === 200 &&
    (typeof payload === 'string' || Buffer.isBuffer(payload))
  ) {
    const disposition = reply.getHeader('content-disposition')
    request.server.reportAnswers.set(etag, {
      body: payload,
      contentType: String(reply.getHeader('content-type')),
      contentDisposition: disposition === undefined ? undefined : String(disposition),
    })
  }
  done(null, payload)
}

/**
 * Route options of a reporting read whose answers are kept under their ETag (api/answer-memo.ts): the
 * `keepAnswer` hook that fills the memo and the flag by which `answeredFromCache` looks in it, always together.
 */
export const KEPT_ANSWERS = { onSend: keepAnswer, config: { keepsAnswers: true } }

/** ETags of short identities already hashed (a client polling one read asks the same one again). */
const etags = new LRUCache<string, string>({ max: 10_000 })
const ETAG_MEMO_MAX_TEXT = 512

/** The ETag of a response's identity: the first 32 characters of its sha256, base64url, quoted. */
function etagOf(text: string): string {
  let etag = etags.get(text)
  if (etag !== undefined) return etag
  etag = `"${hash('sha256', text, 'base64url').slice(0, 32)}"`
  if (text.length <= ETAG_MEMO_MAX_TEXT) etags.set(text, etag)
  return etag
}
