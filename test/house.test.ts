import path from 'node:path'
import ts from 'typescript'
import { describe, expect, test } from 'vitest'
import { readTree, type SourceFile } from './helpers/source-tree.ts'

const ROOT = path.resolve(import.meta.dirname, '..')

/** The longest function, arrow or method body (its braces included). */
const MAX_FUNCTION_LINES = 150
/** The longest source file. */
const MAX_FILE_LINES = 400
/** What an allowed factory may hold besides its closures (its state, a few constants, its return). */
const MAX_FACTORY_GLUE_LINES = 30

/**
 * Factories over MAX_FUNCTION_LINES allowed because their body is a list of closures (each one checked on
 * its own): `createX(deps)` holding its state and returning its methods. The check verifies each entry is
 * such a body (at most MAX_FACTORY_GLUE_LINES of anything else) and is still over the limit.
 */
const CLOSURE_FACTORIES = new Set([
  'chain/log-fetcher.ts#createLogFetcher', // one fetch loop closure and its helpers
  'db/repos/chain.ts#createChainRepo', // repositories: one closure per query
  'db/repos/days.ts#createDaysRepo',
  'db/repos/records.ts#createRecordsRepo',
  'db/repos/reports.ts#createReportsRepo',
  'db/repos/webhooks.ts#createWebhooksRepo',
  'devnet/blocks.ts#createBlockBuilder', // the simulator's block builder: one closure per event kind
  'devnet/consensus.ts#createConsensusModel',
  'jobs/allowlist-writer.ts#createAllowlistWriter',
  'jobs/follower/index.ts#createFollower',
  'jobs/runner.ts#createInlineRunner',
  'platform/service.ts#createPlatformService', // one closure per account or wallet operation
])

/** The longest a single-concern file may grow (SINGLE_CONCERN_FILES). */
const MAX_SINGLE_CONCERN_LINES = 700

/**
 * Files over MAX_FILE_LINES that hold one concern (the rule: no file over 400 lines holds two), each
 * with that concern; up to MAX_SINGLE_CONCERN_LINES. An entry must leave the list once under the limit.
 */
const SINGLE_CONCERN_FILES: Record<string, string> = {
  'bench/api.ts': 'the API benchmark: its cases, rounds and table',
  'bench/day.ts': 'the day benchmark: its cases and table',
  'bench/day-worker.ts': "the day benchmark's worker process",
  'chain/doctor.ts': "`lsreport doctor`'s checks of a node and the protocol's contracts",
  'db/repos/records.ts': 'the daily records repository',
  'db/repos/reports.ts': 'the oracle reports repository',
  'db/repos/webhooks.ts': 'the webhook subscriptions and deliveries repository',
  'engine/redemptions.ts': 'the redemption queue math',
  'engine/wallet-record.ts': "a wallet's daily record",
  'jobs/follower/index.ts': 'the chain follower',
  'jobs/runner.ts': 'the inline job runner',
}

/**
 * Functions over MAX_FUNCTION_LINES not yet split, each with its size as a ceiling: an entry may not grow and
 * must leave the list once under the limit (the check fails either way).
 */
const OVERSIZE_DEBT: Record<string, number> = {}

/** What the house check reads: product code and bench/, not tests, test helpers nor golden vectors. */
function isSource(file: string): boolean {
  return !file.endsWith('.test.ts') && file.includes('/') && !/^(test|fixtures)\//.test(file)
}

/** Lines of a file as `wc -l` counts them (a last line without a newline counts too). */
function fileLines(text: string): number {
  const lines = text.split('\n').length
  return text.endsWith('\n') ? lines - 1 : lines
}

/** The name a function-like node is known by: its own, its variable's, its property's, else `<anonymous>`. */
function nameOf(node: ts.FunctionLikeDeclaration, sf: ts.SourceFile): string {
  if (node.name) return node.name.getText(sf)
  const parent = node.parent
  if ((ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) && parent.name)
    return parent.name.getText(sf)
  return '<anonymous>'
}

/** A function value: an arrow or function expression (parentheses and `as`/`satisfies` looked through). */
function isClosure(node: ts.Node | undefined): boolean {
  if (!node) return false
  if (ts.isArrowFunction(node) || ts.isFunctionExpression(node)) return true
  if (ts.isParenthesizedExpression(node) || ts.isAsExpression(node) || ts.isSatisfiesExpression(node))
    return isClosure(node.expression)
  return false
}

/**
 * Lines of a function body that are not closures: every statement but function declarations, `const f =
 * () => …` and a returned object's methods, function-valued properties and shorthand names.
 */
