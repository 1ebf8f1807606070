#!/usr/bin/env node
// Bundles the CLI with esbuild: cli/main.ts and what it imports from the repository, in ES module chunks
// (the commands import their modules when they run: separate chunks keep that laziness), every npm package
// left external (Node loads it from node_modules). Used two ways:
// - `npm run build` (this file as a script) writes dist/: the production image and any `npm ci --omit=dev`
//   install run it (bin/lsreport.mjs picks dist/main.mjs when esbuild, a dev dependency, is not installed);
// - bin/lsreport.mjs calls `bundleCli` after `npm ci` to keep a bundle of the sources as they are in
//   node_modules/.cache/lsreport/.
// A source's `import.meta.url` (and dirname, filename) keep pointing at the source file, written relative to
// the chunk: db/migrations/003_records.ts reads fixtures/fee-schedules.json next to where its source sits,
// wherever the tree is (a bundle moved along with the tree keeps working).
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

/** The import of `fileURLToPath` a source gets when it uses import.meta.dirname or filename (same line: no shift). */
const PATH_HELPER = '__lsreportFileURLToPath'

/**
 * Bundles `<root>/cli/main.ts` into `outdir` (`main.mjs` and its chunks, source maps linked). `runDir`: the
 * directory the chunks will run from, when not `outdir` (a bundle built in one place for a tree elsewhere).
 * Returns esbuild's metafile (inputs and outputs).
 *
 * @example
 * await bundleCli({ root: '/app', outdir: '/app/dist' }) // /app/dist/main.mjs
 */
export async function bundleCli({ root = ROOT, outdir, runDir = outdir }) {
  const esbuild = await import('esbuild')
  const ownPaths = {
    name: 'own-import-meta',
    setup(b) {
      b.onLoad({ filter: /\.ts$/ }, async (args) => {
        const source = await fs.promises.readFile(args.path, 'utf8')
        const relative = path.relative(runDir, args.path).split(path.sep).join('/')
        const url = `new URL(${JSON.stringify(relative)}, import.meta.url)`
        const usesPath = /import\.meta\.(dirname|filename)/.test(source)
        return {
          loader: 'ts',
          contents:
            (usesPath ? `import { fileURLToPath as ${PATH_HELPER} } from 'node:url'; ` : '') +
            source
              .replaceAll('import.meta.url', `${url}.href`)
              .replaceAll('import.meta.dirname', `${PATH_HELPER}(new URL('.', ${url})).slice(0, -1)`)
              .replaceAll('import.meta.filename', `${PATH_HELPER}(${url})`),
        }
      })
    },
  }
  // esbuild's service process (~60 MB) would otherwise live as long as the process that bundled: a first
  // `npm start` bundles, then runs for hours
  const result = await esbuild
    .build({
      absWorkingDir: root,
      entryPoints: { main: path.join(root, 'cli', 'main.ts') },
      outdir,
      outExtension: { '.js': '.mjs' },
      bundle: true,
      splitting: true,
      packages: 'external',
      platform: 'node',
      format: 'esm',
      target: 'node20',
      sourcemap: 'linked',
      // stack traces name the .ts file and line; the sources' text would only sit in every process's memory
      sourcesContent: false,
      metafile: true,
      logLevel: 'silent',
      plugins: [ownPaths],
    })
    .finally(() => esbuild.stop())
  return result.metafile
}

// `npm run build`: dist/, made afresh. `node tools/bundle.mjs <outdir>` writes the same bundle elsewhere, to be
// copied into dist/ of this tree (test/production-install.test.ts assembles an image's files that way).
if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const runDir = path.join(ROOT, 'dist')
  const outdir = process.argv[2] ? path.resolve(process.argv[2]) : runDir
  fs.rmSync(outdir, { recursive: true, force: true })
  const started = performance.now()
  const metafile = await bundleCli({ outdir, runDir })
  const files = Object.keys(metafile.outputs).filter((f) => f.endsWith('.mjs')).length
  process.stdout.write(
    `lsreport: bundled ${Object.keys(metafile.inputs).length} sources into ${path.relative(process.cwd(), outdir) || '.'} (${files} chunks) in ` +
      `${((performance.now() - started) / 1000).toFixed(1)} s\n`,
  )
}
