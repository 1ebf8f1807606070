import fs from 'node:fs'

/** Where the logger writes (pino's destination interface), in batches; see `createBatchedDestination`. */
export interface LogDestination {
  /** Queues one line (pino hands over whole lines); never blocks. */
  write(line: string): boolean
  /** Calls `done` once every line queued so far is written (the write in flight included). */
  flush(done?: (err?: Error) => void): void
  /** Writes the queued lines at once, synchronously (at exit, and after a `fatal` line). */
  flushSync(): void
}

/** Destinations to flush when the process exits, held weakly (a logger dropped by its owner may go). */
const open = new Set<WeakRef<LogDestination>>()
const forget = new FinalizationRegistry<WeakRef<LogDestination>>((ref) => open.delete(ref))
let exitHookInstalled = false

function flushAllAtExit(): void {
  for (const ref of open) ref.deref()?.flushSync()
}

/** Waits `ms` synchronously (a full pipe at exit: nothing else can run anyway). */
function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)
}

/** When queued lines are written: every `flushMs` at the latest, or as soon as `batchBytes` are queued. */
export interface BatchOptions {
  /** Default 100 ms. */
  flushMs?: number
  /** Default 65,536 (about 250 access lines). */
  batchBytes?: number
}

/**
 * A log destination on a file descriptor that never blocks the event loop: each line is encoded at once into
 * a buffer of `batchBytes`, and the buffered lines are written together by one asynchronous write, `flushMs`
 * after the first of them at the latest, at once when the buffer is full (and, while a write is in flight,
 * queued behind it): a busy API writes a few batches a second instead of one write per request, and a line
 * leaves nothing behind on the JavaScript heap once encoded. What this replaced cost, measured with bench:api
 * on these 2 cores: a synchronous write per line blocked the event loop for milliseconds while other work
 * loaded the disk; an asynchronous write per line cost ~20 µs of CPU each (a syscall and a thread wake-up);
 * lines held as strings until their batch was written survived young-generation GCs (3x the GC time of the
 * read); pino's asynchronous SonicBoom with a batch size measures the byte length of its growing buffer on
 * every line (~9 KB of garbage per line).
 *
 * When lines still reach the fd: `flush` writes the buffer at once and waits for every line (the shutdown
 * does, `common/shutdown.ts`); at process exit (a crash included) the buffered lines are written
 * synchronously; a write already in flight then is the thread pool's (it lands unless the process is killed
 * first). A process killed outright (SIGKILL, the OOM killer) loses what was buffered: the lines of its last
 * `flushMs` while the fd keeps up, more while it does not (a full pipe, a stalled disk: batches wait in
 * memory). EAGAIN (a full non-blocking pipe) is retried; any other write error (EPIPE: the reader went away)
 * stops the logging, said once on stderr.
 *
 * @example
 * const destination = createBatchedDestination(1)
 * const logger = pino({ level: 'info' }, destination)
 */
export function createBatchedDestination(fd: number, options: BatchOptions = {}): LogDestination {
  const flushMs = options.flushMs ?? 100
  const batchBytes = options.batchBytes ?? 65_536
  /** The buffer lines are encoded into, and how much of it is used. */
  let current = Buffer.allocUnsafe(batchBytes)
  let used = 0
  /** Buffers filled (or cut short), in order, waiting for their write. */
  let filled: Buffer[] = []
  let timer: NodeJS.Timeout | undefined
  let inFlight = false
  let failed: Error | undefined
  let waiters: ((err?: Error) => void)[] = []

  const pending = () => used > 0 || filled.length > 0

  const settle = () => {
    if (timer || inFlight || pending()) return
    const done = waiters
    waiters = []
    for (const waiter of done) waiter(failed)
  }

  const fail = (err: NodeJS.ErrnoException) => {
    failed = err
    filled = []
    used = 0
    if (fd !== 2) {
      try {
        fs.writeSync(2, `log destination ${fd} failed (${err.code ?? err.message}): logging stopped\n`)
      } catch {
        // nowhere left to say it
      }
    }
  }

  /** Moves the lines of the current buffer to `filled`; the next lines go to a new buffer. */
  const seal = () => {
    if (used === 0) return
    filled.push(current.subarray(0, used))
    current = Buffer.allocUnsafe(batchBytes)
    used = 0
  }

  /** Everything buffered, as one run of bytes. */
  const take = (): Buffer => {
    seal()
    const bytes = filled.length === 1 ? (filled[0] as Buffer) : Buffer.concat(filled)
    filled = []
    return bytes
  }

  const schedule = () => {
    if (timer || inFlight) return
    timer = setTimeout(writeBuffered, flushMs)
    // a process with nothing else to do may exit: its exit hook writes what is buffered
    timer.unref()
  }

  const writeFrom = (bytes: Buffer, offset: number) => {
    fs.write(fd, bytes, offset, bytes.length - offset, null, (err, written) => {
      if (err?.code === 'EAGAIN') {
        setTimeout(() => writeFrom(bytes, offset), 10)
        return
      }
      if (err) {
        inFlight = false
        fail(err)
        settle()
        return
      }
      if (offset + written < bytes.length) {
        writeFrom(bytes, offset + written)
        return
      }
      inFlight = false
      if (filled.length > 0 || (used > 0 && waiters.length > 0)) writeBuffered()
      else if (used > 0) schedule()
      else settle()
    })
  }

  function writeBuffered() {
    if (timer) {
      clearTimeout(timer)
      timer = undefined
    }
    if (inFlight || failed || !pending()) return settle()
    inFlight = true
    writeFrom(take(), 0)
  }

  const destination: LogDestination = {
    write(line) {
      if (failed) return true
      // at most 3 bytes of UTF-8 per UTF-16 unit: a line that may not fit starts a new buffer
      if (line.length * 3 > batchBytes - used) {
        seal()
        if (line.length * 3 > batchBytes) filled.push(Buffer.from(line))
      }
      if (line.length * 3 <= batchBytes) used += current.write(line, used)
      if (inFlight) return true
      if (filled.length > 0) writeBuffered()
      else schedule()
      return true
    },
    flush(done) {
      if (done) waiters.push(done)
      if (!inFlight) writeBuffered()
    },
    flushSync() {
      if (timer) {
        clearTimeout(timer)
        timer = undefined
      }
      if (failed || !pending()) return
      const bytes = take()
      let offset = 0
      while (offset < bytes.length) {
        try {
          offset += fs.writeSync(fd, bytes, offset)
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') {
            fail(err as NodeJS.ErrnoException)
            return
          }
          sleepSync(10)
        }
      }
    },
  }
  const ref = new WeakRef(destination)
  open.add(ref)
  forget.register(destination, ref)
  if (!exitHookInstalled) {
    exitHookInstalled = true
    process.on('exit', flushAllAtExit)
  }
  return destination
}
