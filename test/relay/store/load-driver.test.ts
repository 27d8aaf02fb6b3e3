import { describe, expect, it } from 'vitest'
import { openPostgresStore } from '../../../src/relay/store/postgres/postgres-store'

describe('the PostgreSQL store’s driver', () => {
  it('is loaded only when the store is opened, and its absence is an error naming the package', async () => {
    let loaded = 0
    const missing = async (): Promise<never> => {
      loaded++
      // What Node throws for `import('pg')` when the package is not installed.
      throw Object.assign(
        new Error("Cannot find package 'pg' imported from /app/node_modules/tracklet/dist/relay/index.js"),
        {
          code: 'ERR_MODULE_NOT_FOUND',
        },
      )
    }
    const opening = openPostgresStore('postgres://u:pw@127.0.0.1:1/db', { loadPg: missing })
    await expect(opening).rejects.toMatchObject({
      code: 'ERR_RELAY_DRIVER_MISSING',
      message: 'the PostgreSQL store needs the pg package, which is not installed: run `npm install pg`',
    })
    expect(loaded).toBe(1)
  })

  it('lets any other failure of loading it through unchanged', async () => {
    const broken = async (): Promise<never> => {
      throw new SyntaxError('Unexpected token in pg/lib/index.js')
    }
    await expect(openPostgresStore('postgres://u:pw@127.0.0.1:1/db', { loadPg: broken })).rejects.toThrow(SyntaxError)
  })
})
