import fs from 'node:fs'
import path from 'node:path'
import { LsReportError } from '../common/errors.ts'

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** The live process (other than this one) that holds `dir`'s lock, or undefined when none does. */
export function dataDirHolder(dir: string): number | undefined {
  let holder: number
  try {
    holder = Number(fs.readFileSync(`${dir}.lock`, 'utf8'))
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw err
  }
  return Number.isInteger(holder) && holder > 0 && holder !== process.pid && alive(holder)
    ? holder
    : undefined
}

/**
 * PGlite allows one process per data directory. Takes `<dir>.lock` (holding our pid) or throws a clear
 * error naming the process that holds it. Returns the release function.
 */
export function lockDataDir(dir: string): () => void {
  const file = `${dir}.lock`
  fs.mkdirSync(path.dirname(file), { recursive: true })
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(file, String(process.pid), { flag: 'wx' })
      return () => fs.rmSync(file, { force: true })
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
      const holder = dataDirHolder(dir)
      if (holder !== undefined) {
        throw new LsReportError(
          `the embedded database ${dir} is in use by process ${holder} (PGlite allows one process per data directory): ` +
            'stop it first, or set DATABASE_URL to use a Postgres server shared by several processes',
        )
      }
      fs.rmSync(file, { force: true }) // stale lock of a dead process
    }
  }
  throw new LsReportError(`could not lock ${dir}`)
}
