import { connect, createServer, type Server, type Socket } from 'node:net'
import { freePort } from './postgres-server.mjs'

/** A TCP proxy a test can cut (every connection drops, new ones are refused) and restore. */
export interface TcpProxy {
  port: number
  cut(): Promise<void>
  restore(): Promise<void>
  close(): Promise<void>
}

/** A TCP proxy to `127.0.0.1:targetPort`, standing in for the network between a relay and PostgreSQL. */
export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>()
  let server: Server | undefined
  const port = await freePort()
  const listen = () =>
    new Promise<void>((resolve) => {
      server = createServer((client) => {
        const upstream = connect(targetPort, '127.0.0.1')
        for (const socket of [client, upstream]) {
          sockets.add(socket)
          socket.on('close', () => sockets.delete(socket))
          socket.on('error', () => {})
        }
        client.pipe(upstream).pipe(client)
        client.on('close', () => upstream.destroy())
        upstream.on('close', () => client.destroy())
      })
      server.listen(port, '127.0.0.1', resolve)
    })
  const cut = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy()
      if (server?.listening) server.close(() => resolve())
      else resolve()
    })
  await listen()
  return { port, cut, restore: () => (server?.listening ? Promise.resolve() : listen()), close: cut }
}
