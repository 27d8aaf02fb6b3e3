import {
  decodeStored,
  encodeSettings,
  etagOf,
  fileSourceView,
  revisionOfIfMatch,
  type SourceView,
  storedSourceView,
} from '../../sources/api-source-codec'
import type { SourceDestinations } from '../../config/options'
import type { SecretBox } from '../../config/secrets-key'
import type { SourceRegistry } from '../../sources/source-registry'
import { hasSecrets } from '../../sources/source-secrets'
import { newWriteKey, writeKeyDigest, writeKeyPrefix } from '../../kit/write-key-digest'
import type { RelayConfigProblem } from '../../errors'
import type { TokenRole } from '../../http/auth'
import { HttpError } from '../../http/http-error'
import {
  type AuditAction,
  type AuditRecord,
  type ChangeResult,
  SOURCE_REMOVED,
  type StoredSource,
} from '../../store/source-configs'
import type { Store } from '../../store/store'
import { type AuditedSettings, changedFields, shown } from './audit-changes'
import { readSourceInput } from './source-input'

/** What the sources' admin routes work on. */
export interface SourcesContext {
  store: Store
  registry: SourceRegistry
  /** Applies a change here at once and tells every other relay on the store. */
  sync: { changed(): Promise<void> }
  box: SecretBox
  /** Compiles a destination's function as this relay runs it; without it, a `PUT` of new code is refused. */
  functions?: FunctionCompiler | undefined
  now?: () => number
}

/** Compiles a function's code under the relay's limits, running nothing. */
export interface FunctionCompiler {
  /** The compile error's text (`SyntaxError: …`), or `undefined` when the code compiles. */
  compileError(code: string): Promise<string | undefined>
}

/** Where a `PUT` body carries a destination's function code (docs/functions.md, "Through the admin API"). */
export const FUNCTION_CODE_FIELD = 'destinations.Webhooks.function.code'

/** What a write answers: a status, a body, and the source's new `ETag` when it has one. */
export interface SourceAnswer {
  status: number
  body: unknown
  etag?: string
}

/** A 400 listing every problem of a `PUT` body with its path. */
export class SourceProblems extends HttpError {
  readonly problems: readonly RelayConfigProblem[]

  constructor(problems: readonly RelayConfigProblem[]) {
    super(400, 'ERR_INVALID_SOURCE', problems.map((p) => `${p.field}: ${p.message}`).join('\n'))
    this.problems = problems
  }
}

/** `GET /v1/sources`: the file's sources, then the API's, each with its `etag`. */
export async function listSources(context: SourcesContext): Promise<{ sources: (SourceView & { etag: string })[] }> {
  const file = context.registry.all().filter((s) => s.provisioned)
  const stored = await context.store.sourceConfigs.list()
  return {
    sources: [
      ...file.map((s) => ({ ...fileSourceView(s), etag: etagOf(s) })),
      ...stored.map((s) => ({ ...storedSourceView(s), etag: etagOf(s) })),
    ],
  }
}

/** `GET /v1/sources/:name`: one source, or a 404. */
export async function getSource(context: SourcesContext, name: string): Promise<SourceAnswer> {
  const file = context.registry.find(name)
  if (file?.provisioned) return { status: 200, body: fileSourceView(file), etag: etagOf(file) }
  const stored = await storedNamed(context, name)
  if (stored === undefined) throw notFound(name)
  return { status: 200, body: storedSourceView(stored), etag: etagOf(stored) }
}

/** `PUT /v1/sources/:name`: creates (201, with a generated `writeKey` once) or replaces (200) an API source. */
export async function putSource(
  context: SourcesContext,
  name: string,
  body: Record<string, unknown>,
  ifMatch: string | undefined,
  actor: TokenRole,
): Promise<SourceAnswer> {
  refuseProvisioned(context, name)
  const stored = await storedNamed(context, name)
  const before = stored === undefined ? undefined : decodeStored(stored, context.box)
  const read = readSourceInput(name, body, before?.destinations)
  if ('problems' in read) throw new SourceProblems(read.problems)
  const { input } = read
  if (hasSecrets(input.destinations) && !context.box.available) {
    throw new HttpError(
      400,
      'ERR_NO_SECRETS_KEY',
      'this source carries a secret (a shared secret or a static header value), which is stored encrypted: start the relay with secretsKey (or TRACKLET_SECRETS_KEY) first',
    )
  }
  await refuseUncompiled(context, input.destinations, before?.destinations)
  const created = newKeyFor(context, stored, input.writeKey)
  const after = { enabled: input.enabled, destinations: input.destinations, schema: input.schema }
  const result = await context.store.sourceConfigs.put({
    name,
    enabled: input.enabled,
    settings: encodeSettings({ destinations: input.destinations, schema: input.schema }, context.box),
    expected: expectedRevision(ifMatch),
    newKey: created?.key,
    keyDigest: stored === undefined || input.writeKey === undefined ? undefined : writeKeyDigest(input.writeKey),
    audit: (isNew) =>
      record(context, actor, isNew ? 'source.created' : 'source.replaced', name, () =>
        isNew || before === undefined ? { after: shown(after) } : { fields: changedFields(auditedOf(before), after) },
      ),
  })
  if (result.kind === 'stale') throw preconditionFailed(name)
  if (result.kind === 'unknown-key')
    throw new SourceProblems([
      {
        field: 'writeKey',
        message:
          "is not one of the source's write keys (keys change through POST and DELETE /v1/sources/:name/write-keys)",
      },
    ])
  await context.sync.changed()
  // Its function compiled and in use here before the answer: a message sent after a 200 meets it.
  await context.registry.settled()
  const view = storedSourceView(result.source)
  const generated = stored === undefined && input.writeKey === undefined ? { writeKey: created!.writeKey } : {}
  return { status: result.kind === 'created' ? 201 : 200, body: { ...view, ...generated }, etag: etagOf(result.source) }
}

