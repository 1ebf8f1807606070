#!/usr/bin/env node
// Adds lockfile entries for platform-specific optional packages that npm left out.
//
// Why: the registry these machines use does not serve every platform's binary package (e.g.
// @biomejs/cli-darwin-arm64). npm 11 then marks them inert and omits them from package-lock.json, and
// `npm ci` refuses the lockfile ("Missing: X@ from lock file"). An entry with the version, os and cpu lets
// `npm ci` validate and skip them on platforms they do not fit, exactly as with a complete lockfile.
// Run after any `npm install` that rewrites package-lock.json:  node tools/lockfile-optional-platforms.mjs
import fs from 'node:fs'

const file = new URL('../package-lock.json', import.meta.url)
const lock = JSON.parse(fs.readFileSync(file, 'utf8'))
const packages = lock.packages

const OS = ['darwin', 'linux', 'win32', 'android', 'freebsd', 'openbsd', 'sunos', 'aix']
const CPU = {
  arm64: 'arm64',
  x64: 'x64',
  amd64: 'x64',
  arm: 'arm',
  ia32: 'ia32',
  ppc64: 'ppc64',
  s390x: 's390x',
}

function platformOf(name) {
  const parts = name.split('/').pop().split('-')
  const os = parts.find((p) => OS.includes(p))
  const cpu = parts.map((p) => CPU[p]).find(Boolean)
  if (!os || !cpu) return undefined
  return {
    os: [os],
    cpu: [cpu],
    ...(parts.includes('musl') ? { libc: ['musl'] } : os === 'linux' ? { libc: ['glibc'] } : {}),
  }
}

let added = 0
for (const [location, entry] of Object.entries(packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const base = location === '' ? '' : `${location}/`
    if (packages[`${base}node_modules/${name}`] || packages[`node_modules/${name}`]) continue
    const platform = platformOf(name)
    if (!platform || !/^\d+\.\d+\.\d+/.test(version)) continue
    packages[`node_modules/${name}`] = {
      version,
      ...(entry.dev ? { dev: true } : {}),
      optional: true,
      ...platform,
    }
    added++
  }
}
fs.writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`)
console.log(`lockfile: added ${added} platform-specific optional entries`)
