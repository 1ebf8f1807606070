import { type ChildProcess, spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { Readable, Writable } from 'node:stream'

/** Where Debian's (or another distribution's) Chromium lives; undefined when none is installed. */
export function findChromium(): string | undefined {
  const candidates = [
    process.env.CHROMIUM_PATH,
    '/usr/bin/chromium',
    '/usr/bin/chromium-browser',
    '/usr/bin/google-chrome',
    '/usr/bin/google-chrome-stable',
  ]
  return candidates.find((file): file is string => !!file && fs.existsSync(file))
}

/** One page of a headless Chromium, driven over the DevTools protocol. */
export interface BrowserPage {
  navigate(url: string): Promise<void>
  /** Evaluates an expression in the page (awaiting a promise) and returns its JSON value. */
  evaluate<T = unknown>(expression: string): Promise<T>
  /** Evaluates `expression` every 100 ms until it is truthy (an element counts as `true`); returns that value. */
  waitFor<T = unknown>(expression: string, what: string, timeoutMs?: number): Promise<T>
  /** Types text into the focused element, as a keyboard would. */
  type(text: string): Promise<void>
  /** Runs `source` in every document the page loads from now on, before the document's own scripts. */
  addInitScript(source: string): Promise<void>
  close(): Promise<void>
}

/**
 * Starts headless Chromium with the DevTools protocol on a pipe (no port, no WebSocket client needed) and
 * opens one page.
 *
 * @example
 * const page = await openPage(findChromium()!)
 * await page.navigate('http://127.0.0.1:8080/docs')
 */
export async function openPage(chromium: string): Promise<BrowserPage> {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'lsreport-chromium-'))
  const child: ChildProcess = spawn(
    chromium,
    [
      '--headless=new',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-dev-shm-usage',
      '--no-first-run',
      '--remote-debugging-pipe',
      `--user-data-dir=${profile}`,
      'about:blank',
    ],
    { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] },
  )
  let stderr = ''
  child.stderr?.on('data', (c: Buffer) => {
    stderr = (stderr + c.toString()).slice(-4000)
  })
  const toBrowser = child.stdio[3] as Writable
  const fromBrowser = child.stdio[4] as Readable
  let nextId = 1
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>()
  let buffer = ''
  fromBrowser.on('data', (chunk: Buffer) => {
    buffer += chunk.toString()
    let end = buffer.indexOf('\0')
    while (end !== -1) {
      const message = JSON.parse(buffer.slice(0, end)) as {
        id?: number
        result?: unknown
        error?: { message: string }
      }
      buffer = buffer.slice(end + 1)
      end = buffer.indexOf('\0')
      const waiter = message.id === undefined ? undefined : pending.get(message.id)
      if (!waiter) continue
      pending.delete(message.id!)
      if (message.error) waiter.reject(new Error(message.error.message))
      else waiter.resolve(message.result)
    }
  })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  void exited.then(() => {
    for (const waiter of pending.values()) waiter.reject(new Error(`chromium exited:\n${stderr}`))
    pending.clear()
  })
  const send = <T>(method: string, params: object = {}, sessionId?: string): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const id = nextId++
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject })
      toBrowser.write(`${JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) })}\0`)
    })

  const { targetId } = await send<{ targetId: string }>('Target.createTarget', { url: 'about:blank' })
  const { sessionId } = await send<{ sessionId: string }>('Target.attachToTarget', {
    targetId,
    flatten: true,
  })
  const page = <T>(method: string, params: object = {}) => send<T>(method, params, sessionId)
  await page('Page.enable')
  await page('Runtime.enable')

  const evaluate = async <T>(expression: string): Promise<T> => {
    const r = await page<{
      result: { value?: T }
      exceptionDetails?: { text: string; exception?: { description?: string } }
    }>('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true })
    if (r.exceptionDetails) {
      throw new Error(`in the page: ${r.exceptionDetails.exception?.description ?? r.exceptionDetails.text}`)
    }
    return r.result.value as T
  }
  return {
    async navigate(url) {
      await page('Page.navigate', { url })
    },
    evaluate,
    async waitFor<T>(expression: string, what: string, timeoutMs = 20_000): Promise<T> {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        // an element is not serializable: it counts as `true`
        const value = await evaluate<T>(
          `(() => { const v = (${expression}); return v instanceof Node ? true : v })()`,
        ).catch(() => undefined)
        if (value) return value
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
        await new Promise((r) => setTimeout(r, 100))
      }
    },
    async type(text) {
      await page('Input.insertText', { text })
    },
    async addInitScript(source) {
      await page('Page.addScriptToEvaluateOnNewDocument', { source })
    },
    async close() {
      await send('Browser.close').catch(() => undefined)
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000)
      await exited
      clearTimeout(timer)
      fs.rmSync(profile, { recursive: true, force: true })
    },
  }
}

/**
 * In Swagger UI on `page`: opens the GET operation of `path`, presses "Try it out" then "Execute", and answers
 * the operation's element expression (for further reads) and the HTTP status the page shows.
 *
 * @example
 * const { status } = await tryItOut(page, '/health') // '200'
 */
export async function tryItOut(
  page: BrowserPage,
  path: string,
): Promise<{ operation: string; status: string }> {
  const operation = `[...document.querySelectorAll('.opblock-get')].find((b) =>
        b.querySelector('.opblock-summary-path')?.getAttribute('data-path') === '${path}')`
  await page.waitFor(`!!(${operation})`, `the GET ${path} operation`)
  await page.evaluate(`(${operation}).querySelector('.opblock-summary-control').click()`)
  await page.waitFor(`(${operation}).querySelector('.try-out__btn')`, 'the "Try it out" button')
  await page.evaluate(`(${operation}).querySelector('.try-out__btn').click()`)
  await page.waitFor(`(${operation}).querySelector('.execute')`, 'the "Execute" button')
  await page.evaluate(`(${operation}).querySelector('.execute').click()`)
  const status = await page.waitFor<string>(
    `(${operation}).querySelector('.live-responses-table .response .response-col_status')?.textContent.trim()`,
    'the response',
  )
  return { operation, status }
}
