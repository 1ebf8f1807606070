import { createChainClient } from '../chain/client.ts'
import type { CheckResult } from '../chain/doctor.ts'
import { loadConfig } from '../common/config.ts'
import { LsReportError } from '../common/errors.ts'
import { doctorChain, setupFromConfig } from './chain-setup.ts'

/** `ok   `, `warn `, `FAIL `: the status column of the text output. */
const LABELS: Record<CheckResult['status'], string> = { ok: 'ok  ', warn: 'warn', fail: 'FAIL' }

/**
 * `lsreport doctor`: checks that RPC_URL and CHAIN can serve the service (chain/doctor.ts), one line per check
 * (`ok   chain id 1 (mainnet)`, `warn ...`, `FAIL ...`), or one JSON object per line with `--json`. Returns
 * the exit code: 1 at the first failure (the checks stop there), 0 when none failed (warnings allowed).
 */
export async function doctorCommand(env: NodeJS.ProcessEnv, opts: { json?: boolean }): Promise<number> {
  const print = (r: CheckResult) =>
    process.stdout.write(opts.json ? `${JSON.stringify(r)}\n` : `${LABELS[r.status]} ${r.message}\n`)
  let setup: Awaited<ReturnType<typeof setupFromConfig>>
  let config: ReturnType<typeof loadConfig>
  try {
    config = loadConfig(env)
    setup = await setupFromConfig(config)
  } catch (error) {
    if (!(error instanceof LsReportError)) throw error
    print({ check: 'config', status: 'fail', message: error.message })
    return 1
  }
  const client = createChainClient({ rpcUrl: setup.rpcUrl, timeoutMs: 30_000, retryCount: 2 })
  const report = await doctorChain(config, setup, client, print)
  if (!opts.json) {
    const warnings = report.results.filter((r) => r.status === 'warn').length
    process.stdout.write(
      report.ok
        ? `\ndoctor: all checks passed${warnings ? ` (${warnings} warning${warnings > 1 ? 's' : ''})` : ''}\n`
        : '\ndoctor: stopped at the first failure\n',
    )
  }
  return report.ok ? 0 : 1
}
