import type { ErrorCode } from './errors.ts'
import { MAX_INPUT_DEPTH } from './schemas.ts'

/**
 * At most this many values in one JSON body: array items and object members, at any depth (no route takes more
 * than ~4,000: 1,000 lots of three fields). A 1 MiB body of half a million values costs `JSON.parse` tens of
 * milliseconds and megabytes of objects; one of 10,000 a millisecond or so.
 */
export const MAX_JSON_VALUES = 10_000

/**
 * At most this many members in one object of a JSON body (no route's objects have more than ten): `JSON.parse`
 * builds an object of thousands of keys as a dictionary, ~20 times the cost of as many keys in small objects,
 * and every check of the body then walks its keys.
 */
export const MAX_JSON_MEMBERS = 256

/** What `scanJsonText` found in a body's text. */
export interface JsonTextScan {
  /**
   * Refused before any parse: nested deeper than MAX_INPUT_DEPTH, more than MAX_JSON_VALUES values, or an object
   * of more than MAX_JSON_MEMBERS members.
   */
  refused?: { problem: 'depth' | 'values' | 'members'; message: string } | undefined
  /** How many object keys the text holds, duplicates included (exact once `JSON.parse` accepted the text). */
  keys: number
}

/** The index of the `"` closing the string opened at `open`, or the text's length when it never closes. */
function stringEnd(text: string, open: number): number {
  let end = text.indexOf('"', open + 1)
  while (end !== -1) {
    // a quote after an odd number of backslashes is part of the string
    let slashes = 0
    while (text.charCodeAt(end - 1 - slashes) === 0x5c /* \ */) slashes++
    if (slashes % 2 === 0) return end
    end = text.indexOf('"', end + 1)
  }
  return text.length
}

/**
 * One walk of a request body's text, before `JSON.parse`, in time linear in the text and allocating nothing but
 * one flag per open container: the text is refused as soon as it nests deeper than MAX_INPUT_DEPTH (32) or
 * holds more than MAX_JSON_VALUES values (counted as containers and commas outside strings) or an object of
 * more than MAX_JSON_MEMBERS members, so what a body
 * costs is bounded before it is parsed (1 MiB of nested arrays is refused at its 33rd byte, where `JSON.parse`
 * took 0.25-0.6 s). It also counts the object keys, which `parseJsonBody` compares with the parsed value's to
 * tell a duplicate key. The walk is lenient: a malformed text is `JSON.parse`'s to refuse.
 *
 * @example
 * scanJsonText('{"a":1,"b":{"a":2}}') // { keys: 3 }
 * scanJsonText('['.repeat(33)).refused // { problem: 'depth', message: 'body is nested deeper than 32 levels' }
 */
export function scanJsonText(text: string): JsonTextScan {
  // one entry per open container: an object's members so far, -1 for an array
  const open: number[] = []
  let expectKey = false
  let values = 0
  let keys = 0
  let i = 0
  while (i < text.length) {
    const c = text.charCodeAt(i)
    if (c === 0x22 /* " */) {
      if (expectKey) {
        keys++
        const members = (open[open.length - 1] ?? 0) + 1
        open[open.length - 1] = members
        if (members > MAX_JSON_MEMBERS) {
          const message = `body has an object of more than ${MAX_JSON_MEMBERS} members`
          return { refused: { problem: 'members', message }, keys }
        }
      }
      expectKey = false
      i = stringEnd(text, i) + 1
      continue
    }
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (open.length >= MAX_INPUT_DEPTH) {
        const message = `body is nested deeper than ${MAX_INPUT_DEPTH} levels`
        return { refused: { problem: 'depth', message }, keys }
      }
      open.push(c === 0x7b ? 0 : -1)
      expectKey = c === 0x7b
      values++
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      open.pop()
      expectKey = false
    } else if (c === 0x2c /* , */) {
      expectKey = (open[open.length - 1] ?? -1) >= 0
      values++
    }
    if (values > MAX_JSON_VALUES) {
      const message = `body holds more than ${MAX_JSON_VALUES} values`
      return { refused: { problem: 'values', message }, keys }
    }
    i++
  }
  return { keys }
}

