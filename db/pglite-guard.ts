import type { PGlite } from '@electric-sql/pglite'

/**
 * A statement PGlite abandoned without an answer. PGlite runs Postgres in WebAssembly on the JavaScript stack:
 * a statement nested deeply enough (a long `(a, b) in ((..), (..), ...)` list is parsed into a chain of ORs
 * one level per pair) overflows it before Postgres's own `max_stack_depth` check, and PGlite (0.5.x,
 * `execProtocolRawSync`) swallows the RangeError: the statement answers nothing, so node-postgres saw a
 * result with no command and no rows (knex then handed back the pg Result, not rows), or nothing at all.
 * Postgres was unwound mid-statement without its error cleanup (a snapshot left active, buffers pinned):
 * later statements failed with "bad buffer ID" or hung. So the embedded database refuses every statement
 * after one (`guardPglite`): the process must reopen it.
 */
export class PgliteAbortError extends Error {
  override name = 'PgliteAbortError'
}

/** The answers one of which each message must get, unless the backend skips it after an error. */
const COMPLETIONS: Record<number, ReadonlySet<string>> = {
  // P (Parse)
  80: new Set(['parseComplete']),
  // B (Bind)
  66: new Set(['bindComplete']),
  // E (Execute)
  69: new Set(['commandComplete', 'emptyQuery', 'portalSuspended']),
  // Q (simple Query): at least its first statement's end
  81: new Set(['commandComplete', 'emptyQuery', 'copyInResponse', 'copyOutResponse']),
}

/** What the knex adapter calls on PGlite (`createPgConfig` takes any object with these). */
export type PgliteProtocol = Pick<PGlite, 'waitReady' | 'execProtocolStream'>

/**
 * PGlite's protocol entry point for node-postgres, checked: a Parse, Bind, Execute or Query message answered
 * by neither its completion nor an error (outside the skip after an error, until Sync) is a statement PGlite
 * abandoned (`PgliteAbortError`): it fails, and so does every statement after it on this instance.
 *
 * @example
 * const db = knex({ client: 'pg', connection: async () => createPgConfig(guardPglite(pglite)) })
 */
export function guardPglite(pglite: PGlite): PgliteProtocol {
  let skipping = false
  let aborted: string | undefined
  return {
    waitReady: pglite.waitReady,
    async execProtocolStream(message, options) {
      // a new error each time: knex writes the statement into the message of the error it is given
      if (aborted) throw new PgliteAbortError(`an earlier statement was abandoned: ${aborted}`)
      const answers = await pglite.execProtocolStream(message, options)
      const expected = COMPLETIONS[message[0] ?? 0]
      const failed = answers.some((a) => a.name === 'error')
      if (expected && !skipping && !failed && !answers.some((a) => expected.has(a.name))) {
        const kind = String.fromCharCode(message[0] ?? 0)
        aborted =
          `PGlite abandoned a statement (protocol message ${kind} got no answer: a JavaScript stack overflow ` +
          'inside PGlite, the statement nested too deeply); the embedded database is no longer sound and ' +
          'refuses every statement until the process reopens it'
        throw new PgliteAbortError(aborted)
      }
      if (failed) skipping = true
      if (answers.some((a) => a.name === 'readyForQuery')) skipping = false
      return answers
    },
  }
}
