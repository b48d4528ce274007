// Integrated information (docs/consciousness.md): phi is the mutual information across the weakest
// cut of the system, for Gaussian time series. Sources: G. Tononi, O. Sporns, "Measuring information
// integration", BMC Neuroscience 4:31 (2003) (the minimum-information bipartition); A. B. Barrett,
// A. K. Seth, "Practical measures of integrated information for time-series data", PLoS Comput.
// Biol. 7 (2011) (the Gaussian form). For a covariance S and a bipartition (A, B):
//
//   MI(A; B) = 1/2 ln( det S_A det S_B / det S )        (nats)
//
// and phi = min over bipartitions of MI. Exact over every bipartition up to EXACT_LIMIT units; above
// it, a spectral cut (the Fiedler vector of the |correlation| graph) refined by single-unit moves.

export const EXACT_LIMIT = 16

/** Levels by phi (nats), lowest first; documented thresholds. */
export enum ConsciousnessLevel {
  Dormant = 'dormant',
  Reactive = 'reactive',
  Aware = 'aware',
  Reflective = 'reflective',
  Lucid = 'lucid',
}

/** The lowest phi of each level above Dormant. */
export const LEVEL_THRESHOLDS: readonly [ConsciousnessLevel, number][] = [
  [ConsciousnessLevel.Reactive, 0.05],
  [ConsciousnessLevel.Aware, 0.2],
  [ConsciousnessLevel.Reflective, 0.5],
  [ConsciousnessLevel.Lucid, 1.0],
]

export function levelOf(phi: number): ConsciousnessLevel {
  let level = ConsciousnessLevel.Dormant
  for (const [l, t] of LEVEL_THRESHOLDS) if (phi >= t) level = l
  return level
}

export interface PhiReport {
  phi: number
  level: ConsciousnessLevel
  /** The weakest cut: one side's unit indices (the other side is the rest). */
  cut: number[]
  units: number
  method: 'exact' | 'spectral'
  bipartitions_evaluated: number
}

/** Sample covariance of `samples` (T rows of n units). */
export function covariance(samples: readonly ArrayLike<number>[]): Float64Array {
  const t = samples.length
  const n = samples[0]?.length ?? 0
  const mean = new Float64Array(n)
  for (const row of samples) for (let i = 0; i < n; i++) mean[i] += row[i] / t
  const s = new Float64Array(n * n)
  for (const row of samples) {
    for (let i = 0; i < n; i++) {
      const di = row[i] - mean[i]
      for (let j = 0; j <= i; j++) s[i * n + j] += (di * (row[j] - mean[j])) / (t - 1)
    }
  }
  for (let i = 0; i < n; i++) for (let j = 0; j < i; j++) s[j * n + i] = s[i * n + j]
  return s
}

/** ln det of the principal submatrix on `idx` (Cholesky; -Infinity if not positive definite). */
export function logDet(s: Float64Array, n: number, idx: readonly number[]): number {
  const m = idx.length
  const L = new Float64Array(m * m)
  let sum = 0
  for (let i = 0; i < m; i++) {
    for (let j = 0; j <= i; j++) {
      let v = s[idx[i] * n + idx[j]]
      for (let k = 0; k < j; k++) v -= L[i * m + k] * L[j * m + k]
      if (i === j) {
        if (!(v > 0)) return -Infinity
        L[i * m + i] = Math.sqrt(v)
        sum += Math.log(v)
      } else L[i * m + j] = v / L[j * m + j]
    }
  }
  return sum
}

/** Gaussian mutual information (nats) between the units in `a` and the rest. */
export function mutualInformation(s: Float64Array, n: number, a: readonly number[]): number {
  const inA = new Set(a)
  const b = Array.from({ length: n }, (_, i) => i).filter((i) => !inA.has(i))
  const all = Array.from({ length: n }, (_, i) => i)
  return Math.max(0, 0.5 * (logDet(s, n, a) + logDet(s, n, b) - logDet(s, n, all)))
}

/** phi of a covariance matrix (n x n, row-major). */
export function phiFromCovariance(s: Float64Array, n: number): PhiReport {
  if (n < 2) return { phi: 0, level: ConsciousnessLevel.Dormant, cut: [], units: n, method: 'exact', bipartitions_evaluated: 0 }
  let best = { phi: Infinity, cut: [] as number[] }
  let evaluated = 0
  const consider = (cut: number[]) => {
    evaluated++
    const mi = mutualInformation(s, n, cut)
    if (mi < best.phi) best = { phi: mi, cut }
  }
  if (n <= EXACT_LIMIT) {
    // every bipartition once: the side holding the last unit is the complement of `mask`'s side
    for (let mask = 1; mask < 2 ** (n - 1); mask++) consider(Array.from({ length: n - 1 }, (_, i) => i).filter((i) => mask & (1 << i)))
    return { ...best, level: levelOf(best.phi), units: n, method: 'exact', bipartitions_evaluated: evaluated }
  }
  const side = spectralCut(s, n)
  consider(side)
  // refine: move single units across while that lowers the MI (keeping both sides non-empty)
  for (let improved = true; improved; ) {
    improved = false
    const current = best.phi
    for (let u = 0; u < n; u++) {
      const cut = best.cut.includes(u) ? best.cut.filter((x) => x !== u) : [...best.cut, u].sort((a, b) => a - b)
      if (cut.length === 0 || cut.length === n) continue
      consider(cut)
    }
    improved = best.phi < current - 1e-12
  }
  return { ...best, level: levelOf(best.phi), units: n, method: 'spectral', bipartitions_evaluated: evaluated }
}

/** phi of time series: T samples of n units. */
export function phi(samples: readonly ArrayLike<number>[]): PhiReport {
  return phiFromCovariance(covariance(samples), samples[0]?.length ?? 0)
}

/** The sign of the Fiedler vector of the |correlation| graph's Laplacian (power iteration, deflated). */
function spectralCut(s: Float64Array, n: number): number[] {
  const w = new Float64Array(n * n)
  const degree = new Float64Array(n)
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      if (i === j) continue
      const c = Math.abs(s[i * n + j] / Math.sqrt(s[i * n + i] * s[j * n + j] || 1))
      w[i * n + j] = c
      degree[i] += c
    }
  }
  // iterate on (c I - L), whose top eigenvectors are L's bottom ones; project out the constant one
  const c = 2 * Math.max(...degree) + 1
  let v = Float64Array.from({ length: n }, (_, i) => Math.sin(i + 1))
  for (let it = 0; it < 500; it++) {
    const mean = v.reduce((a, x) => a + x, 0) / n
    const next = new Float64Array(n)
    for (let i = 0; i < n; i++) {
      let lv = degree[i] * (v[i] - mean)
      for (let j = 0; j < n; j++) lv -= w[i * n + j] * (v[j] - mean)
      next[i] = c * (v[i] - mean) - lv
    }
    const norm = Math.hypot(...next) || 1
    v = next.map((x) => x / norm)
  }
  const cut = Array.from({ length: n }, (_, i) => i).filter((i) => v[i] >= 0)
  return cut.length === 0 || cut.length === n ? [0] : cut
}
