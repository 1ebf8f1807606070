import { Histogram, Registry } from 'prom-client'
import { describe, expect, test } from 'vitest'
import { LatencyHistogram, type LatencyLabels } from './metrics-latency.ts'

const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
const NAME = 'lsreport_http_request_duration_seconds'
const HELP = 'API request latency by route template, method and status class (this process)'

/** prom-client's Histogram and a LatencyHistogram, each in a registry of its own, fed the same observations. */
function pair(defaultLabels?: Record<string, string>) {
  const theirs = new Registry()
  const ours = new Registry()
  if (defaultLabels) {
    theirs.setDefaultLabels(defaultLabels)
    ours.setDefaultLabels(defaultLabels)
  }
  const histogram = new Histogram({
    name: NAME,
    help: HELP,
    labelNames: ['method', 'route', 'status_class'] as const,
    buckets: BUCKETS,
    registers: [theirs],
  })
  const latency = new LatencyHistogram({ name: NAME, help: HELP, buckets: BUCKETS, registry: ours })
  const observe = (labels: LatencyLabels, seconds: number) => {
    histogram.observe({ ...labels }, seconds)
    latency.series(labels).observe(seconds)
  }
  return { theirs, ours, latency, histogram, observe }
}

const health = { method: 'GET', route: '/health', status_class: '2xx' }
const read = { method: 'POST', route: '/eth/v1/rewards/wallets', status_class: '2xx' }
const unmatched = { method: 'OTHER', route: 'unmatched', status_class: '4xx' }

describe('LatencyHistogram', () => {
  test("behavior: /metrics text and JSON are prom-client Histogram's, byte for byte", async () => {
    const { theirs, ours, observe } = pair()
    // on the bounds, between them, above every one, zero, in an order that interleaves the series
    const values = [0.001, 0.0007, 10, 11, 0, 0.0025000001, 0.3, 2.5, 1e-9, 123.456]
    values.forEach((v, i) => {
      observe(read, v)
      if (i % 2 === 0) observe(health, v / 3)
      if (i % 3 === 0) observe(unmatched, v * 7)
    })
    for (let i = 0; i < 1000; i++) observe(read, (i % 97) / 1000 + 0.0001 * i)
    expect(await ours.metrics()).toBe(await theirs.metrics())
    expect(JSON.stringify(await ours.getMetricsAsJSON())).toBe(
      JSON.stringify(await theirs.getMetricsAsJSON()),
    )
    expect(await ours.metrics()).toContain(
      `${NAME}_bucket{le="+Inf",method="POST",route="/eth/v1/rewards/wallets",status_class="2xx"} 1010`,
    )
  })

  test("behavior: default labels of the registry and a reset read the same as prom-client's", async () => {
    const { theirs, ours, observe, histogram, latency } = pair({ service: 'api' })
    const held = latency.series(read)
    observe(read, 0.002)
    histogram.observe({ ...read }, 0.004)
    held.observe(0.004)
    expect(await ours.metrics()).toBe(await theirs.metrics())
    theirs.resetMetrics()
    ours.resetMetrics()
    expect(await ours.metrics()).toBe(await theirs.metrics())
    // a series handle kept across the reset counts into the series again
    histogram.observe({ ...health }, 0.02)
    latency.series(health).observe(0.02)
    histogram.observe({ ...read }, 0.003)
    held.observe(0.003)
    expect(await ours.metrics()).toBe(await theirs.metrics())
    expect(JSON.stringify(await ours.getMetricsAsJSON())).toBe(
      JSON.stringify(await theirs.getMetricsAsJSON()),
    )
  })

  test('edge: a value that is not a finite number is refused, as prom-client refuses it', () => {
    const { latency, histogram } = pair()
    expect(() => histogram.observe({ ...read }, Number.NaN)).toThrow(TypeError)
    expect(() => latency.series(read).observe(Number.NaN)).toThrow(TypeError)
    expect(() => latency.series(read).observe(Number.POSITIVE_INFINITY)).toThrow(TypeError)
  })
})
