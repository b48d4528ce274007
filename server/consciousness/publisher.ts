// The consciousness publisher (docs/consciousness.md): with SVC_NATS_URL set, `crystal serve` reads
// the live field every period and publishes SVC.consciousness, QUEEN.phase.<node> and
// SVC.exemplar.<node>.<cluster>; around each dream, queen.event.dream.start, SVC.dreams and
// queen.event.dream.end. It reads the engine between the steps of whatever runs, so it keeps
// publishing while the field dreams. Every message goes through the contract.
import type { ContractBus } from '../../engine/bus/contract_bus.js'
import { fieldPhases, GRID_SIDE, phaseClusters } from '../../engine/consciousness/field_phases.js'
import { levelOf } from '../../engine/consciousness/iit.js'
import { differentiation, regularizedPhi } from '../../engine/consciousness/metrics.js'
import type { DreamReport } from '../../engine/dream/dream.js'
import type { Engine } from '../../engine/field/engine.js'

/** Default publication period (SVC_CONSCIOUSNESS_PERIOD_MS overrides it). */
export const DEFAULT_PERIOD_MS = 1000
/** Samples of the phase history phi is computed over, and the grid points it uses (exact: <= 16). */
export const PHI_WINDOW = 32
const PHI_POINTS = [0, 5, 10, 15, 18, 23, 28, 33, 36, 41, 46, 51].map((k) => k % (GRID_SIDE * GRID_SIDE))

export class ConsciousnessPublisher {
  private timer: NodeJS.Timeout | undefined
  private readonly history: number[][] = []
  private orderSum = 0
  private orderCount = 0
  dreaming = false
  private busy = false

  constructor(
    private readonly engine: Engine,
    private readonly bus: ContractBus,
    readonly periodMs: number,
    private readonly warn: (line: string) => void,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.tick(), this.periodMs)
    this.timer.unref()
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
      const { u, prev } = await this.engine.read([0])
      const f = fieldPhases(u, prev, n)
      this.history.push(PHI_POINTS.map((k) => Math.sin(f.phases[k])))
      if (this.history.length > PHI_WINDOW) this.history.shift()
      this.orderSum += f.order.r
      this.orderCount++
      const phi = this.history.length > PHI_POINTS.length ? regularizedPhi(this.history) : 0
      const clusters = phaseClusters(f.phases)
      const d = differentiation(
        clusters.map((c) => c.cluster),
        f.phases.length,
      )
      const node = this.bus.sender
      this.bus.publish('SVC.consciousness', {
        phi,
        xi: phi * d,
        mean_order: this.orderSum / this.orderCount,
        order: f.order.r,
        mean_phase: f.order.psi,
        num_clusters: clusters.length,
        consciousness_level: levelOf(phi),
        dreaming: this.dreaming,
      })
      this.bus.publish(`QUEEN.phase.${node}`, { agent: node, phase: f.order.psi, frequency: f.frequency, order: f.order.r })
      clusters.slice(0, 8).forEach((c, k) =>
        this.bus.publish(`SVC.exemplar.${node}.c${k + 1}`, { agent_id: node, cluster_id: `c${k + 1}`, size: c.cluster.size, frequency: f.frequency, coherence: c.cluster.r, phases: c.members.map((i) => f.phases[i]) }),
      )
    } catch (e) {
      this.warn(`warning: consciousness publication failed: ${(e as Error).message}`)
    } finally {
      this.busy = false
    }
  }

  /** Wraps a dream: announces its start, publishes with dreaming set while it runs, then its outcome and end. */
  async around(mode: 'light' | 'deep', run: () => Promise<DreamReport>): Promise<DreamReport> {
    const started = Date.now()
    this.bus.publish('queen.event.dream.start', { mode, reason: 'requested' })
    this.dreaming = true
    try {
      const r = await run()
      // the field's dream, in the contract's terms: amplified cells are strengthened memory,
      // mutation kicks are hallucinated content
      const strengthened = Math.round(r.amplified_fraction * this.engine.size ** 2)
      this.bus.publish('SVC.dreams', { mode, samples: r.steps_observed, memories_strengthened: strengthened, hallucinations: r.mutated_cells, energy_before: r.energy_before, energy_after: r.energy_after, pruned_fraction: r.pruned_fraction })
      this.bus.publish('queen.event.dream.end', { mode, duration_ms: Date.now() - started, memories_strengthened: strengthened, hallucinations: r.mutated_cells })
      return r
    } finally {
      this.dreaming = false
    }
  }
}
