import { describe, expect, it } from 'vitest'
import { routesByUrl } from '../../../src/relay/delivery/worker-options'
import { sendersOf } from '../fixtures/worker'

describe('the worker’s routes', () => {
  it('list, for each URL, every source and destination that sends there, once', () => {
    const destination = (urls: string[]) => ({ urls, send: () => Promise.reject(new Error('unused')) })
    const routes = routesByUrl(
      sendersOf(
        new Map([
          ['web', new Map([['Webhooks', destination(['https://a.example/', 'https://a.example/'])]])],
          ['ios', new Map([['Webhooks', destination(['https://a.example/', 'https://b.example/'])]])],
          ['cli', new Map([['Other', { send: () => Promise.reject(new Error('unused')) }]])],
        ]),
      ),
    )
    expect(Object.fromEntries(routes)).toEqual({
      'https://a.example/': [
        { source: 'web', destination: 'Webhooks' },
        { source: 'ios', destination: 'Webhooks' },
      ],
      'https://b.example/': [{ source: 'ios', destination: 'Webhooks' }],
    })
  })
})
