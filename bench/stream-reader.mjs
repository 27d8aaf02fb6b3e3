// A reader of a relay's live stream for bench/relay.mjs (BENCH_STREAM_READER=1): started by
// bench/relay-server.mjs beside its relay, in a process of its own, it reads every event as fast
// as it comes and counts them, so the relay's cost of one reader taking everything is measured.
import { request } from 'undici'

const [url, token] = process.argv.slice(2)
const response = await request(`${url}/v1/stream`, { headers: { authorization: `Bearer ${token}` } })
if (response.statusCode !== 200) throw new Error(`the stream answered ${response.statusCode}`)
let bytes = 0
process.send?.({ reading: true })
for await (const chunk of response.body) bytes += chunk.length
process.send?.({ bytes })
