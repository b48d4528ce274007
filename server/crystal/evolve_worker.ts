// An evolve run off the server's event loop: discovery into the registry on disk (the registry's
// lock keeps it safe beside the server), progress and the outcome posted back to the service.
import { parentPort, workerData } from 'node:worker_threads'
import type { Job } from '../../engine/contracts/api.js'
import { discover } from '../../engine/discovery/discovery.js'
import { loadCatalog } from '../../engine/field/materials.node.js'
import type { BackendChoice } from '../../engine/field/select.js'
import { createNodeEngine } from '../../engine/node.js'
import { FileRegistryStore } from '../../engine/registry/file_store.node.js'
import { limitsFromEnv, Registry } from '../../engine/registry/registry.js'

const { request, dataDir, backend } = workerData as { request: Job['request']; dataDir: string; backend: BackendChoice }
try {
  const material = loadCatalog(dataDir).get(request.material)
  const result = await discover({
    material,
    generations: request.generations,
    population: request.population ?? 12,
    size: request.size ?? 96,
    seed: request.seed ?? 1,
    registry: new Registry(new FileRegistryStore(dataDir), limitsFromEnv(process.env)),
    open: (o) => createNodeEngine({ ...o, backend, threads: 1 }),
    onProgress: (p) => parentPort!.postMessage({ type: 'progress', progress: { generation: p.generation, generations: p.generations, best_fitness: p.best_fitness, registered_total: p.registered_total } }),
  })
  parentPort!.postMessage({ type: 'done', registered: result.registered.map((p) => p.id) })
} catch (e) {
  parentPort!.postMessage({ type: 'failed', message: (e as Error).message })
}
