import os from 'node:os'

/** The machine a benchmark ran on, as its results record it: CPUs, memory, Node, the load when it started. */
export interface MachineFacts {
  cpus: number
  cpu_model: string
  memory_gb: number
  node: string
  load_average_at_start: number[]
}

/**
 * The facts of this machine now, for a benchmark's results and its first log line (`describeMachine`).
 *
 * @example
 * const machine = machineFacts() // { cpus: 2, cpu_model: 'AMD EPYC ...', memory_gb: 23.5, ... }
 */
export function machineFacts(): MachineFacts {
  return {
    cpus: os.cpus().length,
    cpu_model: os.cpus()[0]?.model ?? 'unknown',
    memory_gb: Number((os.totalmem() / 2 ** 30).toFixed(1)),
    node: process.version,
    load_average_at_start: os.loadavg().map((l) => Number(l.toFixed(2))),
  }
}

/**
 * A benchmark's first log line about its machine.
 *
 * @example
 * describeMachine(machineFacts()) // 'machine: 2 cpus (AMD EPYC ...), 23.5 GB, node v20.20.2'
 */
export function describeMachine(machine: MachineFacts): string {
  return `machine: ${machine.cpus} cpus (${machine.cpu_model}), ${machine.memory_gb} GB, node ${machine.node}`
}
