import { exportSuite } from './helpers/export-suite.ts'
import { postgresAvailable, redisAvailable } from './helpers/services.ts'

// Exports as jobs on the embedded default (PGlite, the inline runner, `lsreport export` as a process) and in
// production's shape (Postgres and BullMQ on a real Redis), from one devnet history. Under CI=true both
// services count as available, so a missing one fails the run instead of leaving its backend out.
const production = (await postgresAvailable()) && (await redisAvailable())
exportSuite(production ? ['pglite', 'postgres'] : ['pglite'])
