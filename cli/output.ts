// How commands print. Machine output is one JSON object per line (`jq`, log shippers and `while read` loops
// read it); `--json` on a command that also has a human form chooses the machine form.

/** Writes `value` as one line of JSON on stdout. */
export function printJsonLine(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`)
}

/**
 * Writes a record for a person: a heading, then one `name: value` line per field (nested values as JSON).
 *
 * @example
 * printRecord('organization created', { id: '…', name: 'Custodian A' })
 */
export function printRecord(heading: string, record: object): void {
  const entries = Object.entries(record)
  const width = Math.max(0, ...entries.map(([name]) => name.length))
  const lines = entries.map(([name, value]) => {
    const shown = typeof value === 'string' ? value : JSON.stringify(value)
    return `  ${`${name}:`.padEnd(width + 2)}${shown}`
  })
  process.stdout.write(`${[heading, ...lines].join('\n')}\n`)
}

/** Prints `record` as one JSON line with `--json`, else for a person under `heading`. */
export function printResult(opts: { json?: boolean }, heading: string, record: object): void {
  if (opts.json) printJsonLine(record)
  else printRecord(heading, record)
}

/**
 * A plain-text table for a person: columns padded to their widest cell, two spaces apart, no trailing blanks.
 *
 * @example
 * formatTable(['kid', 'status'], [['abc', 'current']]) // 'kid  status\nabc  current'
 */
export function formatTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd()
  return [line(header), ...rows.map(line)].join('\n')
}
