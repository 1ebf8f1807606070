import { LRUCache } from 'lru-cache'

declare module 'fastify' {
  interface FastifyInstance {
    /** The serialized answers of the reporting reads by ETag (api/answer-memo.ts). */
    reportAnswers: AnswerMemo
  }
  interface FastifyContextConfig {
    /** The route keeps its answers under their ETag (set by KEPT_ANSWERS in api/reporting/etag.ts). */
    keepsAnswers?: boolean
  }
  interface FastifyReply {
    /** The ETag of the reporting answer being built: set by `answeredFromCache`, read by `keepAnswer`. */
    answerEtag: string | undefined
  }
}

/** A reporting answer as sent: its body and the headers that describe the body. */
export interface KeptAnswer {
  body: string | Buffer
  contentType: string
  contentDisposition: string | undefined
}

/** Reporting answers by ETag (see `answeredFromCache` in api/reporting/etag.ts), bounded in bytes. */
export interface AnswerMemo {
  get(etag: string): KeptAnswer | undefined
  /** Keeps an answer (one larger than the entry bound is not kept). */
  set(etag: string, answer: KeptAnswer): void
  /** Bytes held now. */
  readonly bytes: number
}

/** At most this many bytes of answers per app. */
export const ANSWER_MEMO_MAX_BYTES = 64 * 2 ** 20
/** An answer larger than this is not kept (a 1,000-record read would push out hundreds of small ones). */
export const ANSWER_MEMO_MAX_ENTRY_BYTES = 256 * 2 ** 10

/**
 * The serialized answers of reporting reads, keyed by their ETag. An ETag names a response's whole identity
 * (route, normalized inputs, reading organization, and each day's epoch, visible version and content hash),
 * so an identical later request is answered with the same bytes without presenting or serializing again;
 * a new version of a day changes the ETag, and answers of versions no longer visible are never asked for
 * again and leave as the least recently used. Bounded in bytes (lru-cache `maxSize`: `maxBytes`, least
 * recently used out first; an answer over `maxEntryBytes` is not kept).
 *
 * @example
 * const memo = createAnswerMemo()
 * memo.set('"abc"', { body: '[]', contentType: 'application/json; charset=utf-8', contentDisposition: undefined })
 */
export function createAnswerMemo(options: { maxBytes?: number; maxEntryBytes?: number } = {}): AnswerMemo {
  const maxBytes = options.maxBytes ?? ANSWER_MEMO_MAX_BYTES
  const answers = new LRUCache<string, KeptAnswer>({
    maxSize: maxBytes,
    maxEntrySize: Math.min(options.maxEntryBytes ?? ANSWER_MEMO_MAX_ENTRY_BYTES, maxBytes),
    sizeCalculation: (answer) =>
      // at least 1: lru-cache refuses a size of 0 (an empty body)
      Math.max(1, typeof answer.body === 'string' ? Buffer.byteLength(answer.body) : answer.body.byteLength),
  })
  return {
    get: (etag) => answers.get(etag),
    set(etag, answer) {
      answers.set(etag, answer)
    },
    get bytes() {
      return answers.calculatedSize
    },
  }
}
