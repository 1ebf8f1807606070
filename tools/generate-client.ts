// `npm run client:generate`: writes the typed client's OpenAPI document and generated types
// (clients/typescript/openapi.json, clients/typescript/src/schema.d.ts) from the API as the sources build it,
// with no database and no network (cli/openapi.ts). The document is built with the default configuration (an
// empty environment), so the files are the same on every machine whatever the shell exports.
import fs from 'node:fs/promises'
import path from 'node:path'
import { openApiDocument } from '../cli/openapi.ts'
import { CLIENT_DIR, clientFiles } from './client-files.ts'

const root = path.resolve(import.meta.dirname, '..')
const files = await clientFiles(await openApiDocument({}))
for (const [name, text] of Object.entries(files)) {
  const file = path.join(root, CLIENT_DIR, name)
  await fs.mkdir(path.dirname(file), { recursive: true })
  await fs.writeFile(file, text)
  process.stdout.write(`wrote ${path.relative(root, file)}\n`)
}
