import type { RelayOptions } from '../../relay/index'

// What the primary of `tracklet relay --workers N` and its workers say to each other over the
// cluster's IPC channel: the worker asks once it listens for messages (one sent before would be
// lost), the options go down (validated by the primary, so every worker runs the same config
// even when the file changes later), the URL comes up once the worker listens.

/** A worker to the primary: send the options. */
export interface ReadyMessage {
  kind: 'tracklet-relay-ready'
}

/** The primary to a worker it just forked. */
export interface StartMessage {
  kind: 'tracklet-relay-start'
  options: RelayOptions
}

/** A worker to the primary, once its relay listens. */
export interface ListeningMessage {
  kind: 'tracklet-relay-listening'
  url: string
}

export function isStartMessage(message: unknown): message is StartMessage {
  return (message as Partial<StartMessage> | null)?.kind === 'tracklet-relay-start'
}

export function isListeningMessage(message: unknown): message is ListeningMessage {
  return (message as Partial<ListeningMessage> | null)?.kind === 'tracklet-relay-listening'
}

export function isReadyMessage(message: unknown): message is ReadyMessage {
  return (message as Partial<ReadyMessage> | null)?.kind === 'tracklet-relay-ready'
}
