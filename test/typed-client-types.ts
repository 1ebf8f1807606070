// Type-level checks of the typed client (clients/typescript): compiled by `npm run check` (tsconfig.json
// includes test/) and by test/typed-client.test.ts, which also compiles it with every `@ts-expect-error`
// removed and expects an error on each of those lines. Nothing runs it.
import type { LsReportClient } from '../clients/typescript/src/index.ts'

/** Calls the API's document allows type-check, with typed answers; calls it does not allow are errors. */
export async function typedCalls(client: LsReportClient): Promise<string[]> {
  const created = await client.POST('/v0/platform/accounts', { body: { key: 'customer-1' } })
  const wallet = await client.POST('/v0/platform/accounts/{idOrKey}/wallets', {
    params: { path: { idOrKey: 'customer-1' } },
    body: { address: '0x8c1bed5b9a0928467c9b1341da1d7bd5e10b6549', type: 'ETH', allowlisted: false },
  })
  const accountId: string | undefined = created.data?.id
  const status: string | undefined = wallet.data?.status

  // @ts-expect-error a misspelled path is no path of the API
  await client.GET('/v0/platform/acounts')
  // @ts-expect-error the path has no DELETE
  await client.DELETE('/v0/platform/accounts')
  // @ts-expect-error the path parameter is required
  await client.GET('/v0/platform/accounts/{idOrKey}', {})
  // @ts-expect-error an account key is a string
  await client.POST('/v0/platform/accounts', { body: { key: 42 } })
  await client.POST('/v0/platform/accounts/{idOrKey}/wallets', {
    params: { path: { idOrKey: 'customer-1' } },
    // @ts-expect-error a wallet needs its address
    body: { type: 'ETH' },
  })
  // @ts-expect-error an account's status is a string
  const wrong: number | undefined = created.data?.status

  return [accountId ?? '', status ?? '', String(wrong)]
}