function glueLines(body: ts.Block, sf: ts.SourceFile): number {
  const span = (n: ts.Node) =>
    sf.getLineAndCharacterOfPosition(n.getEnd()).line -
    sf.getLineAndCharacterOfPosition(n.getStart(sf)).line +
    1
  let glue = 0
  for (const statement of body.statements) {
    if (ts.isFunctionDeclaration(statement)) continue
    if (
      ts.isVariableStatement(statement) &&
      statement.declarationList.declarations.every((d) => isClosure(d.initializer))
    )
      continue
    if (
      ts.isReturnStatement(statement) &&
      statement.expression &&
      ts.isObjectLiteralExpression(statement.expression)
    ) {
      for (const property of statement.expression.properties) {
        const closure =
          ts.isMethodDeclaration(property) ||
          ts.isShorthandPropertyAssignment(property) ||
          ts.isGetAccessorDeclaration(property) ||
          ts.isSetAccessorDeclaration(property) ||
          (ts.isPropertyAssignment(property) && isClosure(property.initializer))
        if (!closure) glue += span(property)
      }
      continue
    }
    glue += span(statement)
  }
  return glue
}

/**
 * The house rules over a list of files: no function, arrow or method body over MAX_FUNCTION_LINES (but
 * the closure factories allowed), no source file over MAX_FILE_LINES; the debt list's entries within their
 * ceilings and still needed. Returns one line per breach.
 */
function houseViolations(
  files: SourceFile[],
  factories: ReadonlySet<string> = CLOSURE_FACTORIES,
  debt: Readonly<Record<string, number>> = OVERSIZE_DEBT,
  singleConcern: Readonly<Record<string, string>> = SINGLE_CONCERN_FILES,
): string[] {
  const violations: string[] = []
  const seen = new Map<string, number>()
  const over = (key: string, lines: number, limit: number, what: string) => {
    if (singleConcern[key] !== undefined) {
      seen.set(key, lines)
      if (lines > MAX_SINGLE_CONCERN_LINES)
        violations.push(
          `${key}: ${what} of ${lines} lines (one concern, at most ${MAX_SINGLE_CONCERN_LINES})`,
        )
      return
    }
    const ceiling = debt[key]
    if (ceiling !== undefined) {
      seen.set(key, lines)
      if (lines > ceiling) violations.push(`${key}: ${what} grew to ${lines} lines (debt ceiling ${ceiling})`)
    } else violations.push(`${key}: ${what} of ${lines} lines (at most ${limit})`)
  }
  for (const file of files) {
    if (!isSource(file.path)) continue
    const lines = fileLines(file.text)
    if (lines > MAX_FILE_LINES) over(file.path, lines, MAX_FILE_LINES, 'file')
    const sf = ts.createSourceFile(file.path, file.text, ts.ScriptTarget.Latest, true)
    const visit = (node: ts.Node) => {
      if (ts.isFunctionLike(node) && 'body' in node && node.body) {
        const fn = node as ts.FunctionLikeDeclaration
        const body = fn.body as ts.ConciseBody
        const start = sf.getLineAndCharacterOfPosition(body.getStart(sf)).line
        const span = sf.getLineAndCharacterOfPosition(body.getEnd()).line - start + 1
        const key = `${file.path}#${nameOf(fn, sf)}`
        if (span > MAX_FUNCTION_LINES) {
          if (factories.has(key)) {
            seen.set(key, span)
            const glue = ts.isBlock(body) ? glueLines(body, sf) : span
            if (glue > MAX_FACTORY_GLUE_LINES)
              violations.push(`${key}: not a list of closures (${glue} lines besides closures)`)
          } else over(key, span, MAX_FUNCTION_LINES, `body (line ${start + 1})`)
        }
      }
      ts.forEachChild(node, visit)
    }
    visit(sf)
  }
  for (const key of [...factories, ...Object.keys(debt), ...Object.keys(singleConcern)]) {
    if (!seen.has(key)) violations.push(`${key}: within the limits now: remove it from the list`)
  }
  return violations
}

/** A file of `lines` lines (a newline after each). */
const fileOf = (filePath: string, ...parts: string[]): SourceFile => ({
  path: filePath,
  text: parts.join(''),
})
/** A function statement whose body spans `lines` lines, braces included. */
const fn = (name: string, lines: number) =>
  `export function ${name}() {\n${'  void 0\n'.repeat(lines - 2)}}\n`
/** `lines` lines of filler statements. */
const filler = (lines: number) => 'void 0\n'.repeat(lines)

