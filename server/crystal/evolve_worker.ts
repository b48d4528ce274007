// An evolve run off the server's event loop: discovery into the registry on disk (the registry's
// lock keeps it safe beside the server), progress and the outcome posted back to the service.
import { availableParallelism } from 'node:os'
import { parentPort, workerData } from 'node:worker_threads'
import type { EngineSettings } from '../../engine/config.js'
import { SEARCH_DEFAULTS, type Job } from '../../engine/contracts/api.js'
import type { Material } from '../../engine/contracts/material.js'
import { discover } from '../../engine/discovery/discovery.js'
import { searchPool } from '../../engine/discovery/pool.node.js'
import type { Engine } from '../../engine/field/engine.js'
import { createNodeEngine } from '../../engine/node.js'
import { FileRegistryStore } from '../../engine/registry/file_store.node.js'
import { Registry, type RegistryLimits } from '../../engine/registry/registry.js'

/** What the service hands the worker: the material itself, resolved from the server's catalog. */
export interface EvolveWork {
  request: Job['request']
  material: Material
  dataDir: string
  /** The server engine's backend: the worker's engines run on the same kind. */
  backend: Engine['backend']
  /** What the environment sets of its engines (SVC_CRYSTAL_GPU_STEPS_PER_DISPATCH above all). */
  engineSettings: EngineSettings
  limits: RegistryLimits
}

const { request, material, dataDir, backend, limits, engineSettings } = workerData as EvolveWork
const population = request.population ?? SEARCH_DEFAULTS.population
const size = request.size ?? SEARCH_DEFAULTS.size
// each generation's detection on the cores (docs/discovery.md)
const detector = searchPool(availableParallelism(), { size, population })
try {
  const result = await discover({
    material,
    generations: request.generations,
    population,
    size,
    seed: request.seed ?? SEARCH_DEFAULTS.seed,
    registry: new Registry(new FileRegistryStore(dataDir), limits),
    open: (o) => createNodeEngine({ ...engineSettings, ...o, backend, threads: 1 }),
    detector,
    onProgress: (progress) => parentPort!.postMessage({ type: 'progress', progress }),
  })
  parentPort!.postMessage({ type: 'done', registered: result.registered.map((p) => p.id), registered_archive: result.registered_archive })
} catch (e) {
  parentPort!.postMessage({ type: 'failed', message: (e as Error).message })
} finally {
  detector.close()
}
