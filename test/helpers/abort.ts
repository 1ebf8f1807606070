import net from 'node:net'

/**
 * A client that goes away before its answer: sends a JSON POST's headers (with `headers`) and half the body
 * it announces, waits `ms`, then closes the connection.
 */
export function postHalfABodyAndClose(
  baseUrl: string,
  urlPath: string,
  headers: Record<string, string>,
  ms = 300,
): Promise<void> {
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`)
  return new Promise<void>((resolve, reject) => {
    const socket = net.connect(Number(new URL(baseUrl).port), '127.0.0.1', () => {
      socket.write(
        `POST ${urlPath} HTTP/1.1\r\nHost: 127.0.0.1\r\n${lines.join('')}` +
          'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"key":',
      )
      setTimeout(() => {
        socket.destroy()
        resolve()
      }, ms)
    })
    socket.on('error', reject)
  })
}
