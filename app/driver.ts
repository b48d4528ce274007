// What the controls act on: the server's engine (over the REST API; its state arrives on the feed),
// or the tab's own (its state is published after each change, frame by frame while it resonates).
import { API_LIMITS, type DreamReport, type Job, type ProbeResult, type RecallResult, type State } from '../engine/contracts/api.js'
import type { Pulse } from '../engine/encode/pulse.js'
import type { Engine } from '../engine/field/engine.js'
import { post } from './api'
import { evolveInTab, tabState, type LabEvolve } from './tab'

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

export class TabDriver implements Driver {
  readonly kind = 'tab'
  private closed = false

  constructor(
    readonly engine: Engine,
    private readonly publish: (s: State) => void,
  ) {}

  async show(): Promise<void> {
    if (!this.closed) this.publish(await tabState(this.engine, VIEW_SIDE))
  }

  private async change(work: () => Promise<unknown>): Promise<void> {
    await work()
    await this.show()
  }

  write(text: string, importance: number) {
    return this.change(() => this.engine.write(text, importance))
  }

  pulse(p: Parameters<Driver['pulse']>[0]) {
    return this.change(() => this.engine.pulse(p))
  }

  /** Steps frame by frame, as many steps a frame as fit the frame budget, showing each frame. */
  step(steps: number, how: Stepping = {}): Promise<number> {
    const frame = async () => (await this.show(), await new Promise((r) => requestAnimationFrame(r)))
    return stepInChunks(
      steps,
      FRAME_BUDGET_MS,
      (n) => this.engine.step(n),
      frame,
      how,
      () => this.closed,
    )
  }

  recall(text: string, k: number) {
    return this.engine.recall(text, k)
  }

  probe(text: string) {
    return this.engine.probe(text)
  }

  async dream(mode: 'light' | 'deep'): Promise<DreamReport> {
    const [r] = await this.engine.dream(mode)
    await this.show()
    return r
  }

  conditions(c: { material: string; temperature_k: number; noise: number }) {
    return this.change(async () => {
      this.engine.setMaterial(c.material)
      this.engine.setTemperature(c.temperature_k)
      this.engine.setNoise(c.noise)
    })
  }

  async evolve(r: LabEvolve, onJob: (j: Job) => void): Promise<string> {
    void evolveInTab(r, onJob)
    return 'tab'
  }

  /**
   * Moves this field into `next` (a fresh engine of the same size, on another backend): its state,
   * step, memories and conditions. The timeline restarts there; dream edits are not replayed, so
   * recall there reads memories written before a dream as though the dream had not cut them.
   */
  async carryTo(next: Engine): Promise<void> {
    const { u, prev } = await this.engine.read([0])
    next.setMaterial(this.engine.material)
    next.setTemperature(this.engine.temperature_k)
    next.setNoise(this.engine.noise)
    await next.resume({ u, prev, step_count: this.engine.step_count, memories: this.engine.memories.map(({ field, ...m }) => m) })
  }

  close(): void {
    this.closed = true
    this.engine.destroy()
  }
}
