// Wave memory (docs/consciousness.md): phase patterns kept as complex traces z_k = e^{i theta_k} in a
// phasor associative memory, after A. J. Noest, "Phasor neural networks", NIPS (1988), and T. Aoyagi,
// "Network of neural oscillators for retrieving phase information", Phys. Rev. Lett. 74 (1995).
//
//   overlap  m_k(theta) = | (1/N) sum_i conj(z_k,i) e^{i theta_i} |          (1: the pattern, up to a global phase)
//   field    h_i = sum_k s_k z_k,i (1/N) sum_j conj(z_k,j) e^{i theta_j}       (Hebbian weights, never formed)
//   update   theta_i <- arg h_i
//
// Each trace has a strength s_k that decays as exp(-decay t). Dreaming replays the memory from random
// cues: a cue that settles onto a trace (overlap >= RECOGNIZED) strengthens it; one that settles
// nowhere is a hallucination.
import { rng } from '../util/rng.js'

export interface WaveParams {
  /** Strength lost per unit time (exponential). */
  decay: number
  /** Strength added to a trace each time a dream settles onto it. */
  learning_rate: number
  /** Network updates per recall or dream sample. */
  settle_iterations: number
}

export const DEFAULT_WAVE_PARAMS: WaveParams = { decay: 0.01, learning_rate: 0.1, settle_iterations: 8 }
/** An overlap at or above this means the state is that trace. */
export const RECOGNIZED = 0.8

export interface Trace {
  phases: Float64Array
  strength: number
  label: string
}

export interface WaveRecall {
  label: string
  overlap: number
  strength: number
}

export interface DreamTally {
  samples: number
  memories_strengthened: number
  hallucinations: number
}

export interface WaveMemorySnapshot {
  params: WaveParams
  size: number
  traces: { label: string; strength: number; phases: number[] }[]
}

export class WaveMemory {
  private readonly traces: Trace[] = []

  constructor(
    readonly size: number,
    readonly params: WaveParams = DEFAULT_WAVE_PARAMS,
  ) {}

  get count(): number {
    return this.traces.length
  }

  store(phases: ArrayLike<number>, label: string, strength = 1): void {
    if (phases.length !== this.size) throw new Error(`a trace here has ${this.size} phases, got ${phases.length}`)
    this.traces.push({ phases: Float64Array.from(phases), strength, label })
  }

  /** Lets `dt` time pass: every strength decays. */
  age(dt: number): void {
    const f = Math.exp(-this.params.decay * dt)
    for (const t of this.traces) t.strength *= f
  }

  overlap(k: number, theta: ArrayLike<number>): number {
    const z = this.traces[k].phases
    let re = 0
    let im = 0
    for (let i = 0; i < this.size; i++) {
      const d = theta[i] - z[i]
      re += Math.cos(d)
      im += Math.sin(d)
    }
    return Math.hypot(re, im) / this.size
  }

  /** Runs the network from `cue` for settle_iterations updates and returns the settled phases. */
  settle(cue: ArrayLike<number>): Float64Array {
    const n = this.size
    const theta = Float64Array.from(cue)
    for (let it = 0; it < this.params.settle_iterations; it++) {
      const hre = new Float64Array(n)
      const him = new Float64Array(n)
      for (const t of this.traces) {
        // m = (1/N) sum_j conj(z_j) e^{i theta_j}, then h += s z m
        let mre = 0
        let mim = 0
        for (let j = 0; j < n; j++) {
          const d = theta[j] - t.phases[j]
          mre += Math.cos(d)
          mim += Math.sin(d)
        }
        mre *= t.strength / n
        mim *= t.strength / n
        for (let i = 0; i < n; i++) {
          const c = Math.cos(t.phases[i])
          const s = Math.sin(t.phases[i])
          hre[i] += c * mre - s * mim
          him[i] += s * mre + c * mim
        }
      }
      for (let i = 0; i < n; i++) if (hre[i] || him[i]) theta[i] = Math.atan2(him[i], hre[i])
    }
    return theta
  }

  /** The traces ranked by their overlap with the state that `cue` settles into. */
  recall(cue: ArrayLike<number>, k = 3): WaveRecall[] {
    const settled = this.settle(cue)
    return this.traces
      .map((t, i) => ({ label: t.label, overlap: this.overlap(i, settled), strength: t.strength }))
      .sort((a, b) => b.overlap - a.overlap)
      .slice(0, k)
  }

  /** Replays `samples` random cues (seeded): settling onto a trace strengthens it; settling nowhere is a hallucination. */
  dream(samples: number, seed: number): DreamTally {
    const rand = rng(seed)
    const tally = { samples, memories_strengthened: 0, hallucinations: 0 }
    for (let s = 0; s < samples; s++) {
      const settled = this.settle(Float64Array.from({ length: this.size }, () => 2 * Math.PI * rand()))
      let best = -1
      let bestOverlap = 0
      this.traces.forEach((_, k) => {
        const o = this.overlap(k, settled)
        if (o > bestOverlap) [best, bestOverlap] = [k, o]
      })
      if (best >= 0 && bestOverlap >= RECOGNIZED) {
        this.traces[best].strength += this.params.learning_rate
        tally.memories_strengthened++
      } else tally.hallucinations++
    }
    return tally
  }

  toJSON(): WaveMemorySnapshot {
    return {
      params: this.params,
      size: this.size,
      traces: this.traces.map((t) => ({ label: t.label, strength: t.strength, phases: Array.from(t.phases) })),
    }
  }

  static fromJSON(s: WaveMemorySnapshot): WaveMemory {
    const m = new WaveMemory(s.size, s.params)
    for (const t of s.traces) m.store(t.phases, t.label, t.strength)
    return m
  }
}
