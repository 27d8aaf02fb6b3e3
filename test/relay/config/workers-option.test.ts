import { describe, expect, it } from 'vitest'
import { createRelay, RelayConfigError } from '../../../src/relay/index'
import { validateRelayOptions } from '../../../src/relay/config/validate'

// `workers` is the command's option: validated like every other, and never ignored in code.

const sources = [{ name: 'web', writeKey: 'wk-web' }]

describe('the workers option', () => {
  it('defaults to 1 and takes 1 to 256', () => {
    expect(validateRelayOptions({ sources }).workers).toBe(1)
    expect(validateRelayOptions({ sources, workers: 8 }).workers).toBe(8)
    for (const workers of [0, 257, 1.5, '2'])
      expect(() => validateRelayOptions({ sources, workers })).toThrow(RelayConfigError)
  })

  it('is refused by createRelay above 1, saying it is the command’s, before anything is opened', async () => {
    const error = await createRelay({ sources, database: ':memory:', port: 0, workers: 2 }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(RelayConfigError)
    expect((error as RelayConfigError).field).toBe('workers')
    expect((error as Error).message).toBe(
      'workers: is an option of the `tracklet relay` command, which forks that many processes; createRelay runs one relay in this process (start one per process instead), got 2',
    )
  })

  it('is accepted by createRelay at 1 (one process, which it is)', async () => {
    const relay = await createRelay({ sources, database: ':memory:', port: 0, workers: 1 })
    await relay.close()
  })
})
