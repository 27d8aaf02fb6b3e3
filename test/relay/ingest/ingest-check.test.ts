import { describe, expect, it } from 'vitest'
import { GroupCommit } from '../../../src/relay/ingest/group-commit'
import { ingest } from '../../../src/relay/ingest/ingest'
import type { IngestCheck } from '../../../src/relay/ingest/ingest-check'
import { openSqliteStoreWithDb } from '../fixtures/store'

const source = { name: 'web', destinations: ['Webhooks'] }

// The seam tracking plans will plug into (docs/maintainers.md, "Seams"): each valid message is
// asked of the check before the outbox; the ones it refuses are refused on their own.
describe('an ingest check', () => {
  it('refuses, on their own and with its reason, the valid messages it refuses; stores the rest', async () => {
    const { store: outbox, db } = await openSqliteStoreWithDb()
    try {
      const asked: string[] = []
      const check: IngestCheck = (message, checkedSource) => {
        asked.push(`${checkedSource.name}:${String(message['event'])}`)
        return message['event'] === 'Unplanned' ? 'event "Unplanned" is not in the tracking plan' : undefined
      }
      const messages = [
        { type: 'track', userId: 'u1', event: 'Planned', messageId: 'm1' },
        { type: 'track', userId: 'u1', event: 'Unplanned', messageId: 'm2' },
        { type: 'track', event: 'Invalid: no userId' },
      ]
      const outcome = await ingest(new GroupCommit(outbox), source, messages, {}, check)
      expect(outcome).toEqual({
        accepted: 1,
        refused: [
          { index: 1, reason: 'event "Unplanned" is not in the tracking plan', kind: 'invalid' },
          expect.objectContaining({ index: 2, kind: 'invalid' }),
        ],
        filtered: 0,
      })
      // Only valid messages are asked.
      expect(asked).toEqual(['web:Planned', 'web:Unplanned'])
      expect((await outbox.list({ after: 0, limit: 10 })).map((d) => d.messageId)).toEqual(['m1'])
    } finally {
      db.close()
    }
  })
})
