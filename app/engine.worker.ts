// The tab's engine, off the page's thread: a dedicated module worker holds one engine (WebGPU or the
// WebAssembly CPU twin; both run in Chromium's dedicated workers) or runs one evolve, and the page
// talks to it through comlink (app/tab.ts TabEngine). Each change answers with the engine's mirror,
// the fields the page reads without waiting.
import { expose, transfer } from 'comlink'
import type { DreamReport, FieldPlanes, Job, ProbeResult, RecallResult, State } from '../engine/contracts/api.js'
import type { DiscoveryProgress, DiscoveryResult } from '../engine/discovery/discovery.js'
import type { Pulse } from '../engine/encode/pulse.js'
import type { EncodingVersion } from '../engine/encode/text.js'
import { createEngine, type Engine } from '../engine/field/engine.js'
import { discoverInTab, evolveInTab, resumeField, tabState, type LabEvolve, type TabBackend, type TabSearch } from './tab'

/** What the page reads of the engine between calls. */
export interface EngineMirror {
  backend: 'gpu' | 'cpu'
  backend_reason: string
  size: number
  step_count: number
  memories: number
  material: string
  temperature_k: number
  noise: number
  encoding: EncodingVersion
}

export type Conditions = Pick<EngineMirror, 'material' | 'temperature_k' | 'noise'>

const gpu = () => (navigator as Navigator & { gpu?: GPU }).gpu

let engine: Engine | undefined
// one call at a time: a click during a Resonate waits for the chunk under way, as the server's queue does
let queue: Promise<unknown> = Promise.resolve()

function serial<T>(work: (e: Engine) => Promise<T>): Promise<T> {
  const run = queue.then(() => {
    if (!engine) throw new Error("the tab's engine is not open (or was closed)")
    return work(engine)
  })
  queue = run.catch(() => undefined)
  return run
}

function mirror(e: Engine): EngineMirror {
  return {
    backend: e.backend,
    backend_reason: e.backend_reason,
    size: e.size,
    step_count: e.step_count,
    memories: e.memories.length,
    material: e.material.name,
    temperature_k: e.temperature_k,
    noise: e.noise,
    encoding: e.encoding,
  }
}

const change = (work: (e: Engine) => Promise<unknown>) => serial(async (e) => (await work(e), mirror(e)))

const api = {
  /** WebGPU when the worker has it (unless the CPU twin is asked for), else the CPU twin. */
  async open(size: number, material: string, seed: number, prefer: TabBackend): Promise<EngineMirror> {
    engine = await createEngine({ backend: prefer === 'gpu' && gpu() ? 'gpu' : 'cpu', size, material, seed, gpu: async () => gpu() })
    return mirror(engine)
  },
  write: (text: string, importance: number) => change((e) => e.write(text, importance)),
  pulse: (p: Pulse) => change((e) => e.pulse(p)),
  step: (steps: number) => change((e) => e.step(steps)),
  conditions: (c: Conditions) =>
    change(async (e) => {
      e.setMaterial(c.material)
      e.setTemperature(c.temperature_k)
      e.setNoise(c.noise)
    }),
  recall: (text: string, k: number): Promise<RecallResult> => serial((e) => e.recall(text, k)),
  probe: (text: string): Promise<ProbeResult> => serial((e) => e.probe(text)),
  dream: (mode: 'light' | 'deep'): Promise<{ report: DreamReport; mirror: EngineMirror }> =>
    serial(async (e) => ({ report: (await e.dream(mode))[0], mirror: mirror(e) })),
  state: (side: number): Promise<State> => serial((e) => tabState(e, side)),
  /** The field with its conditions (the planes move to the caller, not copied). */
  save: (): Promise<FieldPlanes> =>
    serial(async (e) => {
      const { u, prev } = await e.read([0])
      const memories = e.memories.map(({ text, importance, step }) => ({ text, importance, step }))
      const { size, step_count, material, temperature_k, noise, encoding } = mirror(e)
      return transfer({ size, step_count, material, temperature_k, noise, encoding, memories, u, prev }, [u.buffer, prev.buffer])
    }),
  /** Continues a saved field under its conditions and in its encoding (a fresh engine only). */
  resume: (f: FieldPlanes) => change((e) => resumeField(e, f)),
  /** An evolve in this worker (one worker each), its progress told to `onJob`. */
  evolve: (request: LabEvolve, onJob: (j: Job) => void): Promise<Job> => evolveInTab(request, onJob),
  /** A swarm round's search in this worker (one worker each). */
  discover: (search: TabSearch, onProgress: (p: DiscoveryProgress) => void): Promise<DiscoveryResult> => discoverInTab(search, onProgress),
  close: () => serial(async (e) => (e.destroy(), (engine = undefined))),
}

export type EngineWorker = typeof api

expose(api)
