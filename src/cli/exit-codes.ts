// The exit codes of every `tracklet` command, in one place (docs/operations.md names them).

/** It did what was asked: `send`'s message accepted, the relay or `tail` stopped by a signal, help shown. */
export const EXIT_OK = 0
/**
 * It could not: `send`'s message was not accepted, the relay refused its config or stopped
 * unclean, `tail` lost its stream, or the command itself failed unexpectedly.
 */
export const EXIT_FAILED = 1
/** A bad command line: an unknown command or flag, a missing or malformed value. */
export const EXIT_USAGE = 2
