import type { Knex } from 'knex'
import type { MigrationOptions } from '../migrate.ts'
import * as m001 from './001_platform.ts'
import * as m002 from './002_chain.ts'
import * as m003 from './003_records.ts'
import * as m004 from './004_reporting.ts'
import * as m005 from './005_webhooks.ts'
import * as m006 from './006_report_tx_state.ts'
import * as m007 from './007_report_shapes.ts'
import * as m008 from './008_delegations.ts'
import * as m009 from './009_webhook_breaker.ts'
import * as m010 from './010_account_key_problems.ts'
import * as m011 from './011_report_prices.ts'
import * as m012 from './012_eth_flows.ts'
import * as m013 from './013_report_versions.ts'
import * as m014 from './014_consensus_snapshots.ts'
import * as m015 from './015_signing_keys.ts'
import * as m016 from './016_day_accounts_index.ts'
import * as m017 from './017_webhook_secrets_sealed.ts'
import * as m018 from './018_allowlist_change_retry.ts'
import * as m019 from './019_content_hash_scheme.ts'
import * as m020 from './020_derived_prices.ts'
import * as m021 from './021_exports.ts'

interface Migration {
  /** `options`: what `migrate` was given (the sealing key a migration that seals needs). */
  up(db: Knex, options?: MigrationOptions): Promise<void>
  down(db: Knex): Promise<void>
}

/** Append-only, ordered. Add a file and a line; never edit an applied migration. */
const migrations: [string, Migration][] = [
  ['001_platform', m001],
  ['002_chain', m002],
  ['003_records', m003],
  ['004_reporting', m004],
  ['005_webhooks', m005],
  ['006_report_tx_state', m006],
  ['007_report_shapes', m007],
  ['008_delegations', m008],
  ['009_webhook_breaker', m009],
  ['010_account_key_problems', m010],
  ['011_report_prices', m011],
  ['012_eth_flows', m012],
  ['013_report_versions', m013],
  ['014_consensus_snapshots', m014],
  ['015_signing_keys', m015],
  ['016_day_accounts_index', m016],
  ['017_webhook_secrets_sealed', m017],
  ['018_allowlist_change_retry', m018],
  ['019_content_hash_scheme', m019],
  ['020_derived_prices', m020],
  ['021_exports', m021],
]

/** knex migration source over the in-code list (works the same under tsx, vitest and any bundler). */
export const migrationSource: Knex.MigrationSource<[string, Migration]> = {
  getMigrations: async () => migrations,
  getMigrationName: ([name]) => name,
  getMigration: async ([, migration]) => migration,
}
