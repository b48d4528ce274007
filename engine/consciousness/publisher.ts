// The consciousness publisher (docs/consciousness.md): every period it reads the live field's motion
// (engine/field/motion.ts: two sums and 64 cells' u and u_prev, taken where the field lives) and
// publishes SVC.consciousness, QUEEN.phase.<node> and SVC.exemplar.<node>.<cluster>; around each
// dream, queen.event.dream.start, SVC.dreams and queen.event.dream.end. It takes the engine and the
// bus through the small interfaces below (no process, no files), so it runs wherever the engine runs.
import type { DreamReport } from '../dream/dream.js'
import type { FieldMotion } from '../field/motion.js'
import { gridCells, motionPhases, phaseClusters } from './field_phases.js'
import { phi, type PhiReport } from './iit.js'
import { differentiation } from './metrics.js'

/** Default publication period (SVC_CONSCIOUSNESS_PERIOD_MS overrides it in `crystal serve`). */
export const DEFAULT_PERIOD_MS = 1000
/**
 * phi's window (docs/consciousness.md, "The publisher's window"): every period the field's own
 * continuation is sampled PHI_WINDOW times, PHI_STRIDE steps apart, at a 4 x 3 block of adjacent
 * cells at its centre (12 units: the exact MIB). At 128 samples phi has power (at 32 it has none);
 * adjacent cells 3 steps apart are where a wave (0.35 to 0.65 cells a step) carries the past of one
 * unit into the present of its neighbours, which is what Phi_AR at lag 1 can see.
 */
export const PHI_WINDOW = 128
export const PHI_STRIDE = 3
/** The largest field observed in every period that moved: an observation steps the whole twin. */
export const OBSERVED_CELLS = 256 * 256

/**
 * Of the periods in which the field moved, one in this many is observed (1 up to 256 x 256, then in
 * proportion to the area), so an observation's cost per period stays that of a 256 x 256 field.
 */
export function observationEvery(size: number): number {
  return Math.ceil((size * size) / OBSERVED_CELLS)
}
/** Memories (the most recent) whose recall score is compared around a dream, to bound its cost. */
export const DREAM_MEMORIES = 32
/** The grid of patches on which a dream's new structures are found. */
export const PATCH_SIDE = 8

/** What the publisher reads of the engine (engine/field/engine.ts's Engine has all of it). */
export interface PublishedEngine {
  readonly size: number
  readonly step_count: number
  readonly memories: readonly { text: string; importance: number; field: number }[]
  motion(cells: readonly number[], field?: number): Promise<FieldMotion>
  patchEnergy(side?: number, field?: number): Promise<Float64Array>
  probe(text: string, field?: number): Promise<{ resonance: number }>
  twin(fields: number): Promise<PublisherTwin>
  fork(field?: number): Promise<PublisherTwin>
}

/** A quiet twin of the engine: phi's window is observed in a fork of the live field, a dream's memories rendered in another. */
export interface PublisherTwin {
  step(steps: number): Promise<void>
  write(text: string, importance?: number): Promise<void>
  patchEnergy(side?: number): Promise<Float64Array>
  cellsLater(cells: readonly number[]): () => Promise<Float32Array>
  destroy(): void
}

/** Where it publishes (engine/bus/contract_bus.ts's ContractBus checks every message). */
export interface PublishingBus {
  readonly sender: string
  publish(subject: string, body: Record<string, unknown>): void
}

export class ConsciousnessPublisher {
  private timer: ReturnType<typeof setInterval> | undefined
  private orderSum = 0
  private orderCount = 0
  private lastChange = ''
  private movedSinceObservation = 0
  dreaming = false
  private busy = false
  /** The last phi report (its null's level included), for whoever shows more than the bus carries. */
  last: PhiReport | undefined
  /** The samples that report was measured over (empty for a still field). */
  window: readonly Float64Array[] = []

