// A `postgres://` URL may name several hosts the way libpq does, with what a session must accept:
// `postgres://u:p@db1:5432,db2:5432/tracklet?target_session_attrs=read-write`. `pg` takes one
// host, so the URL is read here and each host given its own one-host URL.

/** One host of a database URL. */
export interface DatabaseHost {
  host: string
  port: number
}

/**
 * The `target_session_attrs` the relay supports (libpq's meaning): `any` takes the first host
 * that answers, `read-write` one whose sessions may write (`transaction_read_only` off),
 * `primary` one not in recovery. The others (`read-only`, `standby`, `prefer-standby`) would
 * send the relay's writes to a standby.
 */
export const TARGET_SESSION_ATTRS = ['any', 'read-write', 'primary'] as const

/** One of {@link TARGET_SESSION_ATTRS}. */
export type TargetSessionAttrs = (typeof TARGET_SESSION_ATTRS)[number]

/** A database URL read: its hosts in order, what a session must accept, and each host's URL. */
export interface DatabaseHosts {
  hosts: readonly DatabaseHost[]
  targetSessionAttrs: TargetSessionAttrs
  /** Whether the URL asks for more than `pg` does by itself (several hosts, or a session check). */
  followsPrimary: boolean
  /** The URL's password, decoded (empty when none), so messages can hide it. */
  password: string
  /** The database's path, such as `/tracklet`. */
  path: string
  /** A one-host URL for `host`, without `target_session_attrs` (which `pg` does not know). */
  urlFor(host: DatabaseHost): string
}

const DEFAULT_PORT = 5432
// The user info runs to the authority's last `@`, as WHATWG URLs read it: a password with a raw
// `@` never spills into a host name (which messages show).
const URL_PARTS = /^(postgres(?:ql)?:\/\/)(?:([^/?#]*)@)?([^@/?#]*)([^?#]*)(\?[^#]*)?(#.*)?$/i
const ATTRS_PARAMETER = 'target_session_attrs'

/** `host:port`, as messages name a host. */
export function hostName({ host, port }: DatabaseHost): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`
}

/**
 * Reads a `postgres://` URL, one host or several (`db1:5432,db2:5432`, IPv6 in brackets).
 *
 * @throws {TypeError} naming the part at fault (a port, an empty host, or a `target_session_attrs`
 * the relay does not support), never the password.
 */
export function parseDatabaseHosts(url: string): DatabaseHosts {
  const parts = URL_PARTS.exec(url)
  if (parts === null) throw new TypeError('is not a postgres:// URL')
  const [, scheme = '', userInfo, authority = '', path = '', query = ''] = parts
  const hosts = authority.split(',').map(parseHost)
  const params = new URLSearchParams(query.slice(1))
  const attrs = params.get(ATTRS_PARAMETER) ?? 'any'
  if (!(TARGET_SESSION_ATTRS as readonly string[]).includes(attrs)) {
    const supported = TARGET_SESSION_ATTRS.join(', ')
    throw new TypeError(`${ATTRS_PARAMETER}=${attrs} is not supported: the relay writes, so use ${supported}`)
  }
  params.delete(ATTRS_PARAMETER)
  const rest = params.size === 0 ? '' : `?${params.toString()}`
  const user = userInfo === undefined ? '' : `${userInfo}@`
  return {
    hosts,
    targetSessionAttrs: attrs as TargetSessionAttrs,
    followsPrimary: hosts.length > 1 || attrs !== 'any',
    password: passwordOf(userInfo),
    path,
    urlFor: (host) => `${scheme}${user}${hostName(host)}${path}${rest}`,
  }
}

function parseHost(text: string, index: number): DatabaseHost {
  const bracketed = /^\[([^\]]+)\](?::(.*))?$/.exec(text)
  const [host, port] = bracketed !== null ? [bracketed[1]!, bracketed[2]] : splitPort(text)
  // libpq's default host, as `pg` reads an empty one.
  const first = index === 0
  if (host === '' && first && port === undefined) return { host: 'localhost', port: DEFAULT_PORT }
  if (host === '') throw new TypeError(`names no host in place ${index + 1} of its host list`)
  if (port === undefined || port === '') return { host, port: DEFAULT_PORT }
  const number = Number(port)
  if (!/^\d+$/.test(port) || number < 1 || number > 65_535) {
    const shown = JSON.stringify(port)
    throw new TypeError(`has an invalid port for ${host} (${shown}): a number from 1 to 65535`)
  }
  return { host, port: number }
}

function splitPort(text: string): [string, string | undefined] {
  const colon = text.lastIndexOf(':')
  return colon === -1 ? [text, undefined] : [text.slice(0, colon), text.slice(colon + 1)]
}

function passwordOf(userInfo: string | undefined): string {
  const colon = userInfo?.indexOf(':') ?? -1
  if (userInfo === undefined || colon === -1) return ''
  try {
    return decodeURIComponent(userInfo.slice(colon + 1))
  } catch {
    return userInfo.slice(colon + 1)
  }
}
