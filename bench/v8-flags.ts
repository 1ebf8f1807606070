import { applyV8Flags, V8_FLAGS } from '../common/v8-flags.ts'

/**
 * Gives a benchmark's server process the V8 settings of the processes serving the API (common/v8-flags.ts),
 * so it measures what the service runs, unless BENCH_V8_DEFAULTS=1 asks for V8's own. Returns the flags
 * applied (none with V8's defaults), for the benchmark's results.
 */
export function applyServiceV8Flags(): readonly string[] {
  if (process.env.BENCH_V8_DEFAULTS === '1') return []
  applyV8Flags()
  return V8_FLAGS
}
