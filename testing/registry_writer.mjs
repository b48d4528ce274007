// A separate process for the registry tests: registers `count` random primitives one at a time into
// the data dir given, through the built store (npm test builds first). Prints one line per write.
import { FileRegistryStore } from '../dist/engine/registry/file_store.node.js'
import { Registry } from '../dist/engine/registry/registry.js'
import { candidate } from '../dist/bench/harness.js'

const [dataDir, count, seed, staleMs] = process.argv.slice(2)
const registry = new Registry(new FileRegistryStore(dataDir, { staleMs: Number(staleMs ?? 10000) }))
for (let i = 0; i < Number(count); i++) {
  const { registered } = await registry.register([candidate(Number(seed) * 100000 + i)])
  process.stdout.write(`${registered.map((p) => p.id).join(',')}\n`)
}
