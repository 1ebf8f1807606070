// Minimal types for the parts of autocannon the benchmarks use.
declare module 'autocannon' {
  interface Histogram {
    average: number
    p50: number
    p99: number
  }
  interface Result {
    requests: Histogram
    latency: Histogram
    errors: number
    non2xx: number
  }
  interface Options {
    url: string
    connections?: number
    duration?: number
    headers?: Record<string, string>
    method?: string
    body?: string
  }
  function autocannon(options: Options): Promise<Result>
  export default autocannon
}