/** The own keys of every object in a parsed JSON value (nested at most MAX_INPUT_DEPTH levels: scanned). */
function parsedKeys(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0
  let n = 0
  if (Array.isArray(value)) {
    for (const item of value) n += parsedKeys(item)
    return n
  }
  for (const key in value) n += 1 + parsedKeys((value as Record<string, unknown>)[key])
  return n
}

/** A body `parseJsonBody` refused: its catalog code and message. */
export interface JsonBodyProblem {
  code: ErrorCode
  message: string
}

/**
 * A request body's JSON text parsed, or why it is refused: nested deeper than 32 levels (IR1000), holding more
 * than MAX_JSON_VALUES values or an object of more than MAX_JSON_MEMBERS members (IR1006), all found by
 * `scanJsonText` before any parse; malformed (IR1001); or
 * with a key twice in one object (IR1001: `JSON.parse` keeps the last of duplicate keys silently, so
 * `{"key":"a","key":"b"}` would reach a route as `{key: "b"}` while a proxy, a signature or a log may have read
 * "a"). A duplicate is told by the parsed value holding fewer keys than the text; only then is the text walked
 * again to name it (`duplicateJsonKey`).
 *
 * @example
 * parseJsonBody('{"a":[1]}') // { value: { a: [1] } }
 * parseJsonBody('{"a":1,"a":2}') // { problem: { code: 'IR1001', message: 'JSON body has the key "a" twice' } }
 */
export function parseJsonBody(text: string): { value: unknown } | { problem: JsonBodyProblem } {
  const scan = scanJsonText(text)
  if (scan.refused) {
    return {
      problem: {
        code: scan.refused.problem === 'depth' ? 'IR1000' : 'IR1006',
        message: scan.refused.message,
      },
    }
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return { problem: { code: 'IR1001', message: 'malformed JSON body' } }
  }
  if (parsedKeys(value) !== scan.keys) {
    const key = duplicateJsonKey(text) ?? ''
    return { problem: { code: 'IR1001', message: `JSON body has the key ${JSON.stringify(key)} twice` } }
  }
  return { value }
}

/**
 * The first key that appears twice in one object of a valid JSON text, or undefined. `JSON.parse` keeps the
 * last of duplicate keys silently, so `{"key":"a","key":"b"}` would reach a route as `{key: "b"}` while a
 * proxy, a signature or a log may have read "a": a body with duplicate keys is refused instead. Keys are
 * compared as decoded (`"a"` and `"\u0061"` are the same key). Linear in the text; call it on text
 * `JSON.parse` accepted (`parseJsonBody` calls it once it knows the text has a duplicate).
 *
 * @example
 * duplicateJsonKey('{"a":1,"b":{"a":2}}') // undefined
 * duplicateJsonKey('{"a":1,"a":2}') // 'a'
 */
export function duplicateJsonKey(text: string): string | undefined {
  // one entry per open container: the keys seen in an object, null for an array
  const open: (Set<string> | null)[] = []
  let expectKey = false
  let i = 0
  while (i < text.length) {
    const c = text.charCodeAt(i)
    if (c === 0x22 /* " */) {
      let end = i + 1
      let escaped = false
      while (end < text.length) {
        const d = text.charCodeAt(end)
        if (d === 0x5c /* \ */) {
          escaped = true
          end += 2
          continue
        }
        if (d === 0x22) break
        end++
      }
      const keys = open[open.length - 1]
      if (expectKey && keys) {
        const key = escaped ? (JSON.parse(text.slice(i, end + 1)) as string) : text.slice(i + 1, end)
        if (keys.has(key)) return key
        keys.add(key)
        expectKey = false
      }
      i = end + 1
      continue
    }
    if (c === 0x7b /* { */) {
      open.push(new Set())
      expectKey = true
    } else if (c === 0x5b /* [ */) {
      open.push(null)
      expectKey = false
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      open.pop()
      expectKey = false
    } else if (c === 0x2c /* , */) {
      expectKey = open[open.length - 1] != null
    }
    i++
  }
  return undefined
}
