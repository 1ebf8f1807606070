import { createHash } from 'node:crypto'
import { createWriteStream } from 'node:fs'
import fs from 'node:fs/promises'
import path from 'node:path'
import { Readable, Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import cliProgress from 'cli-progress'
import { loadConfig } from '../common/config.ts'
import { LsReportError } from '../common/errors.ts'
import { callService } from './service-call.ts'

/**
 * `lsreport export`: an export through the API of a running service (docs/operations.md "Exports"), as the
 * organization of the client in a credentials file: POST /v1/exports, GET /v1/exports/{id} until it completes
 * (a progress bar on stderr when it is a terminal, a line per second otherwise), then the file from its signed
 * link to `--out` (or stdout), its sha256 checked against the export's.
 */

/** A client's credentials as `lsreport up` writes the demo client (`$DATA_DIR/demo-client.json`). */
interface Credentials {
  client_id: string
  client_secret: string
  token_url: string
  /** The service's base URL (the tokens' audience). */
  audience: string
}

/** What the command was given. */
export interface ExportOptions {
  from: string
  to: string
  granularity?: string
  kind?: string
  currency?: string
  accounts?: string
  apiVersion?: string
  out?: string
  credentials?: string
}

interface ExportAnswer {
  id: string
  state: 'queued' | 'running' | 'completed' | 'failed'
  progress: { done: number; total: number; percent: number }
  rows: number | null
  bytes: number | null
  sha256: string | null
  error: string | null
  download_url: string | null
}

const POLL_MS = 500
const LINE_MS = 1_000

/** The credentials file: `--credentials`, else the embedded service's demo client in DATA_DIR. */
async function readCredentials(file: string | undefined, env: NodeJS.ProcessEnv): Promise<Credentials> {
  const where = file ?? path.join(loadConfig(env).dataDir, 'demo-client.json')
  let text: string
  try {
    text = await fs.readFile(where, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
    throw new LsReportError(
      `no credentials at ${where}: start the embedded service (\`lsreport up\` writes its demo client there) or ` +
        'give --credentials <file> with {client_id, client_secret, token_url, audience}',
    )
  }
  const c = JSON.parse(text) as Partial<Credentials>
  if (!c.client_id || !c.client_secret || !c.token_url || !c.audience) {
    throw new LsReportError(`${where} must hold client_id, client_secret, token_url and audience`)
  }
  return c as Credentials
}

/** The progress display on stderr: a bar on a terminal, a line a second otherwise. */
function progressView(stream: NodeJS.WriteStream) {
  if (stream.isTTY) {
    const bar = new cliProgress.SingleBar(
      { format: 'export [{bar}] {percentage}% | {value}/{total} | {state}', stream, hideCursor: true },
      cliProgress.Presets.shades_classic,
    )
    let started = false
    return {
      update(e: ExportAnswer) {
        const total = Math.max(1, e.progress.total)
        if (!started) bar.start(total, 0, { state: e.state })
        started = true
        bar.setTotal(total)
        bar.update(e.state === 'completed' ? total : e.progress.done, { state: e.state })
      },
      stop: () => started && bar.stop(),
    }
  }
  let last = 0
  return {
    update(e: ExportAnswer) {
      if (Date.now() - last < LINE_MS && e.state !== 'completed') return
      last = Date.now()
      stream.write(
        `export ${e.id} ${e.state} ${e.progress.done}/${e.progress.total} (${e.progress.percent}%)\n`,
      )
    },
    stop() {},
  }
}

/** Runs the export; resolves with the exit code (0, or throws with the service's message). */
export async function exportCommand(opts: ExportOptions, env: NodeJS.ProcessEnv): Promise<number> {
  const creds = await readCredentials(opts.credentials, env)
  const base = creds.audience.replace(/\/+$/, '')
  const { access_token: token } = await callService<{ access_token: string }>(
    'POST',
    creds.token_url,
    undefined,
    {
      grant_type: 'client_credentials',
      audience: creds.audience,
      client_id: creds.client_id,
      client_secret: creds.client_secret,
    },
  )
  let current = await callService<ExportAnswer>('POST', `${base}/v1/exports`, token, {
    from: opts.from,
    to: opts.to,
    kind: opts.kind ?? 'records',
    granularity: opts.granularity ?? 'month',
    ...(opts.currency ? { currency: opts.currency } : {}),
    ...(opts.apiVersion ? { api_version: opts.apiVersion } : {}),
    ...(opts.accounts ? { account_ids: opts.accounts.split(',').map((a) => a.trim()) } : {}),
  })
  const view = progressView(process.stderr)
  try {
    while (current.state === 'queued' || current.state === 'running') {
      view.update(current)
      await new Promise((resolve) => setTimeout(resolve, POLL_MS))
      current = await callService<ExportAnswer>('GET', `${base}/v1/exports/${current.id}`, token)
    }
    view.update(current)
  } finally {
    view.stop()
  }
  if (current.state === 'failed' || !current.download_url) {
    throw new LsReportError(`export ${current.id} failed: ${current.error ?? 'no file'}`)
  }
  // the signed link needs no Authorization header
  const res = await fetch(`${base}${current.download_url}`)
  if (!res.ok || !res.body) {
    const answer = (await res.json().catch(() => ({}))) as { message?: string }
    throw new LsReportError(`the download answered ${res.status}: ${answer.message ?? ''}`)
  }
  const hash = createHash('sha256')
  const tee = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      hash.update(chunk)
      cb(null, chunk)
    },
  })
  const out = opts.out ? createWriteStream(opts.out) : process.stdout
  await pipeline(Readable.fromWeb(res.body as import('node:stream/web').ReadableStream), tee, out, {
    end: opts.out !== undefined,
  })
  const sha256 = hash.digest('hex')
  if (sha256 !== current.sha256) {
    throw new LsReportError(`the downloaded file's sha256 ${sha256} is not the export's ${current.sha256}`)
  }
  process.stderr.write(
    `export ${current.id}: ${current.rows} rows, ${current.bytes} bytes, sha256 ${sha256}` +
      `${opts.out ? ` written to ${opts.out}` : ''}\n`,
  )
  return 0
}
