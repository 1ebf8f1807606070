import type { Command } from 'commander'

/**
 * Registers `lsreport openapi [--out FILE]`: the OpenAPI document GET /docs/json serves, built from the
 * sources with no database and no network (cli/openapi.ts, imported when it runs).
 *
 * @example
 * registerOpenApiCommand(program)
 */
export function registerOpenApiCommand(program: Command): void {
  program
    .command('openapi')
    .description(
      'Print the OpenAPI document the API serves at /docs/json (one JSON line), built with no database nor ' +
        'network; BASE_URL (or HOST and PORT) names its server',
    )
    .option('--out <file>', 'write it indented into <file> instead')
    .action(async (opts: { out?: string }) =>
      (await import('./openapi.ts')).openApiCommand(process.env, opts),
    )
}
