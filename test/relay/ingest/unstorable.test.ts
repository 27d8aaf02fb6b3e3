import { request } from 'undici'
import { describe, expect, it } from 'vitest'
import { freshPostgresDatabase, sql } from '../../support/postgres'
import { STORE_KINDS } from '../../support/stores'
import { useRelayWithReceiver } from '../fixtures/relay'
import { adminGet, basic, post, startRelay, track, WRITE_KEY } from '../helpers'
import { postBytes } from './ingest-helpers'

async function healthz(url: string): Promise<number> {
  const response = await request(`${url}/healthz`)
  await response.body.dump()
  return response.statusCode
}

describe.each(STORE_KINDS)('on the %s store', (kind) => {
  const running = useRelayWithReceiver(kind)

  it('refuses, one by one and saying why, messages a store cannot hold, and accepts the rest', async () => {
    const batch = [
      track({ messageId: 'ok-1' }),
      track({ messageId: 'nul\u0000id' }),
      track({ messageId: 'x'.repeat(201) }),
      track({ messageId: 'bell\u0007' }),
      track({ messageId: 'nul-user', userId: 'u\u0000' }),
      track({ messageId: 'nul-event', event: 'E\u0000' }),
      track({ messageId: 'ok-2' }),
    ]
    // 1e400 only exists as JSON text: JSON.parse makes it Infinity, JSON.stringify null.
    const json = JSON.stringify({ batch }).replace(
      /\]\}$/,
      ',{"type":"track","userId":"u1","event":"E","messageId":"huge","properties":{"price":1e400}}]}',
    )
    const answer = await postBytes(`${running.relay.url}/v1/batch`, json)
    expect(answer).toEqual({
      status: 200,
      body: {
        success: true,
        accepted: 2,
        refused: [
          { index: 1, reason: 'messageId contains the control character U+0000' },
          { index: 2, reason: 'messageId is 201 characters, over the 200-character limit' },
          { index: 3, reason: 'messageId contains the control character U+0007' },
          { index: 4, reason: 'userId contains the NUL character (U+0000), which the store cannot hold' },
          { index: 5, reason: 'event contains the NUL character (U+0000), which the store cannot hold' },
          {
            index: 7,
            reason: 'properties.price is a number JSON cannot carry (such as 1e400, which parses as Infinity)',
          },
        ],
      },
    })
    const stored = (await adminGet(`${running.relay.url}/v1/deliveries`)).body.deliveries.map((d: any) => d.messageId)
    expect(stored).toEqual(['ok-2', 'ok-1']) // the log is newest first
    expect(await healthz(running.relay.url)).toBe(200)
  })

  it('counts such refusals as unstorable in /metrics', async () => {
    await post(`${running.relay.url}/v1/batch`, { batch: [track({ messageId: 'a\u0000' }), track()] })
    const response = await request(`${running.relay.url}/metrics`, {
      headers: { authorization: 'Bearer admin-token-for-tests' },
    })
    expect(await response.body.text()).toContain('tracklet_messages_refused_total{source="web",reason="unstorable"} 1')
  })

  it('answers admin inputs a store cannot hold with 400, never 500, and stays healthy', async () => {
    const url = running.relay.url
    const admin = { authorization: 'Bearer admin-token-for-tests' }
    const list = await request(`${url}/v1/deliveries?source=%00`, { headers: admin })
    expect(list.statusCode).toBe(400)
    expect(((await list.body.json()) as any).error).toEqual({
      code: 'ERR_INVALID_QUERY',
      message: 'source contains the NUL character (U+0000), which the store cannot hold',
    })
    const sync = await post(`${url}/v1/audiences/vip`, { source: 'web', userIds: ['u1', 'u\u0000'] }, admin, 'PUT')
    expect(sync).toEqual({
      status: 400,
      body: {
        error: {
          code: 'ERR_INVALID_BODY',
          message: 'userIds[1] contains the NUL character (U+0000), which the store cannot hold',
        },
      },
    })
    const badName = await post(`${url}/v1/audiences/vip%00`, { source: 'web', userIds: ['u1'] }, admin, 'PUT')
    expect(badName.status).toBe(400)
    expect(badName.body.error.code).toBe('ERR_INVALID_AUDIENCE')
    const deletion = await post(`${url}/v1/deletions`, { userId: 'u\u0000' }, admin)
    expect(deletion.status).toBe(400)
    expect(deletion.body.error.message).toBe('userId contains the NUL character (U+0000), which the store cannot hold')
    const page = await request(`${url}/deliveries?source=%00`, { headers: admin })
    await page.body.dump()
    expect(page.statusCode).not.toBe(500)
    expect(await healthz(url)).toBe(200)
    // Nothing was queued by the refused calls.
    expect((await adminGet(`${url}/v1/deliveries`)).body.deliveries).toEqual([])
  })
})

describe('a request whose data PostgreSQL refuses, in a group commit with others', () => {
  it('is refused alone (400); every other request of the moment is stored, and /healthz stays 200', async () => {
    const database = await freshPostgresDatabase()
    const relay = await startRelay('http://127.0.0.1:1/hook', { database }, 'postgres')
    try {
      // A data error the guard cannot foresee, as PostgreSQL raises them (SQLSTATE class 22).
      await sql(
        database,
        `CREATE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN IF NEW.message_id LIKE 'poison%' THEN
           RAISE EXCEPTION 'invalid byte sequence (the test)' USING ERRCODE = '22021'; END IF;
         RETURN NEW; END $$`,
      )
      await sql(
        database,
        'CREATE TRIGGER poison BEFORE INSERT ON messages FOR EACH ROW EXECUTE FUNCTION refuse_poison()',
      )
      const headers = { authorization: basic(WRITE_KEY) }
      const statuses: number[] = []
      for (let round = 0; round < 5; round++) {
        const innocent = Array.from({ length: 8 }, (_, i) =>
          post(`${relay.url}/v1/batch`, { batch: [track({ messageId: `r${round}-${i}` })] }, headers),
        )
        const poison = post(`${relay.url}/v1/batch`, { batch: [track({ messageId: `poison-${round}` })] }, headers)
        const [answers, refused, health] = await Promise.all([Promise.all(innocent), poison, healthz(relay.url)])
        for (const answer of answers) expect(answer.body).toEqual({ success: true, accepted: 1, refused: [] })
        expect(refused.status).toBe(400)
        expect(refused.body.error.code).toBe('ERR_UNSTORABLE')
        statuses.push(health, await healthz(relay.url))
      }
      expect(statuses.every((status) => status === 200)).toBe(true)
      const rows = await sql<{ n: string }>(database, 'SELECT count(*) AS n FROM deliveries')
      expect(Number(rows[0]!.n)).toBe(40)
    } finally {
      await relay.close()
    }
  })
})
