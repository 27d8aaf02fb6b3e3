import type { ResolvedRelayOptions } from '../../config/options'
import type { SourceRegistry } from '../../sources/source-registry'
import type { DeliveryStep } from '../../delivery/delivery-step'
import type { RelayEvents } from '../../events/channel'
import type { AdminToken } from '../../http/auth'
import type { AuthLimiter } from '../../http/auth-limiter'
import type { Route } from '../../http/route'
import type { Store } from '../../store/store'
import type { Feature, FeatureReload } from '../feature'
import { ApiFunctionSync } from './api-sync'
import type { FunctionObserver } from './load'
import { FunctionCallLog, type RecentFunctionCalls } from './recent-calls'
import { ReloadableFunctions } from './reloadable'
import { outcomeLabel } from './result'
import { functionStep } from './step'
import { functionTestRoutes } from './test-routes'
import { compileErrorOf, testFunction } from './test-run'

/** What the functions need from the relay. */
export interface FunctionsDeps {
  /** The options: the config file's functions, `functionTimeout` and `functionMemory`. */
  options: ResolvedRelayOptions
  /** The sources of the file and of the admin API: the API sources' functions follow them. */
  registry: SourceRegistry
  /** Where each call is told (`function` events: the metrics count them). */
  events: RelayEvents
  /** A source's newest stored messages, for a test run on them. */
  store: Store
  adminToken: AdminToken
  authLimiter: AuthLimiter
}

/** The functions feature: what it adds, and what the console shows of it. */
export interface Functions extends Feature {
  readonly name: 'functions'
  /** Each delivery of a route with a function passes through it before its destination sends it. */
  readonly deliveryStep: DeliveryStep
  /** `POST /v1/functions/test`. */
  readonly routes: readonly Route[]
  /** A reload compiles the config file's functions again (each `function.file` read anew). */
  readonly reload: FeatureReload
  /** For the console: each function's recent calls, and the compile check of a source's `PUT`. */
  readonly console: {
    compileError(code: string): Promise<string | undefined>
    recent(now: number): RecentFunctionCalls[]
  }
  /** Closes every sandbox (after delivery stopped: no call is under way). */
  stop(): Promise<void>
}

/**
 * Destinations' functions (docs/functions.md): each route's code, in a QuickJS sandbox on a worker
 * thread, called on each delivery before its destination sends it (send, change, drop, retry).
 * Resolves once every function of the file and of the API sources has compiled; the feature is
 * started then, and `stop` closes every sandbox.
 *
 * @throws {RelayConfigError} naming each function that does not compile.
 */
export async function startFunctions(deps: FunctionsDeps): Promise<Functions> {
  const { options, events, registry } = deps
  // Each call, kept for the endpoints view and told to the metrics through the events channel.
  const calls = new FunctionCallLog()
  const observe: FunctionObserver = (source, result, destination) => {
    calls.record(source, destination, result, Date.now())
    if (events.listened) events.publish({ type: 'function', source, outcome: outcomeLabel(result), ms: result.ms })
  }
  const functions = await ReloadableFunctions.load(options, observe)
  // The API sources' functions, compiled now and again after each change of the sources.
  const api = new ApiFunctionSync(functions, () => registry.all())
  await api.start().catch(async (error: unknown) => {
    await functions.close()
    throw error
  })
  // The registry's settled() waits for it: a PUT answers once its function is in use here.
  const unsubscribe = registry.onChange(() => api.changed())
  const limits = { timeoutMs: options.functionTimeout, memoryMb: options.functionMemory }
  const tester = {
    test: (code: string, settings: Record<string, unknown>, given: readonly unknown[]) =>
      testFunction({ code, filename: 'the tested code', settings, ...limits }, given),
  }
  const { store, adminToken, authLimiter } = deps
  return {
    name: 'functions',
    deliveryStep: functionStep(functions.bySource),
    routes: functionTestRoutes({ store, tester, adminToken, authLimiter }),
    reload: { prepare: (next) => functions.prepare(next) },
    console: {
      compileError: (code) => compileErrorOf({ code, filename: 'the code', ...limits }),
      recent: (now) => calls.recent(now),
    },
    stop: async () => {
      unsubscribe()
      await functions.close()
    },
  }
}
