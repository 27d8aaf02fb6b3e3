import type { IncomingMessage } from 'node:http'
import { readJsonBody, sendJson } from '../../http/body'
import type { Route } from '../../http/route'
import type { ReplayAction } from '../../store/replays'
import type { AdminContext } from '../../console/operations'
import { handleChangeReplay, handleGetReplay, handleListReplays, handleStartReplay } from './replays-api'

// A replay request's body is a filter and a few fields.
const MAX_REPLAY_BODY_BYTES = 100_000

/** The admin API's replay routes (docs/replay.md), each signed with the admin token. */
export function replayRoutes(context: AdminContext, authenticate: (req: IncomingMessage) => void): Route[] {
  return [
    {
      method: 'POST',
      pattern: /^\/v1\/replays$/,
      handler: async (req, res) => {
        authenticate(req)
        const started = await handleStartReplay(context, await readJsonBody(req, MAX_REPLAY_BODY_BYTES))
        sendJson(res, started.status, started.body)
      },
    },
    {
      method: 'GET',
      pattern: /^\/v1\/replays$/,
      handler: async (req, res) => {
        authenticate(req)
        sendJson(res, 200, await handleListReplays(context))
      },
    },
    {
      method: 'GET',
      pattern: /^\/v1\/replays\/([^/]+)$/,
      handler: async (req, res, [id]) => {
        authenticate(req)
        sendJson(res, 200, await handleGetReplay(context, id!))
      },
    },
    {
      method: 'POST',
      pattern: /^\/v1\/replays\/([^/]+)\/(pause|resume|cancel)$/,
      handler: async (req, res, [id, action]) => {
        authenticate(req)
        sendJson(res, 200, await handleChangeReplay(context, id!, action as ReplayAction))
      },
    },
  ]
}
