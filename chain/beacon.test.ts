import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, test } from 'vitest'
import { createBeaconClient, createDevnetConsensusSource } from './beacon.ts'
import { ConsensusUnavailableError } from './errors.ts'

const FAR = '18446744073709551615'

/** A fake Beacon API answering the three standard endpoints the client reads. */
function fakeBeacon(calls: string[]): typeof fetch {
  return (async (input: string | URL | Request) => {
    const url = new URL(String(input))
    calls.push(url.pathname + url.search)
    const json = (body: unknown) => new Response(JSON.stringify(body), { status: 200 })
    if (url.pathname === '/eth/v1/beacon/headers/head') {
      return json({ data: { header: { message: { slot: String(400_000 * 32 + 7) } } } })
    }
    if (url.pathname === '/eth/v1/beacon/states/head/committees') {
      expect(url.searchParams.get('epoch')).toBe('400000')
      return json({ data: [{ validators: ['1', '2', '3'] }, { validators: ['4', '5'] }] })
    }
    if (url.pathname === '/eth/v1/beacon/states/head/validators') {
      expect(url.searchParams.get('status')).toBe('active_exiting')
      return json({
        data: [
          { validator: { effective_balance: '32000000000', exit_epoch: '400010' } },
          { validator: { effective_balance: '2048000000000', exit_epoch: '400200' } },
          { validator: { effective_balance: '32000000000', exit_epoch: '399999' } }, // already past its exit
          { validator: { effective_balance: '32000000000', exit_epoch: FAR } },
        ],
      })
    }
    return new Response('not found', { status: 404 })
  }) as typeof fetch
}

describe('createBeaconClient', () => {
  test('behavior: epoch from the head slot, active validators from the committees, queued exits summed', async () => {
    const calls: string[] = []
    const beacon = createBeaconClient({ url: 'http://beacon.test/', fetch: fakeBeacon(calls) })
    const snapshot = await beacon.snapshot()
    expect(snapshot).toEqual({
      epoch: 400_000,
      active_validators: 5,
      total_active_balance_gwei: 5n * 32n * 10n ** 9n,
      queued_exit_balance_gwei: 32_000_000_000n + 2_048_000_000_000n + 32_000_000_000n,
      sweep_eligible_validators: 5,
      source: 'beacon',
    })
    await beacon.snapshot()
    expect(calls).toHaveLength(3) // cached
  })

  test('behavior: an unreachable or failing beacon API is a ConsensusUnavailableError, not cached', async () => {
    let fail = true
    const calls: string[] = []
    const inner = fakeBeacon(calls)
    const beacon = createBeaconClient({
      url: 'http://beacon.test',
      fetch: (async (input: string) =>
        fail ? new Response('boom', { status: 500 }) : inner(input)) as typeof fetch,
    })
    await expect(beacon.snapshot()).rejects.toBeInstanceOf(ConsensusUnavailableError)
    fail = false
    expect((await beacon.snapshot()).epoch).toBe(400_000)
  })
})

describe('createDevnetConsensusSource', () => {
  test('behavior: reads the latest facts of the devnet file in Gwei', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lsreport-consensus-'))
    const file = path.join(dir, 'devnet-consensus.json')
    const source = createDevnetConsensusSource({ file, ttlMs: 0 })
    await expect(source.snapshot()).rejects.toBeInstanceOf(ConsensusUnavailableError)
    await fs.writeFile(
      file,
      JSON.stringify({
        latest: {
          epoch: 458_324,
          total_active_balance_wei: '34627251000000000000000000',
          active_validator_count: 1_054_325,
          exit_queue_wei: '46887593273608075853394',
        },
        days: [],
      }),
    )
    expect(await source.snapshot()).toEqual({
      epoch: 458_324,
      active_validators: 1_054_325,
      total_active_balance_gwei: 34_627_251_000_000_000n,
      queued_exit_balance_gwei: 46_887_593_273_608n,
      sweep_eligible_validators: 1_054_325,
      source: 'devnet',
    })
    await fs.rm(dir, { recursive: true, force: true })
  })
})
