// The Webhooks destination's public API (tracklet/webhooks). Filled in by the destination's work.
export {}
