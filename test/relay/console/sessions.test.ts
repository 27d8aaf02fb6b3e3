import { afterEach, describe, expect, it } from 'vitest'
import type { Relay } from '../../../src/relay/index'
import { isReadOnlyPage, SESSION_IDLE_MS, SESSION_MAX_MS, Sessions } from '../../../src/relay/console/page/sessions'
import type { SessionStore } from '../../../src/relay/store/sessions'
import type { Store } from '../../../src/relay/store/store'
import { freshPostgresDatabase } from '../../support/postgres'
import { openTestStore, STORE_KINDS } from '../../support/stores'
import { post, type Receiver, startReceiver, startRelay, track, waitForDelivery } from '../helpers'
import { PageClient } from './page-client'

// The operator page's sessions live in the store: every relay (and every worker of
// `tracklet relay --workers N`) on it honours a sign-in made through any of them.

const opened: Store[] = []
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close()
})

async function storeOf(kind: (typeof STORE_KINDS)[number], now: () => number): Promise<Store> {
  const store = await openTestStore(kind, now)
  opened.push(store)
  return store
}

describe.each(STORE_KINDS)('Sessions on the %s store', (kind) => {
  it('ends a session after an hour without a request, and after 12 hours in any case', async () => {
    let now = 1_700_000_000_000
    const sessions = new Sessions((await storeOf(kind, () => now)).sessions, () => now)
    const { id } = await sessions.create('admin')
    const cookie = `other=1; tracklet_session=${id}`
    now += SESSION_IDLE_MS
    expect(await sessions.find(cookie)).toBeDefined()
    now += SESSION_IDLE_MS + 1
    expect(await sessions.find(cookie)).toBeUndefined()
    expect(await sessions.find(`tracklet_session=${id.slice(1)}`)).toBeUndefined()

    const kept = await sessions.create('admin')
    // Seen every half hour: never idle, and good for 12 hours, not a moment more.
    for (let half = 0; half < 24; half++) {
      now += SESSION_IDLE_MS / 2
      expect(await sessions.find(`tracklet_session=${kept.id}`)).toBeDefined()
    }
    now += 1
    expect(await sessions.find(`tracklet_session=${kept.id}`)).toBeUndefined()
  })

  it('is honoured by another relay on the store, and a sign-out through one ends it for both', async () => {
    const now = () => 1_700_000_000_000
    const store = await storeOf(kind, now)
    const [one, other] = [new Sessions(store.sessions, now), new Sessions(store.sessions, now)]
    const { id, session } = await one.create('admin')
    const found = await other.find(`tracklet_session=${id}`)
    // The same CSRF token: a form rendered by one relay is accepted by the other.
    expect(found?.csrfToken).toBe(session.csrfToken)
    await other.end(`tracklet_session=${id}`)
    expect(await one.find(`tracklet_session=${id}`)).toBeUndefined()
  })

  it('keeps which token signed a session in, so a read session stays read-only on every relay', async () => {
    const now = () => 1_700_000_000_000
    const store = await storeOf(kind, now)
    const [one, other] = [new Sessions(store.sessions, now), new Sessions(store.sessions, now)]
    const read = await one.create('read')
    const admin = await one.create('admin')
    expect((await other.find(`tracklet_session=${read.id}`))?.role).toBe('read')
    expect((await other.find(`tracklet_session=${admin.id}`))?.role).toBe('admin')
    // The CSRF tokens differ by role, so each page shows the actions its session may take.
    expect(isReadOnlyPage(read.session.csrfToken)).toBe(true)
    expect(isReadOnlyPage(admin.session.csrfToken)).toBe(false)
  })

  it('keeps only a digest of the token, never the token or the CSRF token', async () => {
    const now = () => 1_700_000_000_000
    const store = await storeOf(kind, now)
    const seen: string[] = []
    const spy: SessionStore = {
      ...store.sessions,
      insert: (digest, at, role) => {
        seen.push(digest)
        return store.sessions.insert(digest, at, role)
      },
      find: (digest) => store.sessions.find(digest),
      touch: (digest, at) => store.sessions.touch(digest, at),
      delete: (digest) => store.sessions.delete(digest),
      sweep: (a, b, c) => store.sessions.sweep(a, b, c),
    }
    const { id, session } = await new Sessions(spy, now).create('admin')
    expect(seen).toHaveLength(1)
    expect(seen[0]).not.toContain(id)
    expect(seen[0]).not.toBe(session.csrfToken)
    expect(await store.sessions.find(seen[0]!)).toEqual({ createdAt: now(), lastSeenAt: now(), role: 'admin' })
  })

  it('sweeps ended sessions and keeps at most the newest ones', async () => {
    let now = 1_700_000_000_000
    const store = await storeOf(kind, () => now)
    for (let i = 0; i < 5; i++) await store.sessions.insert(`digest-${i}`, now + i, 'admin')
    now += 10
    expect(await store.sessions.sweep(now - SESSION_IDLE_MS, now - SESSION_MAX_MS, 2)).toBe(3)
    expect(await store.sessions.find('digest-4')).toBeDefined()
    expect(await store.sessions.find('digest-3')).toBeDefined()
    expect(await store.sessions.find('digest-2')).toBeUndefined()
    now += SESSION_IDLE_MS + 10
    expect(await store.sessions.sweep(now - SESSION_IDLE_MS, now - SESSION_MAX_MS, 2)).toBe(2)
  })
})

