import ts from 'typescript'

/**
 * How a file reaches a module: loaded with the file, loaded when the code asks, or for types only; or a
 * command it runs (`spec` is then the command: a package's bin).
 */
export type ImportKind = 'static' | 'dynamic' | 'type' | 'command'

/** One module reference of a file. */
export interface ImportRef {
  file: string
  spec: string
  kind: ImportKind
}

const isCall = (node: ts.Node, name: string): node is ts.CallExpression =>
  ts.isCallExpression(node) && node.expression.getText() === name
const stringArgument = (call: ts.CallExpression): string | undefined => {
  const first = call.arguments[0]
  return first && ts.isStringLiteralLike(first) ? first.text : undefined
}

/** Calls that run a command: child_process's, and `run` (their promisified form in the tests). */
const RUNS_COMMAND = /(^|\.)(exec|execFile|execFileSync|execSync|spawn|spawnSync|run)$/

/**
 * The command a call runs, if it names one: `execFile('npx', ['redocly', …])`, `spawn('tsc --noEmit')`,
 * any `….bin/<command>` string, `path.join(root, 'node_modules', '.bin', '<command>')`.
 */
function commandOf(call: ts.CallExpression): string | undefined {
  const texts = call.arguments.map((arg) => (ts.isStringLiteralLike(arg) ? arg.text : undefined))
  const binPath = texts.find((text) => text?.includes('.bin/'))
  if (binPath) return binPath.split('.bin/')[1]!.split(/\s/)[0]
  const binFolder = texts.indexOf('.bin')
  if (binFolder >= 0) return texts[binFolder + 1]
  const first = texts[0]
  if (first === undefined || !RUNS_COMMAND.test(call.expression.getText())) return undefined
  const words = first.trim().split(/\s+/)
  if (words[0] !== 'npx') return words[0]
  if (words[1]) return words[1]
  const args = call.arguments[1]
  const command = args && ts.isArrayLiteralExpression(args) ? args.elements[0] : undefined
  return command && ts.isStringLiteralLike(command) ? command.text : undefined
}

/**
 * The module references of one file: `import` (a whole `import type` is for types only), `export … from`,
 * `import x = require()`, `import()`, `require()`, `require.resolve()`, `import.meta.resolve()` (a
 * reference resolved when the code runs: dynamic), `typeof import()` and `/// <reference types>` (types),
 * and the commands it runs (`commandOf`). Read with the TypeScript parser: an import in a comment or a string is
 * none. Used by test/dependencies.test.ts and test/architecture.test.ts.
 *
 * @example
 * importsOf('api/app.ts', text).filter((r) => r.kind !== 'command').map((r) => r.spec)
 */
export function importsOf(file: string, text: string): ImportRef[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const refs: ImportRef[] = source.typeReferenceDirectives.map((ref) => ({
    file,
    spec: ref.fileName,
    kind: 'type' as const,
  }))
  const add = (spec: string | undefined, kind: ImportKind) => {
    if (spec !== undefined) refs.push({ file, spec, kind })
  }
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      add(node.moduleSpecifier.text, node.importClause?.isTypeOnly ? 'type' : 'static')
    } else if (
      ts.isExportDeclaration(node) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      add(node.moduleSpecifier.text, node.isTypeOnly ? 'type' : 'static')
    } else if (
      ts.isImportEqualsDeclaration(node) &&
      ts.isExternalModuleReference(node.moduleReference) &&
      ts.isStringLiteral(node.moduleReference.expression)
    ) {
      add(node.moduleReference.expression.text, node.isTypeOnly ? 'type' : 'static')
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      const literal = node.argument.literal
      if (ts.isStringLiteral(literal)) add(literal.text, 'type')
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      add(stringArgument(node), 'dynamic')
    } else if (
      isCall(node, 'require') ||
      isCall(node, 'require.resolve') ||
      isCall(node, 'import.meta.resolve')
    ) {
      add(stringArgument(node), 'dynamic')
    } else if (ts.isCallExpression(node)) {
      add(commandOf(node), 'command')
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return refs
}