describe('house rules (function and file sizes)', () => {
  test('behavior: every source file of the tree keeps to the sizes (closure factories and recorded debt aside)', () => {
    const tree = readTree(ROOT)
    expect(tree.some((f) => f.path === 'api/app.ts')).toBe(true)
    expect(houseViolations(tree)).toEqual([])
  })

  test('behavior: api/ holds no exception: its files and functions are within the limits', () => {
    const listed = [...CLOSURE_FACTORIES, ...Object.keys(OVERSIZE_DEBT), ...Object.keys(SINGLE_CONCERN_FILES)]
    expect(listed.filter((key) => key.startsWith('api/'))).toEqual([])
  })

  test('behavior: a planted long function, long arrow, long method or long file fails the check', () => {
    const files = [
      fileOf('api/ok.ts', fn('fits', MAX_FUNCTION_LINES)),
      fileOf('api/long.ts', fn('tooLong', MAX_FUNCTION_LINES + 1)),
      fileOf(
        'jobs/arrow.ts',
        `export const handler = async () => {\n${filler(MAX_FUNCTION_LINES - 1)}}\n`,
        `app.get('/x', async () => {\n${filler(MAX_FUNCTION_LINES - 1)}})\n`,
      ),
      fileOf('db/klass.ts', `class K {\n  run() {\n${filler(MAX_FUNCTION_LINES - 1)}  }\n}\n`),
      fileOf('engine/big.ts', filler(MAX_FILE_LINES + 1)),
      fileOf('engine/full.ts', filler(MAX_FILE_LINES)),
      // tests, test helpers and golden vectors are not checked
      fileOf('api/long.test.ts', fn('longTest', 500), filler(500)),
      fileOf('test/helpers/long.ts', fn('longHelper', 500)),
      fileOf('fixtures/engine/vectors.ts', filler(800)),
    ]
    expect(houseViolations(files, new Set(), {}, {}).sort()).toEqual(
      [
        `api/long.ts#tooLong: body (line 1) of ${MAX_FUNCTION_LINES + 1} lines (at most ${MAX_FUNCTION_LINES})`,
        `jobs/arrow.ts#<anonymous>: body (line ${MAX_FUNCTION_LINES + 2}) of ${MAX_FUNCTION_LINES + 1} lines (at most ${MAX_FUNCTION_LINES})`,
        `jobs/arrow.ts#handler: body (line 1) of ${MAX_FUNCTION_LINES + 1} lines (at most ${MAX_FUNCTION_LINES})`,
        `db/klass.ts#run: body (line 2) of ${MAX_FUNCTION_LINES + 1} lines (at most ${MAX_FUNCTION_LINES})`,
        `engine/big.ts: file of ${MAX_FILE_LINES + 1} lines (at most ${MAX_FILE_LINES})`,
      ].sort(),
    )
  })

  test('behavior: an allowed factory must be a list of closures, and an entry no longer needed or grown fails', () => {
    const closures = Array.from({ length: 20 }, (_, i) => `  function step${i}() {\n${filler(8)}  }\n`)
    const factory = (name: string, glue: number) =>
      `export function ${name}(deps: unknown) {\n  let state = 0\n${closures.join('')}${filler(glue)}` +
      `  return { step0, run: () => state, get value() { return state } }\n}\n`
    const files = [
      fileOf('db/repos/a.ts', factory('createA', 0)),
      fileOf('db/repos/b.ts', factory('createB', MAX_FACTORY_GLUE_LINES)),
      fileOf('db/repos/c.ts', fn('createC', 20)),
      fileOf('jobs/debt.ts', fn('grown', 200), fn('kept', 170)),
      fileOf('chain/done.ts', fn('split', 40)),
    ]
    const factories = new Set(['db/repos/a.ts#createA', 'db/repos/b.ts#createB', 'db/repos/c.ts#createC'])
    files.push(
      fileOf('engine/one.ts', filler(MAX_FILE_LINES + 10)),
      fileOf('engine/huge.ts', filler(MAX_SINGLE_CONCERN_LINES + 1)),
      fileOf('engine/small.ts', filler(10)),
    )
    const debt = { 'jobs/debt.ts#grown': 190, 'jobs/debt.ts#kept': 170, 'chain/done.ts#split': 160 }
    const concerns = { 'engine/one.ts': 'one', 'engine/huge.ts': 'huge', 'engine/small.ts': 'small' }
    expect(houseViolations(files, factories, debt, concerns).sort()).toEqual(
      [
        `engine/huge.ts: file of ${MAX_SINGLE_CONCERN_LINES + 1} lines (one concern, at most ${MAX_SINGLE_CONCERN_LINES})`,
        'engine/small.ts: within the limits now: remove it from the list',
        'db/repos/b.ts#createB: not a list of closures (31 lines besides closures)',
        'db/repos/c.ts#createC: within the limits now: remove it from the list',
        'jobs/debt.ts#grown: body (line 1) grew to 200 lines (debt ceiling 190)',
        'chain/done.ts#split: within the limits now: remove it from the list',
      ].sort(),
    )
  })
})
