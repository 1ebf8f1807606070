import { describe, expect, test } from 'vitest'
import { unconnectedDb } from './unconnected.ts'

describe('unconnectedDb', () => {
  test('behavior: every query fails with the purpose named, and the handle closes', async () => {
    const db = unconnectedDb('the OpenAPI document')
    try {
      await expect(db('orgs').select('id')).rejects.toThrow('the OpenAPI document queries no database')
      await expect(db.raw('select 1')).rejects.toThrow('the OpenAPI document queries no database')
    } finally {
      await db.destroy()
    }
  })
})
