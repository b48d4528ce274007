// "This tab": the same engine code as the server, running in the page: on navigator.gpu when the
// browser has WebGPU, else on the WebAssembly CPU backend (it needs the cross-origin isolation the
// server sends). Discoveries made here are registered in the server's registry.
import type { Primitive } from '../engine/contracts/registry.js'
import { discover } from '../engine/discovery/discovery.js'
import { createEngine, type Engine } from '../engine/field/engine.js'
import { MaterialCatalog } from '../engine/field/materials.js'
import { downsample } from '../engine/util/downsample.js'
import type { Candidate, RegisterOutcome } from '../engine/registry/registry.js'
import { get, post, type Job, type State } from './api'

const gpu = () => (navigator as Navigator & { gpu?: GPU }).gpu
const catalog = new MaterialCatalog()

export type TabBackend = 'gpu' | 'cpu'

/** WebGPU when the browser has it (unless the CPU twin is asked for), else the CPU twin. */
export async function openTabEngine(size: number, material: string, seed: number, prefer: TabBackend = 'gpu'): Promise<Engine> {
  return createEngine({ backend: prefer === 'gpu' && gpu() ? 'gpu' : 'cpu', size, material, seed, gpu: async () => gpu() })
}

/** The server's registry over its REST API, as discovery uses it. */
export const serverRegistry = {
  async list(): Promise<Primitive[]> {
    const out: Primitive[] = []
    for (let offset = 0; ; offset += 500) {
      const page = await get<{ total: number; items: Primitive[] }>(`/primitives?limit=500&offset=${offset}`)
      out.push(...page.items)
      if (out.length >= page.total || !page.items.length) return out
    }
  },
  async register(candidates: readonly Candidate[]): Promise<RegisterOutcome> {
    const r = await post<{ assigned: (string | null)[]; registered: string[]; rejected: RegisterOutcome['rejected'] }>('/primitives', {
      // an import keeps its uuid and provenance (the cross-node identity); a tab's own find has neither
      candidates: candidates.map(({ provenance, uuid, ...c }) => ({ ...c, ...(uuid ? { uuid } : {}), ...(provenance ? { provenance } : {}) })),
    })
    const registered = await Promise.all(r.registered.map((id) => get<Primitive>(`/primitives/${id}`)))
    return { assigned: r.assigned, registered, rejected: r.rejected.map((x) => ({ ...x, reason: 'duplicate' as const })), pruned: [] }
  },
}

/** The tab's field as the Observatory shows it: the same shape as the server's GET /crystal/state. */
export async function tabState(e: Engine, side: number): Promise<State> {
  const { u } = await e.read([0])
  const [books] = await e.books()
  const s = Math.min(side, e.size)
  return {
    step: e.step_count,
    size: s,
    field_size: e.size,
    material: e.material.name,
    temperature_k: e.temperature_k,
    backend: e.backend,
    memories: e.memories.length,
    field: Array.from(downsample(u, e.size, s)),
    books,
    timeline: e.timeline(0).slice(-500),
  }
}

/** Discovery in the tab (on the CPU backend when the only WebGPU is software), into the server's registry. */
export async function evolveInTab(request: { material: string; generations: number; population: number; size: number; seed?: number }, onJob: (j: Job) => void): Promise<Job> {
  const job: Job = { id: 'tab', status: 'running', progress: { generation: 0, generations: request.generations, best_fitness: 0, registered_total: 0 }, registered: [], error: null }
  onJob({ ...job })
  try {
    const result = await discover({
      material: catalog.get(request.material),
      generations: request.generations,
      population: request.population,
      size: request.size,
      seed: request.seed ?? 1,
      registry: serverRegistry,
      open: (o) => createEngine({ ...o, backend: 'auto', gpu: async () => gpu() }),
      onProgress: (p) => onJob({ ...job, progress: { generation: p.generation, generations: p.generations, best_fitness: p.best_fitness, registered_total: p.registered_total } }),
    })
    Object.assign(job, { status: 'done', registered: result.registered.map((p) => p.id), progress: { generation: result.generations_run, generations: request.generations, best_fitness: result.best_fitness, registered_total: result.registered.length } })
  } catch (e) {
    Object.assign(job, { status: 'failed', error: (e as Error).message })
  }
  onJob({ ...job })
  return job
}
