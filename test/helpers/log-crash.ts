/**
 * A process that logs `count` numbered lines through the service's logger (`createLogger`) into `file`, then
 * crashes on an uncaught exception before any of its batched writes started (test/log-flush.test.ts checks that
 * every line still reached the file). Run: node --import tsx test/helpers/log-crash.ts <file> <count>
 */
import { createLogger } from '../../common/logger.ts'

const [file, count] = process.argv.slice(2)
if (!file || !count) throw new Error('usage: log-crash.ts <file> <count>')
const logger = createLogger({ level: 'info', destination: file })
for (let line = 0; line < Number(count); line++) logger.info({ line }, 'line logged')
// in the same turn: no batch was written yet, every line waits in the logger's queue
throw new Error('crashed on purpose')
