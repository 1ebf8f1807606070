import v8 from 'node:v8'

/**
 * V8 settings of the processes that serve the API (`lsreport up` and `lsreport api`, at their start; the
 * API benchmark's server process and the day benchmark's embedded case too, so they measure what the
 * service runs). A `worker` computes days with V8's defaults: it serves no API, and the day benchmark's
 * first day was a little slower with the flag.
 *
 * `--no-allocation-site-pretenuring`: V8 allocates straight in the old generation the objects of an
 * allocation site whose objects mostly outlived young-generation GCs, and keeps doing so. The day
 * pipeline's long-lived objects taught that to allocation sites the HTTP path shares with it, so
 * afterwards each API request's objects were born old and kept everything they pointed to alive through
 * every scavenge: in a process that had computed a day, a fifth of what requests allocated was copied and
 * promoted, scavenges took 4-11 ms instead of ~1-2, and GC cost a request 11-16 µs instead of 2-5 (bench/README.md). Without pretenuring, short-lived objects die young whatever ran before in the process.
 */
export const V8_FLAGS = ['--no-allocation-site-pretenuring'] as const

/** Applies V8_FLAGS to this process (V8 reads them at each GC and allocation decision from then on). */
export function applyV8Flags(): void {
  for (const flag of V8_FLAGS) v8.setFlagsFromString(flag)
}
