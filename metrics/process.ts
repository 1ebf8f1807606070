import { collectDefaultMetrics, Registry } from 'prom-client'

let processRegistry: Registry | undefined

/**
 * Node's process metrics (`lsreport_process_*`, `lsreport_nodejs_*`: CPU, memory, event loop, GC): made once
 * per process (they install observers that live as long as it), shared by every `ServiceMetrics` registry.
 *
 * @example
 * const registry = Registry.merge([nodeProcessRegistry()])
 */
export function nodeProcessRegistry(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry()
    collectDefaultMetrics({ register: processRegistry, prefix: 'lsreport_' })
  }
  return processRegistry
}
