// A process that archives batches into a folder without end, telling its parent each file the
// archive acknowledged (delivered); the test kills it with SIGKILL mid-file.
const [bundle, root] = process.argv.slice(2)
const { Archive } = await import(bundle)
const sender = Archive.create(Archive.parseSettings({ url: `file://${root}` }, 'Archive'), {
  source: 'web',
  relayId: `writer${process.pid}`,
})
const receivedAt = new Date().toISOString()
const padding = 'x'.repeat(200)
for (let first = 1; ; first += 5000) {
  const batch = Array.from({ length: 5000 }, (_, i) => ({
    deliveryId: first + i,
    source: 'web',
    receivedAt,
    message: { type: 'track', messageId: `m-${first + i}`, timestamp: receivedAt, userId: 'u', event: padding + i },
  }))
  const outcomes = await sender.sendBatch(batch)
  if (outcomes.every((outcome) => outcome.kind === 'delivered')) {
    process.send({ first, last: first + 4999, key: outcomes[0].detail.file })
  }
}
