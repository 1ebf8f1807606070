import net from 'node:net'

/**
 * A free TCP port on 127.0.0.1 (the OS picks one; the probe closes before this resolves). Dependency-free, so
 * benchmarks (bench/start.ts) can use it without loading the app.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
  })
}
