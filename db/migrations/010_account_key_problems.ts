import type { Knex } from 'knex'

/**
 * Account keys that break the key rules of `platform/account-keys.ts`, which new keys must follow: keys made
 * before the rules are the platforms' and are not changed here; this view lists them for the operator
 * (`lsreport migrate` says how many): shaped like a UUID (it shadows account ids in `idOrKey`), holding control
 * or format characters (zero-width, bidirectional overrides, BOM), not in NFC, or equal to another key of the
 * same organization once both are NFC-normalized.
 */
export async function up(db: Knex): Promise<void> {
  await db.raw(`
    create view account_key_problems as
    select a.org_id, a.id as account_id, a.key, p.problem
    from accounts a
    cross join lateral (values
      (case when a.key ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
        then 'shaped like a UUID' end),
      (case when a.key ~ '[[:cntrl:]]' or a.key ~ '[\\u00ad\\u061c\\u180e\\u200b-\\u200f\\u202a-\\u202e\\u2060-\\u2064\\u2066-\\u206f\\ufeff\\ufff9-\\ufffb]'
        then 'control or format characters' end),
      (case when a.key <> normalize(a.key, NFC) then 'not NFC-normalized' end),
      (case when exists (select 1 from accounts b where b.org_id = a.org_id and b.id <> a.id
          and normalize(b.key, NFC) = normalize(a.key, NFC))
        then 'equal to another key of the organization once NFC-normalized' end)
    ) as p(problem)
    where p.problem is not null`)
}

/** Drops the view. */
export async function down(db: Knex): Promise<void> {
  await db.raw('drop view if exists account_key_problems')
}
