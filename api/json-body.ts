/**
 * The first key that appears twice in one object of a valid JSON text, or undefined. `JSON.parse` keeps the
 * last of duplicate keys silently, so `{"key":"a","key":"b"}` would reach a route as `{key: "b"}` while a
 * proxy, a signature or a log may have read "a": a body with duplicate keys is refused instead. Keys are
 * compared as decoded (`"a"` and `"\u0061"` are the same key). Linear in the text; call it on text
 * `JSON.parse` accepted.
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
