import { MockAgent } from 'undici'

/** The endpoint the mock tracking API answers on. */
export const MOCK_ENDPOINT = 'http://api.test'

/** A stand-in for the tracking API: an undici MockAgent that answers 200 to every batch. */
export interface MockApi {
  /** Pass as the client's `dispatcher`; close it after the test. */
  agent: MockAgent
  /** Every request body received, in order. */
  bodies: string[]
  /** Every message received, across all bodies, in order. */
  messages(): Record<string, unknown>[]
}

export function mockApi(): MockApi {
  const bodies: string[] = []
  const agent = new MockAgent()
  agent.disableNetConnect()
  agent
    .get(MOCK_ENDPOINT)
    .intercept({ path: '/v1/batch', method: 'POST' })
    .reply(200, (options) => {
      bodies.push(String(options.body))
      return {}
    })
    .persist()
  return {
    agent,
    bodies,
    messages: () => bodies.flatMap((body) => (JSON.parse(body) as { batch: Record<string, unknown>[] }).batch),
  }
}
