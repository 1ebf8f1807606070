import fs from 'node:fs'
import path from 'node:path'

/** One source file: its path relative to the repository root (with `/`) and its text. */
export interface SourceFile {
  path: string
  text: string
}

/**
 * Reads every `.ts` file under `root` (skipping node_modules, dot folders and `.d.ts`) as `SourceFile`s:
 * what the architecture and house checks (test/architecture.test.ts, test/house.test.ts) read.
 *
 * @example
 * readTree('/work/main').find((f) => f.path === 'api/app.ts')
 */
export function readTree(root: string, dir = root): SourceFile[] {
  const out: SourceFile[] = []
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) out.push(...readTree(root, full))
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) {
      out.push({
        path: path.relative(root, full).split(path.sep).join('/'),
        text: fs.readFileSync(full, 'utf8'),
      })
    }
  }
  return out
}
