// The relay's public API (tracklet/relay). Filled in by the relay's work.
export {}
