// An evolve run off the server's event loop: discovery into the registry on disk (the registry's
// lock keeps it safe beside the server), progress and the outcome posted back to the service.
import { availableParallelism } from 'node:os'
import { parentPort, workerData } from 'node:worker_threads'
import { SEARCH_DEFAULTS, type GenerationReport, type Job } from '../../engine/contracts/api.js'
import type { Material } from '../../engine/contracts/material.js'
import { discover } from '../../engine/discovery/discovery.js'
import { searchPool } from '../../engine/discovery/pool.node.js'
import { FileRegistryStore } from '../../engine/registry/file_store.node.js'
import { Registry, type RegistryLimits } from '../../engine/registry/registry.js'
import { workerEngines, type WorkerEngineSettings } from './worker_engines.js'

/** What the service hands the worker: the material itself, resolved from the server's catalog. */
export interface EvolveWork extends WorkerEngineSettings {
  request: Job['request']
  material: Material
  dataDir: string
  limits: RegistryLimits
}

/** What the worker posts back: each generation's progress, then how it ended and its engines' GPU transfers (a line a shape; none unless asked for). */
export type EvolveMessage =
  | { type: 'progress'; progress: GenerationReport }
  | { type: 'done'; registered: string[]; registered_archive: Job['registered_archive']; transfers: string[] }
  | { type: 'failed'; message: string; transfers: string[] }

const post = (m: EvolveMessage) => parentPort!.postMessage(m)
const work = workerData as EvolveWork
const { request, material, dataDir, limits } = work
const engines = workerEngines(work)
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
    open: engines.open,
    detector,
    onProgress: (progress) => post({ type: 'progress', progress }),
  })
  post({
    type: 'done',
    registered: result.registered.map((p) => p.id),
    registered_archive: result.registered_archive,
    transfers: engines.transfers(),
  })
} catch (e) {
  post({ type: 'failed', message: (e as Error).message, transfers: engines.transfers() })
} finally {
  detector.close()
}
