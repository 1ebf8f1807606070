/** Memory of a process tree (a command and what it started), read from /proc: the benchmarks' peak RSS. */
import fs from 'node:fs'

/** pid -> [ppid, rss bytes, name] of every process, from /proc. */
function processes(): Map<number, [number, number, string]> {
  const table = new Map<number, [number, number, string]>()
  const pageSize = 4096
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8')
      const close = stat.lastIndexOf(')')
      const name = stat.slice(stat.indexOf('(') + 1, close)
      const fields = stat.slice(close + 2).split(' ')
      // fields[0] is the state; ppid is fields[1], rss (pages) fields[21]
      table.set(Number(entry), [Number(fields[1]), Number(fields[21]) * pageSize, name])
    } catch {
      // the process ended meanwhile
    }
  }
  return table
}

/**
 * RSS of `root` and its descendants: total and per process (pid -> [name, rss]), in bytes.
 *
 * @example
 * const { total } = treeRss(child.pid)
 */
export function treeRss(root: number): { total: number; each: Map<number, [string, number]> } {
  const table = processes()
  const children = new Map<number, number[]>()
  for (const [pid, [ppid]] of table) children.set(ppid, [...(children.get(ppid) ?? []), pid])
  const each = new Map<number, [string, number]>()
  let total = 0
  const stack = [root]
  while (stack.length > 0) {
    const pid = stack.pop()!
    const row = table.get(pid)
    if (row) {
      total += row[1]
      each.set(pid, [row[2], row[1]])
    }
    stack.push(...(children.get(pid) ?? []))
  }
  return { total, each }
}
