/**
 * Reading rows in COPY text format (one row a line, fields separated by tabs, `\N` for null) without an
 * object per row: a cursor moves from line to line and hands out the fields asked for.
 */

/** A cursor over COPY text rows of a fixed number of fields. */
export interface CopyRows {
  /** Moves to the next row; false at the end. Throws on a row with another number of fields. */
  next(): boolean
  /** Field `i` of the current row, as written (escapes left as they are). */
  field(i: number): string
  /** Fields `from` to `to` of the current row as written, with the tabs between them. */
  fields(from: number, to: number): string
}

/**
 * A cursor over `text`, rows of `fields` fields each (the last line may end without a newline).
 *
 * @example
 * const rows = createCopyRows('0xab\t12\n0xcd\t0\n', 2)
 * while (rows.next()) console.log(rows.field(0), BigInt(rows.field(1)))
 */
export function createCopyRows(text: string, fields: number): CopyRows {
  // starts[i], ends[i]: where field i of the current row lies in `text`
  const starts = new Int32Array(fields)
  const ends = new Int32Array(fields)
  let position = 0
  return {
    next() {
      if (position >= text.length) return false
      let end = text.indexOf('\n', position)
      if (end === -1) end = text.length
      let start = position
      for (let i = 0; i < fields; i++) {
        const tab = i === fields - 1 ? end : text.indexOf('\t', start)
        if (tab === -1 || tab > end) {
          throw new Error(`a COPY row has ${i + 1} fields, ${fields} expected: ${text.slice(position, end)}`)
        }
        starts[i] = start
        ends[i] = tab
        start = tab + 1
      }
      if (text.lastIndexOf('\t', end - 1) >= (starts[fields - 1] as number)) {
        throw new Error(`a COPY row has more than ${fields} fields: ${text.slice(position, end)}`)
      }
      position = end + 1
      return true
    },
    field(i) {
      return text.slice(starts[i], ends[i])
    },
    fields(from, to) {
      return text.slice(starts[from], ends[to])
    },
  }
}
