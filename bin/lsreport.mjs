#!/usr/bin/env node
// Runs the CLI. Two ways, picked by what is installed:
// - a production install (`npm ci --omit=dev`, the Docker image): esbuild, a dev dependency, is absent, and the
//   bundle `npm run build` made (dist/main.mjs, tools/bundle.mjs) runs on plain Node;
// - a development install (`npm ci`): the sources are bundled with esbuild (dependencies stay in node_modules,
//   loaded by Node itself) into node_modules/.cache/lsreport/, rebuilt whenever a source file changed (dist/ is
//   not used: it may be older than the sources). No TypeScript loader thread between Node and every module
//   saves about a second of CPU and 80 MB at each start (see bench/start.ts). Should the bundle fail to
//   build, tsx runs the sources as before.
// Stack traces point at the .ts sources (source maps).
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const dist = path.join(root, 'dist', 'main.mjs')
const cacheDir = path.join(root, 'node_modules', '.cache', 'lsreport')
const manifest = path.join(cacheDir, 'inputs.json')
const BUNDLER = path.join('tools', 'bundle.mjs')

/** True when the dev dependencies are installed (esbuild stands for them); false on `npm ci --omit=dev`. */
function devInstall() {
  try {
    import.meta.resolve('esbuild')
    return true
  } catch {
    return false
  }
}

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
    // a manifest of an older bin/lsreport.mjs (before the bundler was one of the inputs)
    if (!(BUNDLER in inputs.files)) return undefined
    const same = Object.entries(inputs.files).every(
      ([file, print]) => fingerprint(path.join(root, file)) === print,
    )
    return same ? main : undefined
  } catch {
    return undefined
  }
}

/** Bundles the sources into the cache (tools/bundle.mjs), in a folder named by the bundle's content. */
async function build() {
  const { bundleCli } = await import('../tools/bundle.mjs')
  // each build in its own folder (a process may still be running an older one), named by its content
  const staging = path.join(cacheDir, `build-${process.pid}-${Date.now()}`)
  const metafile = await bundleCli({ root, outdir: staging })
  // the bundler is an input too: a change to how sources are bundled rebuilds
  const files = { [BUNDLER]: fingerprint(path.join(root, BUNDLER)) }
  for (const input of Object.keys(metafile.inputs)) {
    const file = path.relative(root, path.resolve(root, input))
    files[file] = fingerprint(path.join(root, file))
  }
  const hash = createHash('sha256')
  for (const output of Object.keys(metafile.outputs).sort())
    hash.update(fs.readFileSync(path.resolve(root, output)))
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

let main
if (!devInstall()) {
  if (!fs.existsSync(dist)) {
    process.stderr.write(
      'lsreport: dist/main.mjs is missing and the dev dependencies are not installed (npm ci --omit=dev): ' +
        'run `npm run build` in a full install (`npm ci`) first, then copy dist/ along\n',
    )
    process.exit(1)
  }
  main = dist
} else {
  main = freshBundle()
  if (!main) {
    try {
      main = await build()
    } catch (error) {
      process.stderr.write(`lsreport: running the sources through tsx (bundle not built: ${error.message})\n`)
    }
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
