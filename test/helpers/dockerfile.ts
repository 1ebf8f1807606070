import fs from 'node:fs'
import path from 'node:path'

/** The repository's Dockerfile, read by test/deploy-files.test.ts and mirrored by test/production-install.test.ts. */
export const DOCKERFILE = path.resolve(import.meta.dirname, '../../Dockerfile')

/** One instruction: its keyword in upper case and the rest of its (joined) lines. */
export interface DockerInstruction {
  op: string
  args: string
}

/** One stage: `FROM <image> [AS <name>]` and its instructions. */
export interface DockerStage {
  image: string
  name: string | undefined
  instructions: DockerInstruction[]
}

/** A COPY: where from (`--from=<stage>`, else the build context), its sources and its destination. */
export interface DockerCopy {
  from: string | undefined
  sources: string[]
  dest: string
}

/**
 * The stages of a Dockerfile: comments dropped, `\` continuations joined, one stage per FROM.
 *
 * @example
 * parseDockerfile('FROM node:20 AS build\nRUN npm ci')[0] // { image: 'node:20', name: 'build', instructions: [{ op: 'RUN', args: 'npm ci' }] }
 */
export function parseDockerfile(text: string): DockerStage[] {
  const lines: string[] = []
  let pending = ''
  for (const raw of text.split('\n')) {
    if (!pending && /^\s*(#|$)/.test(raw)) continue
    const line = raw.trimEnd()
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1).trim()} `
      continue
    }
    lines.push((pending + line.trim()).trim())
    pending = ''
  }
  const stages: DockerStage[] = []
  for (const line of lines) {
    const [, op = '', args = ''] = /^(\S+)\s*(.*)$/.exec(line) ?? []
    if (op.toUpperCase() === 'FROM') {
      const [image = '', as, name] = args.split(/\s+/)
      stages.push({ image, name: as?.toUpperCase() === 'AS' ? name : undefined, instructions: [] })
    } else stages.at(-1)?.instructions.push({ op: op.toUpperCase(), args })
  }
  return stages
}

/** The instructions of a stage with keyword `op`. */
export function instructionsOf(stage: DockerStage, op: string): string[] {
  return stage.instructions.filter((i) => i.op === op).map((i) => i.args)
}

/** A stage's COPY instructions (shell form: `COPY [--from=x] [--chown=y] src... dest`). */
export function copiesOf(stage: DockerStage): DockerCopy[] {
  return instructionsOf(stage, 'COPY').map((args) => {
    const words = args.split(/\s+/)
    const flags = words.filter((w) => w.startsWith('--'))
    const paths = words.filter((w) => !w.startsWith('--'))
    const from = flags.find((f) => f.startsWith('--from='))?.slice('--from='.length)
    return { from, sources: paths.slice(0, -1), dest: paths.at(-1) ?? '' }
  })
}

/** The exec form (`["node", "-e", "..."]`) at the end of an instruction's arguments (after `CMD` for HEALTHCHECK). */
export function execForm(args: string): string[] {
  const json = args.slice(args.indexOf('['))
  return JSON.parse(json) as string[]
}

/** The repository's Dockerfile, parsed. */
export function readDockerfile(): DockerStage[] {
  return parseDockerfile(fs.readFileSync(DOCKERFILE, 'utf8'))
}
