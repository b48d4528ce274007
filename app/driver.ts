// What the controls act on: the server's engine (over the REST API; its state arrives on the feed),
// or the tab's own (its state is published after each change, frame by frame while it resonates).
import type { DreamReport, Job, State } from '../engine/contracts/api.js'
import type { Pulse } from '../engine/encode/pulse.js'
import type { Engine } from '../engine/field/engine.js'
import { post } from './api'
import { evolveInTab, tabState, type LabEvolve } from './tab'

export interface Driver {
  kind: 'server' | 'tab'
  write(text: string, importance: number): Promise<void>
  pulse(p: Pulse): Promise<void>
  step(steps: number): Promise<void>
  dream(mode: 'light' | 'deep'): Promise<DreamReport>
  conditions(c: { material: string; temperature_k: number; noise: number }): Promise<void>
  /** Starts an evolve; progress comes to `onJob` (the tab's) or on the feed (the server's). Returns the job's id. */
  evolve(r: LabEvolve, onJob: (j: Job) => void): Promise<string>
  close(): void
}

export const serverDriver: Driver = {
  kind: 'server',
  write: (text, importance) => post('/crystal/write', { text, importance }),
  pulse: (p) => post('/crystal/pulse', p),
  step: (steps) => post('/crystal/step', { steps }),
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
  async step(steps: number): Promise<void> {
    let perFrame = 1
    for (let done = 0; done < steps && !this.closed; ) {
      const n = Math.min(perFrame, steps - done)
      const t0 = performance.now()
      await this.engine.step(n)
      done += n
      const ms = performance.now() - t0
      perFrame = Math.max(1, Math.round((perFrame * FRAME_BUDGET_MS) / Math.max(ms, 1)))
      await this.show()
      await new Promise((r) => requestAnimationFrame(r))
    }
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

  close(): void {
    this.closed = true
    this.engine.destroy()
  }
}
