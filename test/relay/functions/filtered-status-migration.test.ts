import { expect, test } from 'vitest'
import Database from 'better-sqlite3'
import { MIGRATIONS } from '../../../src/relay/store/sqlite/schema'
test('a SQLite file of the previous schema takes the filtered status, its deliveries and attempts kept, the foreign key whole', () => {
  const db = new Database(':memory:')
  db.pragma('foreign_keys = ON')
  db.transaction(() => {
    for (const sql of MIGRATIONS.slice(0, -1)) db.exec(sql)
  })()
  db.exec(
    `INSERT INTO deliveries (id, source, destination, message_id, type, message, status, next_attempt_at, created_at, updated_at) VALUES (7,'s','Webhooks','m','track','{}','failed',0,0,0)`,
  )
  db.exec(`INSERT INTO attempts (delivery_id, at, url, ms) VALUES (7, 0, 'u', 1)`)
  db.transaction(() => {
    db.exec(MIGRATIONS.at(-1)!)
  })()
  db.exec(`UPDATE deliveries SET status='filtered' WHERE id=7`)
  expect(db.prepare('select count(*) c from attempts').get()).toEqual({ c: 1 })
  expect(() => db.exec(`INSERT INTO attempts (delivery_id, at, url, ms) VALUES (8, 0, 'u', 1)`)).toThrow(/FOREIGN KEY/)
  expect(db.pragma('foreign_key_check')).toEqual([])
})
