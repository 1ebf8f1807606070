/** One sample of the Prometheus text format: `name{labels} value`. */
export interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

/** A parsed exposition: every sample, and the TYPE of each metric family. */
export interface Exposition {
  samples: Sample[]
  types: Map<string, string>
  /** The value of the one sample matching `name` and every given label; undefined when none matches. */
  value(name: string, labels?: Record<string, string>): number | undefined
  /** Every sample of `name` whose labels include `labels`. */
  find(name: string, labels?: Record<string, string>): Sample[]
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?/g

function parseValue(text: string): number {
  // Prometheus parses values with Go's ParseFloat: NaN and Inf in any case (prom-client writes "Nan")
  const lower = text.toLowerCase()
  if (lower === '+inf' || lower === 'inf') return Number.POSITIVE_INFINITY
  if (lower === '-inf') return Number.NEGATIVE_INFINITY
  if (lower === 'nan') return Number.NaN
  const n = Number(text)
  if (Number.isNaN(n)) throw new Error(`not a sample value: ${text}`)
  return n
}

/**
 * Parses the Prometheus text format (version 0.0.4) strictly: a line that is neither a comment nor a
 * well-formed sample throws, so a malformed exposition fails the test that reads it.
 *
 * @example
 * parsePrometheus('# TYPE up gauge\nup{job="api"} 1\n').value('up', { job: 'api' }) // 1
 */
export function parsePrometheus(text: string): Exposition {
  const samples: Sample[] = []
  const types = new Map<string, string>()
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue
    if (line.startsWith('#')) {
      const type = /^# TYPE (\S+) (counter|gauge|histogram|summary|untyped)$/.exec(line)
      if (type) types.set(type[1]!, type[2]!)
      else if (!line.startsWith('# HELP ')) throw new Error(`malformed comment line: ${line}`)
      continue
    }
    const m = LINE.exec(line)
    if (!m) throw new Error(`malformed sample line: ${line}`)
    const labels: Record<string, string> = {}
    const body = m[2] ?? ''
    let consumed = 0
    for (const l of body.matchAll(LABEL)) {
      labels[l[1]!] = l[2]!.replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\')
      consumed += l[0].length
    }
    if (consumed !== body.length) throw new Error(`malformed labels: ${line}`)
    let value: number
    try {
      value = parseValue(m[3]!)
    } catch (err) {
      throw new Error(`${(err as Error).message} in: ${line}`)
    }
    samples.push({ name: m[1]!, labels, value })
  }
  const matches = (s: Sample, name: string, labels: Record<string, string>) =>
    s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)
  return {
    samples,
    types,
    find: (name, labels = {}) => samples.filter((s) => matches(s, name, labels)),
    value(name, labels = {}) {
      const found = samples.filter((s) => matches(s, name, labels))
      if (found.length > 1)
        throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`)
      return found[0]?.value
    },
  }
}

/** GETs `${baseUrl}/metrics` and parses it; throws unless it answers 200 in the Prometheus text format. */
export async function scrape(baseUrl: string, token?: string): Promise<Exposition> {
  const res = await fetch(
    `${baseUrl}/metrics`,
    token ? { headers: { authorization: `Bearer ${token}` } } : {},
  )
  const text = await res.text()
  if (res.status !== 200) throw new Error(`/metrics answered ${res.status}: ${text.slice(0, 500)}`)
  if (!res.headers.get('content-type')?.startsWith('text/plain; version=0.0.4'))
    throw new Error(`/metrics content type ${res.headers.get('content-type')}`)
  return parsePrometheus(text)
}