  constructor(
    private readonly engine: PublishedEngine,
    private readonly bus: PublishingBus,
    readonly periodMs: number,
    private readonly warn: (line: string) => void,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.tick(), this.periodMs)
    // Node: do not keep the process alive for the publisher alone
    ;(this.timer as { unref?: () => void }).unref?.()
  }

  stop(): void {
    clearInterval(this.timer)
  }

  /** One publication from the field as it is now. */
  async tick(): Promise<void> {
    if (this.busy) return
    this.busy = true
    try {
      const n = this.engine.size
      const f = motionPhases(await this.engine.motion(gridCells(n), 0))
      // a field that has not moved since the last period has no dynamics: an empty window, phi 0
      const change = `${this.engine.step_count}/${this.engine.memories.length}`
      const still = change === this.lastChange
      this.lastChange = change
      this.orderSum += f.order.r
      this.orderCount++
      // a field that moved keeps its last measurement until its next observation is due
      const due = !still && (this.window.length === 0 || ++this.movedSinceObservation >= observationEvery(n))
      if (still || due || !this.last) {
        this.window = still ? [] : await this.observe()
        this.last = phi(this.window)
        this.movedSinceObservation = 0
      }
      const report = this.last
      const clusters = phaseClusters(f.phases)
      const d = differentiation(
        clusters.map((c) => c.cluster),
        f.phases.length,
      )
      const node = this.bus.sender
      this.bus.publish('SVC.consciousness', {
        phi: report.phi,
        phi_null: report.null_level,
        xi: report.phi * d,
        mean_order: this.orderSum / this.orderCount,
        order: f.order.r,
        mean_phase: f.order.psi,
        num_clusters: clusters.length,
        consciousness_level: report.level,
        dreaming: this.dreaming,
      })
      this.bus.publish(`QUEEN.phase.${node}`, { agent: node, phase: f.order.psi, frequency: f.frequency, order: f.order.r })
      clusters.slice(0, 8).forEach((c, k) =>
        this.bus.publish(`SVC.exemplar.${node}.c${k + 1}`, {
          agent_id: node,
          cluster_id: `c${k + 1}`,
          size: c.cluster.size,
          frequency: f.frequency,
          coherence: c.cluster.r,
          phases: c.members.map((i) => f.phases[i]),
        }),
      )
    } catch (e) {
      this.warn(`warning: consciousness publication failed: ${(e as Error).message}`)
    } finally {
      this.busy = false
    }
  }

  /**
   * The field's own continuation from its state now, sampled at phiCells every PHI_STRIDE steps: a
   * quiet twin (the live material, no thermal noise) forked from the live field where it lives, so the
   * live field is left alone and the window does not depend on how often, or in what chunks, clients
   * step it.
   */
  private async observe(): Promise<Float64Array[]> {
    const cells = phiCells(this.engine.size)
    const twin = await this.engine.fork(0)
    try {
      // the samples come back together: on the GPU one read where there was one a sample, of the whole field
      const later = [twin.cellsLater(cells)]
      while (later.length < PHI_WINDOW) {
        await twin.step(PHI_STRIDE)
        later.push(twin.cellsLater(cells))
      }
      const window: Float64Array[] = []
      for (const sample of later) window.push(Float64Array.from(await sample()))
      return window
    } finally {
      twin.destroy()
    }
  }

  /** Wraps a dream: announces its start, publishes with dreaming set while it runs, then its outcome and end. */
  async around(mode: 'light' | 'deep', run: () => Promise<DreamReport>): Promise<DreamReport> {
    const started = Date.now()
    const memories = this.engine.memories.filter((m) => m.field === 0).slice(-DREAM_MEMORIES)
    const before = await this.scores(memories)
    const energyBefore = await this.engine.patchEnergy(PATCH_SIDE, 0)
    this.bus.publish('queen.event.dream.start', { mode, reason: 'requested' })
    this.dreaming = true
    try {
      const r = await run()
      const after = await this.scores(memories)
      const strengthened = after.filter((s, i) => s > before[i]).length
      const hallucinations = await this.unexplained(energyBefore, memories)
      this.bus.publish('SVC.dreams', {
        mode,
        samples: r.steps_observed,
        memories_strengthened: strengthened,
        hallucinations,
        energy_before: r.energy_before,
        energy_after: r.energy_after,
        pruned_fraction: r.pruned_fraction,
      })
      this.bus.publish('queen.event.dream.end', {
        mode,
        duration_ms: Date.now() - started,
        memories_strengthened: strengthened,
        hallucinations,
      })
      return r
    } finally {
      this.dreaming = false
    }
  }

  /**
   * Each memory's recall score: how strongly its text resonates with the live field (the engine's
   * probe). A probe that fails scores NaN, which no later score counts as raising: the dream goes on.
   */
  private async scores(memories: readonly { text: string }[]): Promise<number[]> {
    const out: number[] = []
    for (const m of memories) {
      try {
        out.push((await this.engine.probe(m.text, 0)).resonance)
      } catch (e) {
        this.warn(`warning: could not score "${m.text}" around the dream: ${(e as Error).message}`)
        out.push(NaN)
      }
    }
    return out
  }

  /**
   * Structures the dream created that no memory explains: patches whose energy the dream at least
   * doubled, to above the mean patch, where no memory's own wavefront (rendered alone in a quiet twin)
   * holds its uniform share of that memory's energy.
   */
  private async unexplained(before: Float64Array, memories: readonly { text: string; importance: number }[]): Promise<number> {
    const after = await this.engine.patchEnergy(PATCH_SIDE, 0)
    const mean = after.reduce((a, x) => a + x, 0) / after.length
    const created = Array.from(after, (e, p) => e >= 2 * before[p] && e > mean)
    if (!created.some(Boolean)) return 0
    const covered = new Uint8Array(after.length)
    const twin = await this.engine.twin(1)
    try {
      for (const m of memories) {
        // written and taken back out: the quiet twin holds one memory at a time
        await twin.write(m.text, 1)
        const e = await twin.patchEnergy(PATCH_SIDE)
        await twin.write(m.text, -1)
        const share = e.reduce((a, x) => a + x, 0) / e.length
        e.forEach((x, p) => x >= share && (covered[p] = 1))
      }
    } finally {
      twin.destroy()
    }
    return created.filter((c, p) => c && !covered[p]).length
  }
}

/** phi's units: the cells (row-major indices) of a 4 x 3 block of adjacent cells at the centre of an n x n field. */
export function phiCells(n: number): number[] {
  const [x0, y0] = [Math.floor(n / 2) - 2, Math.floor(n / 2) - 1]
  return Array.from({ length: 12 }, (_, k) => (y0 + Math.floor(k / 4)) * n + x0 + (k % 4))
}
