// An S3-compatible server for the archive's tests: s3rver (from npm), in a child process of its
// own so that it runs with OpenSSL's legacy provider (its pagination tokens use DES, which
// OpenSSL 3 leaves out by default). Prints its port, then serves until killed.
import S3rver from 's3rver'

const [directory, bucket] = process.argv.slice(2)
const server = new S3rver({
  address: '127.0.0.1',
  port: 0,
  silent: true,
  directory,
  configureBuckets: [{ name: bucket, configs: [] }],
})
const address = await server.run()
process.stdout.write(`${address.port}\n`)