describe('Sessions while the store does not answer', () => {
  it('still knows the sessions this process saw live (for the outage page), and no others', async () => {
    const now = () => 1_700_000_000_000
    const store = await storeOf('sqlite', now)
    let down = false
    const failing: SessionStore = {
      insert: (d, at, role) => store.sessions.insert(d, at, role),
      find: async (d) => {
        if (down) throw new Error('the store is down')
        return store.sessions.find(d)
      },
      touch: (d, at) => store.sessions.touch(d, at),
      delete: (d) => store.sessions.delete(d),
      sweep: (a, b, c) => store.sessions.sweep(a, b, c),
    }
    const sessions = new Sessions(failing, now)
    const seen = await sessions.create('admin')
    const other = await new Sessions(store.sessions, now).create('admin')
    down = true
    expect((await sessions.find(`tracklet_session=${seen.id}`))?.csrfToken).toBe(seen.session.csrfToken)
    await expect(sessions.find(`tracklet_session=${other.id}`)).rejects.toThrow('the store is down')
  })
})

describe('the operator page across two relays on one PostgreSQL database', () => {
  let receiver: Receiver
  const relays: Relay[] = []
  afterEach(async () => {
    for (const relay of relays.splice(0)) await relay.close()
    await receiver?.close()
  })

  it('signs in through one relay, and the other shows the page and takes its forms, until a sign-out', async () => {
    receiver = await startReceiver()
    receiver.respond((_req, res) => res.writeHead(404).end())
    const database = await freshPostgresDatabase()
    const one = await startRelay(receiver.url, { database }, 'postgres')
    relays.push(one)
    const other = await startRelay(receiver.url, { database }, 'postgres')
    relays.push(other)
    const message = track()
    expect((await post(`${one.url}/v1/track`, message)).status).toBe(200)
    const dead = await waitForDelivery(one.url, 'failed', message['messageId'] as string)

    const signedIn = new PageClient(one.url)
    expect((await signedIn.signIn()).status).toBe(303)
    const elsewhere = new PageClient(other.url)
    elsewhere.cookie = signedIn.cookie

    const overview = await elsewhere.get('/')
    expect(overview.body).not.toContain('action="/ui/sign-in"')
    const detail = await elsewhere.get(`/ui/deliveries/${dead.id}`)
    const retried = await elsewhere.post(`/ui/deliveries/${dead.id}/retry`, { csrf: PageClient.csrfOf(detail.body) })
    expect(retried.status).toBe(303)
    expect(retried.headers.location).toBe(`/ui/deliveries/${dead.id}?retried`)
    // Retried, it is attempted again (the receiver still answers 404) and dead-lettered anew:
    // only then can it be retried again.
    await waitForDelivery(one.url, 'failed', message['messageId'] as string)
    // A form rendered by the first relay is taken by the second.
    const formOfOne = PageClient.csrfOf((await signedIn.get(`/ui/deliveries/${dead.id}`)).body)
    expect((await elsewhere.post(`/ui/deliveries/${dead.id}/retry`, { csrf: formOfOne })).status).toBe(303)

    expect((await elsewhere.post('/ui/sign-out', { csrf: PageClient.csrfOf(overview.body) })).status).toBe(303)
    expect((await signedIn.get('/')).body).toContain('action="/ui/sign-in"')
  })
})
