// Onboards a wallet and reads its rewards with the typed client: makes sure an account exists (creates it
// when its key is new), attaches the wallet to it (when it is not attached yet: it is then submitted to the
// on-chain Allowlist), then reads the wallet's rewards over a range of dates. Prints one JSON object per step
// on stdout: {"step":"account",...}, {"step":"wallet",...}, {"step":"rewards",...}. The client needs the scopes
// read:platform write:platform read:eth-rewards.
//
//   LSREPORT_BASE_URL=http://127.0.0.1:8080 LSREPORT_CLIENT_ID=cl_... LSREPORT_CLIENT_SECRET=... \
//     npx tsx clients/typescript/examples/onboard-and-read.ts --wallet 0x... [--account customer-1] \
//     [--from 2026-04-01] [--to 2026-04-30]
//
// Every option may come from the environment instead: --base-url LSREPORT_BASE_URL, --client-id
// LSREPORT_CLIENT_ID, --client-secret LSREPORT_CLIENT_SECRET, --wallet WALLET_ADDRESS, --account ACCOUNT_KEY
// (default: customer-<the wallet's last 8 hex digits>), --from / --to REWARDS_FROM / REWARDS_TO (default: the
// API's, the 30 days up to the latest computed date).
import { createLsReportClient } from '../src/index.ts'

const OPTIONS = ['base-url', 'client-id', 'client-secret', 'wallet', 'account', 'from', 'to'] as const
type OptionName = (typeof OPTIONS)[number]

/** `--name value` and `--name=value` pairs of the command line; anything else: exits 2. */
function parseArgs(argv: readonly string[]): Partial<Record<OptionName, string>> {
  const parsed: Partial<Record<OptionName, string>> = {}
  for (let i = 0; i < argv.length; i++) {
    const [flag = '', inline] = argv[i]!.split(/=(.*)/s)
    const name = OPTIONS.find((option) => `--${option}` === flag)
    const value = inline ?? argv[++i]
    if (name === undefined || value === undefined) {
      process.stderr.write(`onboard-and-read: unknown option or missing value: ${argv.join(' ')}\n`)
      process.exit(2)
    }
    parsed[name] = value
  }
  return parsed
}

const args = parseArgs(process.argv.slice(2))

/** An option's value: the argument, else the environment variable, else `fallback`; missing: exits 2. */
function option(name: OptionName, variable: string, fallback?: string): string {
  const value = args[name] ?? process.env[variable] ?? fallback
  if (value === undefined || value === '') {
    process.stderr.write(`onboard-and-read: give --${name} or ${variable}\n`)
    process.exit(2)
  }
  return value
}

/** The answer's data, or the process stops with the API's error (`{message, status}`) and exit code 1. */
function ok<T>(what: string, answer: { data?: T; error?: unknown; response: Response }): T {
  if (answer.data !== undefined) return answer.data
  process.stderr.write(
    `onboard-and-read: ${what}: ${answer.response.status} ${JSON.stringify(answer.error)}\n`,
  )
  process.exit(1)
}

const print = (step: string, value: object) => process.stdout.write(`${JSON.stringify({ step, ...value })}\n`)

const baseUrl = option('base-url', 'LSREPORT_BASE_URL')
const address = option('wallet', 'WALLET_ADDRESS')
const accountKey = option('account', 'ACCOUNT_KEY', `customer-${address.slice(-8).toLowerCase()}`)
const from = args.from ?? process.env.REWARDS_FROM
const to = args.to ?? process.env.REWARDS_TO

const client = createLsReportClient({
  baseUrl,
  clientId: option('client-id', 'LSREPORT_CLIENT_ID'),
  clientSecret: option('client-secret', 'LSREPORT_CLIENT_SECRET'),
})

// 1. the account: found by its key, else created
const found = await client.GET('/v0/platform/accounts/{idOrKey}', {
  params: { path: { idOrKey: accountKey } },
})
const account =
  found.response.status === 404
    ? ok('create account', await client.POST('/v0/platform/accounts', { body: { key: accountKey } }))
    : ok('get account', found)
print('account', { created: found.response.status === 404, account })

// 2. the wallet: found by its address, else attached to the account (and submitted to the Allowlist)
const known = await client.GET('/v0/platform/wallets/{idOrAddress}', {
  params: { path: { idOrAddress: address } },
})
const wallet =
  known.response.status === 404
    ? ok(
        'add wallet',
        await client.POST('/v0/platform/accounts/{idOrKey}/wallets', {
          params: { path: { idOrKey: account.id } },
          body: { address, type: 'ETH' },
        }),
      )
    : ok('get wallet', known)
print('wallet', { added: known.response.status === 404, wallet })

// 3. its rewards: totals over the range and the daily series
const rewards = ok(
  'read rewards',
  await client.GET('/eth/v1/rewards/wallets/{idOrKey}/summary', {
    params: {
      path: { idOrKey: wallet.address },
      query: { ...(from === undefined ? {} : { from }), ...(to === undefined ? {} : { to }) },
    },
  }),
)
print('rewards', { address: wallet.address, summary: rewards })
