// The JSON text each claimed message was parsed from, kept beside the parsed object (weakly: it
// goes with the object). A destination that writes the message as JSON (the archive) writes the
// stored text instead of making it again, a third of the archive's CPU per message; only while
// the object is the one parsed, so a message a function changed is never written as it was.
const texts = new WeakMap<object, string>()

/** Notes that `message` was parsed from `text` (the store's claim does, for each delivery). */
export function rememberStoredJson(message: object, text: string): void {
  texts.set(message, text)
}

/**
 * The JSON text `message` was parsed from, when it is the object the store parsed (never changed
 * since: a function's step returns a new object); otherwise `undefined`.
 */
export function storedJson(message: object): string | undefined {
  return texts.get(message)
}
