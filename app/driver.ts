// What the controls act on: the server's engine (over the REST API; its state arrives on the feed),
// or the tab's own, in a worker (its state is published after each change, frame by frame while it resonates).
import { proxy, transfer, wrap, type Remote } from 'comlink'
import {
  API_LIMITS,
  type DreamReport,
  type FieldPlanes,
  type Job,
  type ProbeResult,
  type RecallResult,
  type State,
} from '../engine/contracts/api.js'
import type { Pulse } from '../engine/encode/pulse.js'
import type { EngineMirror, EngineWorker } from './engine.worker'
import { post } from './api'
import type { LabEvolve, TabBackend } from './tab'

/** How a long Resonate goes: the steps done so far are reported after each chunk; aborting stops it between chunks. */
export interface Stepping {
  onProgress?: (done: number) => void
  signal?: AbortSignal
}

export interface Driver {
  kind: 'server' | 'tab'
  write(text: string, importance: number): Promise<void>
  pulse(p: Pulse): Promise<void>
  /** Steps in chunks that each take about a frame's budget, so the view plays and Stop answers quickly. Resolves to the steps done. */
  step(steps: number, how?: Stepping): Promise<number>
  recall(text: string, k: number): Promise<RecallResult>
  probe(text: string): Promise<ProbeResult>
  dream(mode: 'light' | 'deep'): Promise<DreamReport>
  conditions(c: { material: string; temperature_k: number; noise: number }): Promise<void>
  /** Starts an evolve; progress comes to `onJob` (the tab's) or on the feed (the server's). Returns the job's id. */
  evolve(r: LabEvolve, onJob: (j: Job) => void): Promise<string>
  close(): void
}

/**
 * Runs `steps` as chunks sized to take about `budgetMs` each (the first chunk is one step; each next
 * one is scaled by how long the last took, at most fourfold, so that one quick chunk, timed coarsely,
 * does not make the next one long), calling `after` between chunks. Returns the steps done.
 */
export async function stepInChunks(
  steps: number,
  budgetMs: number,
  run: (n: number) => Promise<unknown>,
  after: () => Promise<unknown>,
  how: Stepping = {},
  stopped = () => false,
): Promise<number> {
  if (!Number.isInteger(steps) || steps < 0) return (await run(steps), 0) // the engine or the server names the bad value
  let perChunk = 1
  let done = 0
  while (done < steps && !how.signal?.aborted && !stopped()) {
    const n = Math.min(perChunk, steps - done)
    const t0 = performance.now()
    await run(n)
    done += n
    const ms = performance.now() - t0
    perChunk = Math.max(1, Math.min(4 * perChunk, Math.round((perChunk * budgetMs) / Math.max(ms, 1))))
    how.onProgress?.(done)
    await after()
  }
  return done
}

/** A server chunk's wall time: long enough that the request's own cost is small, short enough that the feed shows the field move (4.5 to 5.4 frames a second measured: docs/observatory.md). */
const SERVER_CHUNK_MS = 150

export const serverDriver: Driver = {
  kind: 'server',
  write: (text, importance) => post('/crystal/write', { text, importance }),
  pulse: (p) => post('/crystal/pulse', p),
  // over the server's limit, the whole count goes in one request so that the server names its limit
  step: (steps, how) =>
    steps > API_LIMITS.steps_per_request
      ? post('/crystal/step', { steps }).then(() => steps)
      : stepInChunks(
          steps,
          SERVER_CHUNK_MS,
          (n) => post('/crystal/step', { steps: n }),
          async () => {},
          how,
        ),
  recall: (text, k) => post<RecallResult>('/crystal/recall', { text, k }),
  probe: (text) => post<ProbeResult>('/crystal/probe', { text }),
  dream: (mode) => post<DreamReport>('/crystal/dream', { mode }),
  conditions: (c) => post('/crystal/conditions', c),
  evolve: async (r) => (await post<Job>('/crystal/evolve', r)).id,
  close: () => {},
}

/** Side of the state a tab publishes (the field is downsampled to it, as the server's feed does). */
const VIEW_SIDE = 128
/** Wall time a frame may spend stepping: about 30 frames a second when the engine keeps up. */
const FRAME_BUDGET_MS = 30

interface EngineWorkerHandle {
  worker: Worker
  remote: Remote<EngineWorker>
  /** Rejects when the worker fails (its script did not load, or an error escaped it): calls to it would never be answered. */
  failed: Promise<never>
}

/** A dedicated module worker running app/engine.worker.ts (Vite bundles it); comlink speaks to it. */
function engineWorker(name: string): EngineWorkerHandle {
  const worker = new Worker(new URL('./engine.worker.ts', import.meta.url), { type: 'module', name })
  const failed = new Promise<never>((_, reject) =>
    worker.addEventListener('error', (e) => reject(new Error(`the ${name} worker failed: ${e.message || 'its script did not load'}`))),
  )
  failed.catch(() => {})
  return { worker, remote: wrap<EngineWorker>(worker), failed }
}

