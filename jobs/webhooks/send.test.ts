import net from 'node:net'
import { afterEach, describe, expect, test } from 'vitest'
import { sendWebhook } from './send.ts'

const servers: { server: net.Server; sockets: Set<net.Socket> }[] = []
afterEach(async () => {
  for (const { server, sockets } of servers.splice(0)) {
    for (const s of sockets) s.destroy()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
})

/** A TCP server on 127.0.0.1 that accepts connections and never writes a byte; its URL. */
async function silentServer(): Promise<URL> {
  const sockets = new Set<net.Socket>()
  const server = net.createServer((socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  servers.push({ server, sockets })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as net.AddressInfo
  return new URL(`http://127.0.0.1:${port}/hook`)
}

describe('sendWebhook', () => {
  test('behavior: a receiver that accepts and stays silent costs at most the attempt timeout', async () => {
    const url = await silentServer()
    const started = Date.now()
    const result = await sendWebhook({ url, address: '127.0.0.1', family: 4 }, {}, '{}', 300, 100)
    expect(result).toEqual({ error: 'no answer within 300 ms' })
    expect(Date.now() - started).toBeLessThan(2_000)
  })

  test('behavior: a refused connection is an error at once, not a wait', async () => {
    const url = await silentServer()
    const port = Number(url.port)
    const { server } = servers.pop()!
    await new Promise<void>((resolve) => server.close(() => resolve()))
    const result = await sendWebhook(
      { url: new URL(`http://127.0.0.1:${port}/hook`), address: '127.0.0.1', family: 4 },
      {},
      '{}',
      5_000,
      1_000,
    )
    expect('error' in result && result.error).toMatch(/ECONNREFUSED/)
  })
})
