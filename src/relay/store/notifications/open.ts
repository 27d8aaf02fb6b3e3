import { isPostgresUrl } from '../../config/database-value'
import { InProcessNotifications, type Notifications } from './channel'
import { PostgresNotifications } from './postgres'

/**
 * The notification channel of the store `database` names: `LISTEN` on PostgreSQL (no connection
 * until something listens or sends), in process on SQLite.
 */
export function openNotifications(database: string): Notifications {
  return isPostgresUrl(database) ? new PostgresNotifications(database) : new InProcessNotifications()
}
