// The warehouse speaks the relay's destination types: a batch of messages in, one outcome per
// message out (a delivered one's `detail.conflicts` lists the values stored as NULL).
export type { MessageOutcome, OutboundMessage } from '../destination'
