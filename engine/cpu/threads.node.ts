// Node's thread spawner for the WASM kernel: a worker_threads Worker that instantiates the same
// module on the shared memory and runs its share of every job when the `go` word changes.
import { Worker } from 'node:worker_threads'
import type { ThreadSpawner } from '../field/backend.js'

const HELPER = `
const { workerData } = require('node:worker_threads')
const { module, memory, job, go, thread } = workerData
const { exports } = new WebAssembly.Instance(module, { env: { memory } })
const words = new Int32Array(memory.buffer, 0, go + 1)
let seen = 0 // helpers start before the first job, when go is 0
for (;;) {
  Atomics.wait(words, go, seen)
  seen = Atomics.load(words, go)
  if (seen < 0) break
  exports.run(job, thread)
}
`

export const spawnNodeThread: ThreadSpawner = (init) => {
  const worker = new Worker(HELPER, { eval: true, workerData: init })
  worker.unref()
  return { terminate: () => void worker.terminate() }
}
