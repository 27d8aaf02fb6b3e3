import { channel } from 'node:diagnostics_channel'
import { DIAGNOSTICS_CHANNELS, type RequestDiagnostics } from '../diagnostics'

const requests = channel(DIAGNOSTICS_CHANNELS.request)
const responses = channel(DIAGNOSTICS_CHANNELS.response)

/**
 * Node's `diagnostics_channel` channels `tracklet:request` and `tracklet:response`. Events are
 * made only while someone subscribes: `active` is read once per request, and nothing else runs.
 */
export const diagnostics: RequestDiagnostics = {
  get active() {
    return requests.hasSubscribers || responses.hasSubscribers
  },
  request(event) {
    if (requests.hasSubscribers) requests.publish(event)
  },
  response(event) {
    if (responses.hasSubscribers) responses.publish(event)
  },
}
