/** RFC 4180 CSV lines, for files written a row at a time (the exports, jobs/exports/). */

/**
 * One CSV cell: null or undefined empty; a value holding a comma, a quote or a line break quoted, its quotes
 * doubled.
 *
 * @example
 * csvCell('a "b", c') // '"a ""b"", c"'
 */
export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return ''
  const text = String(value)
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}

/**
 * One CSV record with its CRLF line break: the cells of `fields` in order.
 *
 * @example
 * csvLine(['a', 'b'], { a: 1, b: null }) // '1,\r\n'
 */
export function csvLine(fields: readonly string[], row: Readonly<Record<string, unknown>>): string {
  let line = ''
  for (let i = 0; i < fields.length; i++) {
    if (i > 0) line += ','
    line += csvCell(row[fields[i] as string])
  }
  return `${line}\r\n`
}
