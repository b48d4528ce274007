// Aggregate metrics of the oscillator system and its Xi signature (docs/consciousness.md). Xi weighs
// integration against differentiation, after G. Tononi, O. Sporns, G. M. Edelman, "A measure for
// brain complexity: relating functional segregation and integration in the nervous system", PNAS 91
// (1994): a system is most complex when it is integrated (high phi) and also differentiated (many
// distinct groups), neither one lockstep block nor a crowd of strangers.
//
//   differentiation D = H(partition) / ln N, H the Shannon entropy of the partition of the oscillators
//                       into phase-locked clusters (unclustered ones count as singletons); 0..1
//   Xi = phi * D
import { phi, type ConsciousnessLevel } from './iit.js'
import type { KuramotoModel, PhaseCluster } from './kuramoto.js'

/** Units phi is computed over: evenly spaced oscillators, so phi stays exact (<= 16 units). */
export const PHI_UNITS = 12

export interface XiSignature {
  xi: number
  integration: number
  differentiation: number
  coherence: number
}

export interface ConsciousnessMetrics {
  phi: number
  consciousness_level: ConsciousnessLevel
  xi: number
  /** Order parameter r averaged over the window. */
  mean_order: number
  /** r at the end of the window. */
  order: number
  mean_phase: number
  num_clusters: number
  dreaming: boolean
  signature: XiSignature
}

export function differentiation(clusters: readonly PhaseCluster[], n: number): number {
  if (n < 2) return 0
  const clustered = clusters.reduce((s, c) => s + c.size, 0)
  let h = 0
  for (const c of clusters) h -= (c.size / n) * Math.log(c.size / n)
  h += ((n - clustered) / n) * Math.log(n) // each singleton: -(1/n) ln(1/n)
  return h / Math.log(n)
}

export interface MeasureOptions {
  steps: number
  dt: number
  dreaming?: boolean
}

/** Runs the model over a window, sampling sin(theta) of PHI_UNITS oscillators each step, and measures. */
export function measure(model: KuramotoModel, o: MeasureOptions): ConsciousnessMetrics {
  const n = model.n
  const units = Array.from({ length: Math.min(PHI_UNITS, n) }, (_, k) => Math.floor(((k + 0.5) * n) / Math.min(PHI_UNITS, n)))
  const samples: number[][] = []
  let orderSum = 0
  const report = model.syncReport(o.steps, o.dt, 0.01, () => {
    samples.push(units.map((i) => Math.sin(model.theta[i])))
    orderSum += model.order().r
  })
  const r = phi(samples)
  const p = r.phi
  const d = differentiation(report.clusters, n)
  const coherence = orderSum / Math.max(1, samples.length)
  return {
    phi: p,
    consciousness_level: r.level,
    xi: p * d,
    mean_order: coherence,
    order: report.order.r,
    mean_phase: report.order.psi,
    num_clusters: report.num_clusters,
    dreaming: o.dreaming ?? false,
    signature: { xi: p * d, integration: p, differentiation: d, coherence },
  }
}