/** Long work (an evolve, a swarm round's search) in a worker of its own, ended when the work ends. */
export function inWorker<T>(name: string, work: (w: Remote<EngineWorker>) => Promise<T>): Promise<T> {
  const { worker, remote, failed } = engineWorker(name)
  return Promise.race([work(remote), failed]).finally(() => worker.terminate())
}

/**
 * The tab's engine as the page holds it: a worker with the engine in it, and a mirror of what the
 * page reads without waiting (step, memories, conditions, backend), updated after each change.
 */
export class TabEngine {
  /** Rejects once the worker is ended or has failed: a call under way then fails rather than waiting forever. */
  private readonly ended: Promise<never>
  private end = () => {}

  private constructor(
    private readonly w: EngineWorkerHandle,
    public mirror: EngineMirror,
  ) {
    const closed = new Promise<never>((_, reject) => (this.end = () => reject(new Error("the tab's engine was closed"))))
    this.ended = Promise.race([closed, w.failed])
    this.ended.catch(() => {})
  }

  /** A call to the worker's engine. */
  ask<T>(work: (w: Remote<EngineWorker>) => Promise<T>): Promise<T> {
    return Promise.race([work(this.w.remote), this.ended])
  }

  /** WebGPU when the browser has it in workers (unless the CPU twin is asked for), else the CPU twin. */
  static async open(size: number, material: string, seed: number, prefer: TabBackend): Promise<TabEngine> {
    const w = engineWorker('tab engine')
    try {
      return new TabEngine(w, await Promise.race([w.remote.open(size, material, seed, prefer), w.failed]))
    } catch (e) {
      w.worker.terminate()
      throw e
    }
  }

  /** Ends the worker at once, with whatever it was doing (its GPU device and memory go with it). */
  destroy(): void {
    this.w.worker.terminate()
    this.end()
  }
}

export class TabDriver implements Driver {
  readonly kind = 'tab'
  private closed = false

  constructor(
    readonly engine: TabEngine,
    private readonly publish: (s: State) => void,
  ) {}

  async show(): Promise<void> {
    const s = await this.engine.ask((w) => w.state(VIEW_SIDE))
    if (!this.closed) this.publish(s)
  }

  private async change(work: (w: Remote<EngineWorker>) => Promise<EngineMirror>): Promise<void> {
    this.engine.mirror = await this.engine.ask(work)
    await this.show()
  }

  write(text: string, importance: number) {
    return this.change((w) => w.write(text, importance))
  }

  pulse(p: Pulse) {
    return this.change((w) => w.pulse(p))
  }

  /** Steps frame by frame, as many steps a frame as fit the frame budget, showing each frame. */
  step(steps: number, how: Stepping = {}): Promise<number> {
    const frame = async () => (await this.show(), await new Promise((r) => requestAnimationFrame(r)))
    return stepInChunks(
      steps,
      FRAME_BUDGET_MS,
      async (n) => {
        // a switch of engine during the run closes this one: the run just ends
        const mirror = await this.engine.ask((w) => w.step(n)).catch((e) => (this.closed ? this.engine.mirror : Promise.reject(e)))
        this.engine.mirror = mirror
      },
      async () => (this.closed ? undefined : frame()),
      how,
      () => this.closed,
    )
  }

  recall(text: string, k: number): Promise<RecallResult> {
    return this.engine.ask((w) => w.recall(text, k))
  }

  probe(text: string): Promise<ProbeResult> {
    return this.engine.ask((w) => w.probe(text))
  }

  async dream(mode: 'light' | 'deep'): Promise<DreamReport> {
    const { report, mirror } = await this.engine.ask((w) => w.dream(mode))
    this.engine.mirror = mirror
    await this.show()
    return report
  }

  conditions(c: { material: string; temperature_k: number; noise: number }) {
    return this.change((w) => w.conditions(c))
  }

  /** An evolve in a worker of its own (the field's worker stays free), ended when the evolve ends. */
  async evolve(r: LabEvolve, onJob: (j: Job) => void): Promise<string> {
    void inWorker('tab evolve', (w) => w.evolve(r, proxy(onJob)))
    return 'tab'
  }

  /**
   * Moves this field into `next` (a fresh engine of the same size, on another backend): its state,
   * step, memories and conditions. The timeline restarts there; dream edits are not replayed, so
   * recall there reads memories written before a dream as though the dream had not cut them.
   */
  async carryTo(next: TabEngine): Promise<void> {
    await resumeIn(next, await this.engine.ask((w) => w.save()))
  }

  close(): void {
    this.closed = true
    this.engine.destroy()
  }
}

/** Continues a saved field (a tab's, or the server's from GET /crystal/field) in a fresh tab engine. */
export async function resumeIn(e: TabEngine, f: FieldPlanes): Promise<void> {
  e.mirror = await e.ask((w) => w.resume(transfer(f, [f.u.buffer, f.prev.buffer])))
}
