/**
 * The load generator of bench/day.ts's embedded case (bench/day-worker.ts forks this path): the one
 * autocannon runner of the benchmarks, bench/load.ts, with its IPC protocol (`ready`, `result`, `stop`).
 */
import './load.ts'
