/**
 * One client of bench/anonymous-flood.ts, in a process of its own (never inside the measured one), on one
 * keep-alive connection. Forked with an IPC channel: it takes `{mode, base, url, headers, body}`, answers
 * 'ready', then waits for `{until}` (epoch ms): `flood` posts `body` to `base + url` until then, counting
 * the statuses; `probe` sends `GET base + url` every 20 ms and keeps each latency. It sends
 * `{codes, ms, cpu_seconds}` and exits.
 */
import http from 'node:http'

interface Job {
  mode: 'flood' | 'probe'
  base: string
  url: string
  headers?: Record<string, string>
  body?: string
}

const job = await new Promise<Job>((resolve) => process.once('message', (m) => resolve(m as Job)))
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
const payload = job.body === undefined ? undefined : Buffer.from(job.body)

/** One request: its status (0: the connection failed) and latency. */
function send(): Promise<{ status: number; ms: number }> {
  return new Promise((resolve) => {
    const started = performance.now()
    const req = http.request(
      job.base + job.url,
      { agent, method: payload ? 'POST' : 'GET', headers: job.headers ?? {} },
      (res) => {
        res.resume()
        res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started }))
      },
    )
    req.on('error', () => resolve({ status: 0, ms: performance.now() - started }))
    req.end(payload)
  })
}

const go = new Promise<number>((resolve) =>
  process.once('message', (m) => resolve((m as { until: number }).until)),
)
process.send?.('ready')
const until = await go
const cpuAtStart = process.cpuUsage()
const codes: Record<string, number> = {}
const ms: number[] = []
while (Date.now() < until) {
  const r = await send()
  codes[r.status] = (codes[r.status] ?? 0) + 1
  if (job.mode === 'probe') {
    ms.push(r.ms)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}
const cpu = process.cpuUsage(cpuAtStart)
process.send?.({ codes, ms, cpu_seconds: (cpu.user + cpu.system) / 1e6 }, () => process.exit(0))
