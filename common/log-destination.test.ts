import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, test, vi } from 'vitest'
import { createBatchedDestination } from './log-destination.ts'

const dirs: string[] = []
afterEach(() => {
  vi.restoreAllMocks()
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
})

/** A fresh file open for appending, and a way to read it. */
function logFile() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lsreport-log-destination-'))
  dirs.push(dir)
  const file = path.join(dir, 'out.log')
  return { fd: fs.openSync(file, 'a'), read: () => fs.readFileSync(file, 'utf8') }
}

const flushed = (destination: ReturnType<typeof createBatchedDestination>) =>
  new Promise<Error | undefined>((resolve) => destination.flush(resolve))

describe('createBatchedDestination', () => {
  test('behavior: a burst of lines goes out in one write, in order, and flush writes it at once and waits', async () => {
    const { fd, read } = logFile()
    const writes = vi.spyOn(fs, 'write')
    const destination = createBatchedDestination(fd, { flushMs: 60_000 })
    const lines = Array.from({ length: 500 }, (_, i) => `{"line":${i}}\n`)
    for (const line of lines) destination.write(line)
    expect(read()).toBe('') // queued, not written
    expect(await flushed(destination)).toBeUndefined()
    expect(read()).toBe(lines.join(''))
    expect(writes).toHaveBeenCalledTimes(1)
  })

  test('behavior: queued lines are written after flushMs without a flush, at once past batchBytes', async () => {
    const { fd, read } = logFile()
    const destination = createBatchedDestination(fd, { flushMs: 20, batchBytes: 400 })
    destination.write('first\n')
    await new Promise((resolve) => setTimeout(resolve, 80))
    expect(read()).toBe('first\n')
    const writes = vi.spyOn(fs, 'write')
    const line = `{"x":"${'x'.repeat(100)}"}\n`
    destination.write(line)
    expect(writes).toHaveBeenCalledTimes(0) // fits the buffer: waits for flushMs
    destination.write(line) // the buffer is full: handed over now, not in 20 ms
    expect(writes).toHaveBeenCalledTimes(1)
    destination.write('behind it\n') // a write is in flight: buffered behind it
    expect(await flushed(destination)).toBeUndefined()
    expect(read()).toBe(`first\n${line}${line}behind it\n`)
    // a line longer than a buffer goes out whole
    const long = `${'y'.repeat(1000)}\n`
    destination.write(long)
    expect(await flushed(destination)).toBeUndefined()
    expect(read()).toBe(`first\n${line}${line}behind it\n${long}`)
  })

  test('behavior: flushSync writes the queued lines before it returns', () => {
    const { fd, read } = logFile()
    const destination = createBatchedDestination(fd, { flushMs: 60_000 })
    destination.write('a\n')
    destination.write('b\n')
    destination.flushSync()
    expect(read()).toBe('a\nb\n')
  })

  test('behavior: a failing fd stops the logging, says so once on stderr and never throws', async () => {
    const { fd: appendFd } = logFile()
    fs.closeSync(appendFd)
    // an fd open for reading only: every write fails (EBADF)
    const fd = fs.openSync(path.join(dirs.at(-1) as string, 'out.log'), 'r')
    const stderr = vi.spyOn(fs, 'writeSync').mockImplementation(() => 0)
    const destination = createBatchedDestination(fd)
    destination.write('lost\n')
    expect((await flushed(destination))?.message).toMatch(/EBADF|bad file descriptor/i)
    expect(() => destination.write('ignored\n')).not.toThrow()
    expect(await flushed(destination)).toBeDefined()
    expect(stderr).toHaveBeenCalledTimes(1)
    expect(String(stderr.mock.calls[0]?.[1])).toMatch(/logging stopped/)
    fs.closeSync(fd)
  })
})
