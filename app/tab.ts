// "This tab": the same engine code as the server, running in the tab's workers (app/engine.worker.ts):
// on navigator.gpu when the browser has WebGPU, else on the WebAssembly CPU backend (it needs the
// cross-origin isolation the server sends). Discoveries made here are registered in the server's registry.
import {
  progressed,
  runningJob,
  SEARCH_DEFAULTS,
  type EvolveRequest,
  type FieldPlanes,
  type Job,
  type State,
} from '../engine/contracts/api.js'
import { discover, type DiscoveryOptions, type DiscoveryProgress, type DiscoveryResult } from '../engine/discovery/discovery.js'
import { createEngine, type Engine } from '../engine/field/engine.js'
import { MaterialCatalog } from '../engine/field/materials.js'
import { fieldState, momentOf } from '../engine/field/state.js'
import { serverRegistry } from './registry'

const gpu = () => (navigator as Navigator & { gpu?: GPU }).gpu
const catalog = new MaterialCatalog()

export type TabBackend = 'gpu' | 'cpu'

/** An evolve from the Lab: the size and population are always given there. */
export type LabEvolve = EvolveRequest & Required<Pick<EvolveRequest, 'population' | 'size'>>

/** The tab's field as the Observatory shows it: the same shape as the server's GET /crystal/state. */
export async function tabState(e: Engine, side: number): Promise<State> {
  return fieldState(e, await momentOf(e, [Math.min(side, e.size)]), side, e.backend)
}

/**
 * Continues a saved field (the server's, or another tab engine's) in a fresh engine under its
 * conditions and in its text encoding, so recall here reads its memories as they were written. Dream
 * edits are not replayed: recall reads memories written before a dream as though it had not cut them.
 */
export async function resumeField(e: Engine, f: FieldPlanes): Promise<void> {
  e.setMaterial(f.material)
  e.setTemperature(f.temperature_k)
  e.setNoise(f.noise)
  await e.resume(f)
}

/** A search's figures: what crosses to a worker (the registry and the engines are the worker's own). */
export type TabSearch = Pick<DiscoveryOptions, 'material' | 'generations' | 'population' | 'size' | 'seed'>

/** Discovery in the tab (on the CPU backend when the only WebGPU is software), into the server's registry. */
export function discoverInTab(search: TabSearch, onProgress?: (p: DiscoveryProgress) => void): Promise<DiscoveryResult> {
  return discover({
    ...search,
    registry: serverRegistry,
    open: (o) => createEngine({ ...o, backend: 'auto', gpu: async () => gpu() }),
    onProgress,
  })
}

/** An evolve in the tab, as a job told to `onJob`. */
export async function evolveInTab(request: LabEvolve, onJob: (j: Job) => void): Promise<Job> {
  let job = runningJob('tab', request)
  onJob(job)
  try {
    const result = await discoverInTab(
      {
        material: catalog.get(request.material),
        generations: request.generations,
        population: request.population,
        size: request.size,
        seed: request.seed ?? SEARCH_DEFAULTS.seed,
      },
      (p) => onJob((job = progressed(job, p))),
    )
    job = {
      ...job,
      status: 'done',
      finished_at: new Date().toISOString(),
      registered: result.registered.map((p) => p.id),
      registered_archive: result.registered_archive,
    }
  } catch (e) {
    job = { ...job, status: 'failed', finished_at: new Date().toISOString(), error: (e as Error).message }
  }
  onJob(job)
  return job
}
