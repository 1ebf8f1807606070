// A process that shows whether the objects holding a Fastify app's answer headers stay in V8's fast mode
// (api/plugins/header-shapes.ts). Argument: `learn` (the app keeps its answers' header shapes) or `none`.
// Run by node with --allow-natives-syntax (and tsx): prints `{fast_share}`, the share of the last 500 of 3,000
// answers over HTTP whose header object had fast properties. The answers carry 26 headers, added as the
// API's are: 12 in an onRequest hook, the others by the route, some of them numbers.
import http from 'node:http'
import Fastify, { type FastifyReply } from 'fastify'
import { keepAnswerHeadersFast } from '../../api/plugins/header-shapes.ts'

const hasFastProperties = new Function('o', 'return %HasFastProperties(o)') as (o: object) => boolean
/** The object Fastify keeps an answer's headers in. */
const headersOf = (reply: FastifyReply) => {
  const symbol = Object.getOwnPropertySymbols(reply).find((s) => s.description === 'fastify.reply.headers')
  return (reply as unknown as Record<symbol, object>)[symbol as symbol] as object
}

const first = Array.from({ length: 12 }, (_, i) => `x-probe-first-${i}`)
const own = Array.from({ length: 12 }, (_, i) => `x-probe-own-${i}`)
const app = Fastify()
app.addHook('onRequest', (_request, reply, done) => {
  for (const name of first) reply.header(name, 'value')
  done()
})
if (process.argv[2] === 'learn') keepAnswerHeadersFast(app)
const fast: boolean[] = []
app.addHook('onResponse', (_request, reply, done) => {
  fast.push(hasFastProperties(headersOf(reply)))
  done()
})
app.get('/', (_request, reply) => {
  own.forEach((name, i) => {
    reply.header(name, i % 3 === 0 ? i : 'value')
  })
  reply.type('application/json').send('{}')
})
await app.listen({ host: '127.0.0.1', port: 0 })
const { port } = app.server.address() as { port: number }
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
for (let i = 0; i < 3_000; i++) {
  await new Promise<void>((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: '/', agent }, (res) => {
        res.resume()
        res.on('end', resolve)
      })
      .on('error', reject)
  })
}
agent.destroy()
await app.close()
const last = fast.slice(-500)
process.stdout.write(`${JSON.stringify({ fast_share: last.filter(Boolean).length / last.length })}\n`)
