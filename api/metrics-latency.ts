import type { Histogram, Registry } from 'prom-client'

/** The labels of one request latency series. */
export interface LatencyLabels {
  method: string
  route: string
  status_class: string
}

/** One series of a `LatencyHistogram`: takes a duration in seconds. */
export interface LatencySeries {
  observe(seconds: number): void
}

/** A series' state: per bucket the observations it holds alone (not cumulated), their sum and count. */
interface SeriesState {
  labels: LatencyLabels
  counts: number[]
  sum: number
  count: number
}

/** A value of the metric as prom-client's Histogram gives it to its registry (before `splay`). */
interface ExportedValue {
  labels: Record<string, string | number>
  sharedLabels: Record<string, string | number>
  value: number
  metricName: string
  exemplar: null | undefined
}

/**
 * A histogram of request latency, read by a prom-client registry exactly as prom-client's Histogram with the
 * same name, help, buckets and observations (the same text on /metrics, the same JSON:
 * api/metrics-latency.test.ts holds them equal), observed through series handles the caller keeps. An
 * observation is a bucket search and three additions, where Histogram.observe checks and hashes its labels
 * object into a key each time (~1 µs of the 1-address read's CPU, bench:api).
 *
 * @example
 * const latency = new LatencyHistogram({ name, help, buckets: [0.01, 0.1], registry })
 * latency.series({ method: 'GET', route: '/health', status_class: '2xx' }).observe(0.002)
 */
export class LatencyHistogram {
  readonly name: string
  readonly help: string
  readonly type = 'histogram'
  readonly aggregator = 'sum'
  readonly upperBounds: readonly number[]
  /** The series by their labels, in the order of their first observation (prom-client's order). */
  private readonly states = new Map<string, SeriesState>()
  /** Counts the resets: a series handle holding its state checks it is still the one kept. */
  private generation = 0

  constructor(options: { name: string; help: string; buckets: readonly number[]; registry: Registry }) {
    this.name = options.name
    this.help = options.help
    this.upperBounds = [...options.buckets]
    // a registry reads any object with this protocol (name, help, type, get, getForPromString, reset)
    options.registry.registerMetric(this as unknown as Histogram)
  }

  /** The series of `labels` (created on its first observation, as prom-client's are). */
  series(labels: LatencyLabels): LatencySeries {
    const key = `${labels.method}\n${labels.route}\n${labels.status_class}`
    const bounds = this.upperBounds
    // the series' state once observed, while no reset came since
    let state: SeriesState | undefined
    let generation = -1
    return {
      observe: (seconds: number) => {
        if (!Number.isFinite(seconds)) throw new TypeError(`Value is not a valid number: ${seconds}`)
        if (state === undefined || generation !== this.generation) {
          state = this.states.get(key)
          if (state === undefined) {
            // its own labels object, in the label order of the metric (method, route, status_class)
            const own = { method: labels.method, route: labels.route, status_class: labels.status_class }
            state = { labels: own, counts: bounds.map(() => 0), sum: 0, count: 0 }
            this.states.set(key, state)
          }
          generation = this.generation
        }
        // the first bound at or above the value; above every bound: counted in +Inf alone
        let i = 0
        while (i < bounds.length && seconds > (bounds[i] as number)) i++
        if (i < bounds.length) state.counts[i] = (state.counts[i] as number) + 1
        state.sum += seconds
        state.count += 1
      },
    }
  }

  /** Forgets every series (a registry's `resetMetrics`). */
  reset(): void {
    this.states.clear()
    this.generation += 1
  }

  /** The values for the text format, as prom-client's Histogram gives them. */
  async getForPromString() {
    const values: ExportedValue[] = []
    const bucket = `${this.name}_bucket`
    for (const state of this.states.values()) {
      let cumulated = 0
      this.upperBounds.forEach((le, i) => {
        cumulated += state.counts[i] as number
        values.push(valuePair({ le }, cumulated, bucket, null, state.labels))
      })
      values.push(
        valuePair({ le: '+Inf' }, state.count, bucket, null, state.labels),
        valuePair({}, state.sum, `${this.name}_sum`, undefined, state.labels),
        valuePair({}, state.count, `${this.name}_count`, undefined, state.labels),
      )
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator }
  }

  /** The values for JSON (`getMetricsAsJSON`, cluster aggregation): each with its series' labels merged in. */
  async get() {
    const data = await this.getForPromString()
    return {
      ...data,
      values: data.values.map(({ sharedLabels, labels, ...rest }) => ({
        ...rest,
        labels: Object.assign(labels, sharedLabels),
      })),
    }
  }
}

/** A value as prom-client's Histogram makes it (`setValuePair`): its own labels and its series' apart. */
function valuePair(
  labels: Record<string, string | number>,
  value: number,
  metricName: string,
  exemplar: null | undefined,
  sharedLabels: LatencyLabels,
): ExportedValue {
  return {
    labels,
    sharedLabels: sharedLabels as unknown as Record<string, string>,
    value,
    metricName,
    exemplar,
  }
}
