import type { FastifyInstance } from 'fastify'

/** Answers whose header sequences are all learned (each request's, from the start of the process). */
const LEARN_FIRST = 1_000
/** After them, one answer in this many is learned from (a sequence first seen later: a new route, an error). */
const LEARN_EVERY = 1_000
/** At most this many header sequences are kept (a few per route and outcome in practice). */
const MAX_SHAPES = 256
/** A sequence shorter than this keeps fast properties anyway: nothing to learn. */
const MIN_NAMES = 16

/**
 * Keeps the objects holding the answers' headers in V8's fast mode. Fastify adds each header to an object
 * by key (`reply.header`), and V8 turns an object given more than ~19 properties that way into a dictionary
 * (slower to add to and to read, when the head is written too, and ~1.7 KB more garbage an answer), unless
 * it has seen the same sequence of properties added by name before: then it follows the shapes it made for
 * them. Every answer of the API has 12 security headers before its own (the 1-address read: 26), so the
 * header sequences the answers go through are learned (every answer's at first, one in LEARN_EVERY after)
 * and each is built once by name (`Object.fromEntries`) and kept, so V8 keeps its shapes; later answers with
 * that sequence keep fast properties. Measured with bench:api: the 1-address read's CPU at 0.57-0.76 of the
 * shape-matched bare route's instead of 0.46-0.59 in runs side by side (api/plugins/header-shapes.test.ts
 * shows the dictionary without it). Nothing an answer carries changes.
 *
 * @example
 * keepAnswerHeadersFast(app) // once, before the routes
 */
export function keepAnswerHeadersFast(app: FastifyInstance): void {
  // by sequence (its names joined), the object built by name that holds V8's shapes for it
  const shapes = new Map<string, object>()
  let answers = 0
  app.addHook('onResponse', (_request, reply, done) => {
    answers += 1
    if (shapes.size < MAX_SHAPES && (answers <= LEARN_FIRST || answers % LEARN_EVERY === 0)) {
      const names = Object.keys(reply.getHeaders())
      const sequence = names.join('\n')
      if (names.length >= MIN_NAMES && !shapes.has(sequence)) {
        shapes.set(sequence, Object.fromEntries(names.map((name) => [name, ''])))
      }
    }
    done()
  })
}
