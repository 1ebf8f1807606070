#!/usr/bin/env node
// Runs the TypeScript CLI, right after `npm ci`. The sources are bundled with esbuild (dependencies stay
// in node_modules, loaded by Node itself) into node_modules/.cache/lsreport/, rebuilt whenever a source
// file changed, and the bundle runs on plain Node: no TypeScript loader thread between Node and every
// module, which saves about a second of CPU and 80 MB at each start (see bench/start.ts). Stack traces
// point at the .ts sources (source maps). Should the bundle fail to build, tsx runs the sources as before.
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const entry = path.join(root, 'cli', 'main.ts')
const cacheDir = path.join(root, 'node_modules', '.cache', 'lsreport')
const manifest = path.join(cacheDir, 'inputs.json')

/** Size and modification time of a file, or null when it is gone. */
function fingerprint(file) {
  try {
    const stat = fs.statSync(file)
    return `${stat.size}:${stat.mtimeMs}`
  } catch {
    return null
  }
}

/** The bundle's entry when it was built from the sources as they are now (every input unchanged). */
function freshBundle() {
  try {
    const inputs = JSON.parse(fs.readFileSync(manifest, 'utf8'))
    const main = path.join(cacheDir, inputs.build, 'main.mjs')
    if (inputs.node !== process.version || !fs.existsSync(main)) return undefined
    const same = Object.entries(inputs.files).every(
      ([file, print]) => fingerprint(path.join(root, file)) === print,
    )
    return same ? main : undefined
  } catch {
    return undefined
  }
}

/**
 * Bundles cli/main.ts and what it imports from the repository. `import.meta.url` (and dirname, filename)
 * keep the value they have in their own source file, so paths relative to a module work as under tsx.
 */
async function build() {
  const esbuild = await import('esbuild')
  const ownPaths = {
    name: 'own-import-meta',
    setup(b) {
      b.onLoad({ filter: /\.ts$/ }, async (args) => {
        const source = await fs.promises.readFile(args.path, 'utf8')
        return {
          loader: 'ts',
          contents: source
            .replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href))
            .replaceAll('import.meta.dirname', JSON.stringify(path.dirname(args.path)))
            .replaceAll('import.meta.filename', JSON.stringify(args.path)),
        }
      })
    },
  }
  // each build in its own folder (a process may still be running an older one), named by its content
  const staging = path.join(cacheDir, `build-${process.pid}-${Date.now()}`)
  const result = await esbuild.build({
    entryPoints: { main: entry },
    outdir: staging,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    // the commands import their modules when they run: separate chunks keep that laziness
    splitting: true,
    packages: 'external',
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: 'linked',
    metafile: true,
    logLevel: 'silent',
    plugins: [ownPaths],
  })
  const files = {}
  for (const input of Object.keys(result.metafile.inputs)) {
    const file = path.relative(root, path.resolve(root, input))
    files[file] = fingerprint(path.join(root, file))
  }
  const hash = createHash('sha256')
  for (const output of Object.keys(result.metafile.outputs).sort()) hash.update(fs.readFileSync(output))
  const build = `build-${hash.digest('hex').slice(0, 16)}`
  try {
    fs.renameSync(staging, path.join(cacheDir, build))
  } catch (error) {
    // another process built the same bundle first
    if (!fs.existsSync(path.join(cacheDir, build, 'main.mjs'))) throw error
    fs.rmSync(staging, { recursive: true, force: true })
  }
  // builds of sources long gone (a day old: no process still loads chunks from them)
  for (const old of fs.readdirSync(cacheDir)) {
    if (
      old.startsWith('build-') &&
      old !== build &&
      Date.now() - fs.statSync(path.join(cacheDir, old)).mtimeMs > 86_400_000
    )
      fs.rmSync(path.join(cacheDir, old), { recursive: true, force: true })
  }
  const temporary = `${manifest}.${process.pid}.tmp`
  fs.writeFileSync(temporary, JSON.stringify({ node: process.version, build, files }))
  fs.renameSync(temporary, manifest)
  return path.join(cacheDir, build, 'main.mjs')
}

let main = freshBundle()
if (!main) {
  try {
    main = await build()
  } catch (error) {
    process.stderr.write(`lsreport: running the sources through tsx (bundle not built: ${error.message})\n`)
  }
}
if (main) {
  process.setSourceMapsEnabled(true)
  await import(pathToFileURL(main).href)
} else {
  const { register } = await import('tsx/esm/api')
  register()
  await import('../cli/main.ts')
}
