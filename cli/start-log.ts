/**
 * What `lsreport up` prints on stderr while it starts: one line per phase, a progress bar (or plain lines
 * off a terminal) for a phase with a known total, and paths as a user would type them.
 */
import path from 'node:path'
import cliProgress from 'cli-progress'

/** Plain progress lines (off a terminal) at most this often. */
const LINE_MS = 2_000

/**
 * One line per phase on `stream` (`lsreport up: <phase> <what> (+<seconds since the process started>)`).
 *
 * @example
 * createStartLog(process.stderr).line('api', 'http://127.0.0.1:3000 answers') // lsreport up: api      http://… (1.2 s)
 */
export function createStartLog(stream: NodeJS.WriteStream) {
  const elapsed = () => `${(performance.now() / 1000).toFixed(1)} s`
  return {
    tty: stream.isTTY === true,
    stream,
    line(phase: string, text: string) {
      stream.write(`lsreport up: ${phase.padEnd(8)} ${text} (${elapsed()})\n`)
    },
  }
}
/** The start's phase lines (createStartLog). */
export type StartLog = ReturnType<typeof createStartLog>

/**
 * Progress of a phase with a known total: a bar on a terminal, plain lines (at most every 2 s) otherwise.
 *
 * @example
 * const bar = createPhaseProgress(log, 'history', 'simulated days', 91)
 * bar.update(3, '(2026-04-03)')
 * bar.done('91 simulated days built')
 */
export function createPhaseProgress(log: StartLog, phase: string, unit: string, total: number) {
  if (log.tty) {
    const bar = new cliProgress.SingleBar(
      {
        format: `lsreport up: ${phase.padEnd(8)} [{bar}] {value}/{total} ${unit} {detail}`,
        stream: log.stream,
        // the cursor stays: Ctrl-C in the middle of a bar must not leave the terminal without one
        hideCursor: false,
        clearOnComplete: true,
      },
      cliProgress.Presets.shades_classic,
    )
    bar.start(total, 0, { detail: '' })
    return {
      update(value: number, detail = '') {
        bar.update(value, { detail })
      },
      done(text: string) {
        bar.stop()
        log.line(phase, text)
      },
    }
  }
  let last = 0
  return {
    update(value: number, detail = '') {
      if (Date.now() - last < LINE_MS) return
      last = Date.now()
      log.line(phase, `${value}/${total} ${unit}${detail ? ` ${detail}` : ''}`)
    },
    done(text: string) {
      log.line(phase, text)
    },
  }
}

/**
 * A path as a user would type it from here: relative when under the working directory.
 *
 * @example
 * shown(path.join(process.cwd(), 'data/pg')) // 'data/pg'
 */
export function shown(file: string): string {
  const relative = path.relative(process.cwd(), file)
  return relative.startsWith('..') || path.isAbsolute(relative) ? file : relative
}