// A function is compiled before anything is stored: code that does not compile is a 400 naming it.
// Code as stored already compiled when it was written (a page edit of a URL does not compile it again).
async function refuseUncompiled(
  context: SourcesContext,
  destinations: SourceDestinations,
  stored: SourceDestinations | undefined,
): Promise<void> {
  const fn = destinations.Webhooks?.function
  if (fn === undefined || !('code' in fn)) return
  const before = stored?.Webhooks?.function
  if (before !== undefined && 'code' in before && before.code === fn.code) return
  const problem =
    context.functions === undefined
      ? 'cannot be compiled by this relay, so it is not stored'
      : await context.functions
          .compileError(fn.code)
          .then((error) => (error === undefined ? undefined : `does not compile: ${error}`))
  if (problem !== undefined) throw new SourceProblems([{ field: FUNCTION_CODE_FIELD, message: problem }])
}

/** `DELETE /v1/sources/:name`: 204; its pending deliveries fail with "source removed". */
export async function deleteSource(
  context: SourcesContext,
  name: string,
  ifMatch: string | undefined,
  actor: TokenRole,
): Promise<void> {
  refuseProvisioned(context, name)
  const audit = record(context, actor, 'source.deleted', name, () => ({}))
  const result = await context.store.sourceConfigs.delete(name, expectedRevision(ifMatch), SOURCE_REMOVED, audit)
  await settle(context, result, name)
}

/** `POST /v1/sources/:name/write-keys`: a new key, shown once; the others keep working. */
export async function addWriteKey(
  context: SourcesContext,
  name: string,
  actor: TokenRole,
): Promise<{ id: string; writeKey: string }> {
  refuseProvisioned(context, name)
  const { id, writeKey } = newWriteKey()
  const key = { id, digest: writeKeyDigest(writeKey), prefix: writeKeyPrefix(writeKey), createdAt: now(context) }
  const audit = record(context, actor, 'write-key.created', name, () => ({ id, prefix: key.prefix }))
  await settle(context, await context.store.sourceConfigs.addKey(name, key, audit), name)
  return { id, writeKey }
}

/** `DELETE /v1/sources/:name/write-keys/:id`: that key is refused from then on. */
export async function deleteWriteKey(
  context: SourcesContext,
  name: string,
  id: string,
  actor: TokenRole,
): Promise<void> {
  refuseProvisioned(context, name)
  const audit = record(context, actor, 'write-key.deleted', name, () => ({ id }))
  const result = await context.store.sourceConfigs.deleteKey(name, id, audit)
  if (result.kind === 'not-found' && (await storedNamed(context, name)) !== undefined)
    throw new HttpError(404, 'ERR_NOT_FOUND', `source ${JSON.stringify(name)} has no write key ${JSON.stringify(id)}`)
  await settle(context, result, name)
}

// What an audit entry compares of a stored source: its settings, not its name, key digests or revision.
function auditedOf({ enabled, destinations, schema }: AuditedSettings): AuditedSettings {
  return { enabled, destinations, schema }
}

async function settle(context: SourcesContext, result: ChangeResult, name: string): Promise<void> {
  if (result.kind === 'not-found') throw notFound(name)
  if (result.kind === 'stale') throw preconditionFailed(name)
  await context.sync.changed()
}

// The key a new source starts with: the one the body names, or one made here (answered once).
function newKeyFor(context: SourcesContext, stored: StoredSource | undefined, given: string | undefined) {
  if (stored !== undefined) return undefined
  const { id, writeKey } = given === undefined ? newWriteKey() : { id: newWriteKey().id, writeKey: given }
  const digest = writeKeyDigest(writeKey)
  if (context.registry.all().some((s) => s.writeKeyDigests.includes(digest)))
    throw new SourceProblems([{ field: 'writeKey', message: 'is the write key of another source' }])
  return { writeKey, key: { id, digest, prefix: writeKeyPrefix(writeKey), createdAt: now(context) } }
}

async function storedNamed(context: SourcesContext, name: string): Promise<StoredSource | undefined> {
  return (await context.store.sourceConfigs.list()).find((s) => s.name === name)
}

function refuseProvisioned(context: SourcesContext, name: string): void {
  if (context.registry.find(name)?.provisioned) {
    throw new HttpError(
      409,
      'ERR_PROVISIONED',
      `source ${JSON.stringify(name)} comes from the config file: change it by editing the file (docs/relay.md, "Two kinds of source")`,
    )
  }
}

function expectedRevision(ifMatch: string | undefined): number | undefined {
  return revisionOfIfMatch(ifMatch)
}

function record(
  context: SourcesContext,
  actor: TokenRole,
  action: AuditAction,
  target: string,
  changes: () => unknown,
): AuditRecord {
  return { at: now(context), actor, action, target, changes: JSON.stringify(changes()) }
}

function now(context: SourcesContext): number {
  return (context.now ?? Date.now)()
}

function notFound(name: string): HttpError {
  return new HttpError(404, 'ERR_NOT_FOUND', `there is no source ${JSON.stringify(name)}`)
}

function preconditionFailed(name: string): HttpError {
  return new HttpError(
    412,
    'ERR_PRECONDITION_FAILED',
    `source ${JSON.stringify(name)} changed since the ETag given (If-Match): read it again, then send the change`,
  )
}
