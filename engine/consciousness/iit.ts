// Integrated information (docs/consciousness.md): Phi_AR of Barrett and Seth (2011), what a system's
// past tells of its present beyond what its parts' pasts tell of theirs, across the minimum
// information bipartition, reported only where it rises above surrogates of the same window.
// Source: A. B. Barrett, A. K. Seth, "Practical measures of integrated information for time-series
// data", PLoS Comput. Biol. 7(1) e1001052 (2011). For a Gaussian process X with lag tau and a
// bipartition B = (M1, M2):
//
//   I(M) = I(M_{t-tau}; M_t) = 1/2 ln( det S(M_t) det S(M_{t-tau}) / det S(M_t, M_{t-tau}) )   (nats)
//   phi(B) = I(X) - I(M1) - I(M2)                              (can be negative: redundant parts)
//   K(B) = min_k H(M_k),  H(M) = 1/2 ln( (2 pi e)^|M| det S(M_t) )   (the source's normalisation)
//   MIB = the bipartition with the least phi(B) / K(B);  Phi_AR = phi(MIB)
//
// The units are standardised first, so K does not depend on their scales. Estimated from a short
// window, Phi_AR is biased upward (the whole has more lagged cross terms than its parts), so the
// same cut's phi is computed on phase-randomised surrogates of the window (each unit keeps its own
// spectrum, nothing passes between units) and phi is what Phi_AR exceeds their level by, or 0.

import { lowbias32 } from '../field/noise.js'
import { rng } from '../util/rng.js'
import { fourier, type Fourier } from './fourier.js'

export const EXACT_LIMIT = 16
/** Surrogates per window: phi above all 99 is above the null at p < 0.01 (a rank test). */
export const DEFAULT_SURROGATES = 99
/** Relative ridge on the standardised covariance: identical units would make it singular. */
export const PHI_RIDGE = 1e-9

/** Levels by phi (nats above the null's level), lowest first. */
export enum ConsciousnessLevel {
  Dormant = 'dormant',
  Reactive = 'reactive',
  Aware = 'aware',
  Reflective = 'reflective',
  Lucid = 'lucid',
}

/**
 * The lowest phi of each level above Dormant, calibrated against the null (docs/consciousness.md,
 * `node scripts/phi-calibration.mjs`): Reactive sits at the 99th percentile of phi for i.i.d.
 * noise and independent modules; Aware is where a ring of known Phi_AR 0.65 reads at 128 samples.
 */
export const LEVEL_THRESHOLDS: readonly [ConsciousnessLevel, number][] = [
  [ConsciousnessLevel.Reactive, 0.1],
  [ConsciousnessLevel.Aware, 0.25],
  [ConsciousnessLevel.Reflective, 0.5],
  [ConsciousnessLevel.Lucid, 1.0],
]

export function levelOf(phi: number): ConsciousnessLevel {
  let level = ConsciousnessLevel.Dormant
  for (const [l, t] of LEVEL_THRESHOLDS) if (phi >= t) level = l
  return level
}

export interface PhiOptions {
  /** Lag in samples (default 1). */
  lag?: number
  /** Phase-randomised surrogates (default DEFAULT_SURROGATES; 0: no null, phi = max(0, Phi_AR)). */
  surrogates?: number
  /** Seed of the surrogate phases (default 1): the same window gives the same report. */
  seed?: number
}

export interface PhiReport {
  /** Phi_AR above the null's level, or 0 (nats). */
  phi: number
  level: ConsciousnessLevel
  /** Phi_AR of the window at its MIB, before the null (nats; negative for redundant parts). */
  phi_ar: number
  /** The null's level: the largest phi of the surrogates at the same cut (nats). */
  null_level: number
  /** The surrogates' mean phi at that cut (nats): the estimator's bias at this window. */
  null_mean: number
  surrogates: number
  /** The minimum information bipartition: one side's unit indices (the other side is the rest). */
  cut: number[]
  units: number
  samples: number
  lag: number
  method: 'exact' | 'spectral'
  bipartitions_evaluated: number
}

/** Sample covariance of `samples` (T rows of n units). */
export function covariance(samples: readonly ArrayLike<number>[]): Float64Array {
  return flatCovariance(flatten(samples), samples.length, samples[0]?.length ?? 0)
}

/** The rows of a window in one array, row after row (the form the surrogates are made in). */
function flatten(samples: readonly ArrayLike<number>[]): Float64Array {
  const n = samples[0]?.length ?? 0
  const x = new Float64Array(samples.length * n)
  samples.forEach((row, k) => {
    for (let i = 0; i < n; i++) x[k * n + i] = row[i]
  })
  return x
}

/** Sample covariance of t rows of m columns laid out row after row; centres `d` in place. */
function flatCovariance(d: Float64Array, t: number, m: number): Float64Array {
  const mean = new Float64Array(m)
  for (let o = 0; o < t * m; o += m) for (let i = 0; i < m; i++) mean[i] += d[o + i]
  for (let i = 0; i < m; i++) mean[i] /= t
  for (let o = 0; o < t * m; o += m) for (let i = 0; i < m; i++) d[o + i] -= mean[i]
  // the O(T m^2) loop is the surrogates' main cost: flat arrays, one division at the end
  const s = new Float64Array(m * m)
  for (let o = 0; o < t * m; o += m) {
    for (let i = 0; i < m; i++) {
      const di = d[o + i]
      for (let j = 0; j <= i; j++) s[i * m + j] += di * d[o + j]
    }
  }
  for (let i = 0; i < m; i++) {
    for (let j = 0; j <= i; j++) s[j * m + i] = s[i * m + j] /= t - 1
  }
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

/**
 * The joint covariance (2n x 2n, row-major) of (X_t, X_{t-lag}) over the window, units
 * standardised, with PHI_RIDGE on the diagonal. Null when a unit does not vary.
 */
export function laggedCovariance(samples: readonly ArrayLike<number>[], lag: number): Float64Array | null {
  return flatLaggedCovariance(flatten(samples), samples.length, samples[0]?.length ?? 0, lag)
}

/** laggedCovariance of a window of t rows of n units laid out row after row. */
function flatLaggedCovariance(x: Float64Array, t: number, n: number, lag: number): Float64Array | null {
  const mean = new Float64Array(n)
  const sd = new Float64Array(n)
  for (let o = 0; o < t * n; o += n) for (let i = 0; i < n; i++) mean[i] += x[o + i] / t
  for (let o = 0; o < t * n; o += n) for (let i = 0; i < n; i++) sd[i] += (x[o + i] - mean[i]) ** 2 / (t - 1)
  for (let i = 0; i < n; i++) {
    // a unit that does not change carries nothing (and a frozen field reads 0, not a ridge's value)
    if (!(sd[i] > 1e-24 * (1 + mean[i] * mean[i]))) return null
    sd[i] = Math.sqrt(sd[i])
  }
  // rows of (now, past), standardised
  const pairs = new Float64Array((t - lag) * 2 * n)
  for (let k = 0; k < t - lag; k++) {
    for (let i = 0; i < n; i++) {
      pairs[k * 2 * n + i] = (x[(k + lag) * n + i] - mean[i]) / sd[i]
      pairs[k * 2 * n + n + i] = (x[k * n + i] - mean[i]) / sd[i]
    }
  }
  const j = flatCovariance(pairs, t - lag, 2 * n)
  for (let i = 0; i < 2 * n; i++) j[i * 2 * n + i] += PHI_RIDGE * (j[i * 2 * n + i] || 1)
  return j
}

/** I(M_{t-lag}; M_t) from the joint covariance of (X_t, X_{t-lag}) (nats). */
export function laggedInformation(j: Float64Array, n: number, part: readonly number[]): number {
  const now = [...part]
  const past = part.map((i) => n + i)
  return 0.5 * (logDet(j, 2 * n, now) + logDet(j, 2 * n, past) - logDet(j, 2 * n, [...now, ...past]))
}

/** phi(B) = I(X) - I(A) - I(B) for the bipartition (a, the rest). */
export function bipartitionPhi(j: Float64Array, n: number, a: readonly number[]): number {
  const inA = new Set(a)
  return (
    laggedInformation(j, n, range(n)) -
    laggedInformation(j, n, a) -
    laggedInformation(
      j,
      n,
      range(n).filter((i) => !inA.has(i)),
    )
  )
}

interface Mib {
  phi: number
  cut: number[]
  method: 'exact' | 'spectral'
  evaluated: number
}

/**
 * I(M) and H(M) of every subset M of the units, indexed by bit mask. Depth first over subsets in
 * increasing unit order, so each subset's Cholesky factors are its parent's plus the new unit's
 * rows (O(m^2) per subset instead of O(m^3)); the joint factor interleaves (now, past) per unit.
 */
function subsetTable(j: Float64Array, n: number): { info: Float64Array; entropy: Float64Array } {
  const stride = 2 * n
  const info = new Float64Array(2 ** n).fill(NaN)
  const entropy = new Float64Array(2 ** n).fill(NaN)
  const units = new Int32Array(n)
  const now = new Float64Array(n * n)
  const past = new Float64Array(n * n)
  const joint = new Float64Array(4 * n * n)
  const ldNow = new Float64Array(n + 1)
  const ldPast = new Float64Array(n + 1)
  const ldJoint = new Float64Array(n + 1)
  const ln2pie = Math.log(2 * Math.PI * Math.E)
  // appends row r of the factor L (width w) of the matrix whose row/column q is J's index at(q); returns ln of the pivot
  const append = (L: Float64Array, w: number, r: number, at: (q: number) => number): number => {
    const jr = at(r) * stride
    for (let c = 0; c <= r; c++) {
      let v = j[jr + at(c)]
      for (let q = 0; q < c; q++) v -= L[r * w + q] * L[c * w + q]
      if (c < r) L[r * w + c] = v / L[c * w + c]
      else if (v > 0) L[r * w + r] = Math.sqrt(v)
      else return NaN
    }
    return 2 * Math.log(L[r * w + r])
  }
  const nowAt = (q: number) => units[q]
  const pastAt = (q: number) => n + units[q]
  const jointAt = (q: number) => (q & 1 ? n : 0) + units[q >> 1]
  const visit = (mask: number, m: number, from: number) => {
    for (let k = from; k < n; k++) {
      units[m] = k
      ldNow[m + 1] = ldNow[m] + append(now, n, m, nowAt)
      ldPast[m + 1] = ldPast[m] + append(past, n, m, pastAt)
      ldJoint[m + 1] = ldJoint[m] + append(joint, stride, 2 * m, jointAt) + append(joint, stride, 2 * m + 1, jointAt)
      const sub = mask | (1 << k)
      info[sub] = 0.5 * (ldNow[m + 1] + ldPast[m + 1] - ldJoint[m + 1])
      entropy[sub] = 0.5 * ((m + 1) * ln2pie + ldNow[m + 1])
      visit(sub, m + 1, k + 1)
    }
  }
  visit(0, 0, 0)
  return { info, entropy }
}

/** Phi_AR of a joint lagged covariance: phi at the bipartition with the least phi / K. */
export function phiFromLaggedCovariance(j: Float64Array, n: number): Mib {
  if (n < 2) return { phi: 0, cut: [], method: 'exact', evaluated: 0 }
  let best = { score: Infinity, phi: 0, cut: [] as number[] }
  let evaluated = 0
  // K <= 0 (a part of near-redundant units) would flip the ranking: such cuts rank after all others, by phi
  const rank = (phi: number, k: number) => (k > 0 ? phi / k : Number.MAX_VALUE / 2 + phi)
  if (n <= EXACT_LIMIT) {
    const { info, entropy } = subsetTable(j, n)
    const all = 2 ** n - 1
    let bestMask = 0
    // every bipartition once: masks without the last unit name the side that lacks it
    for (let mask = 1; mask < 2 ** (n - 1); mask++) {
      evaluated++
      const phi = info[all] - info[mask] - info[all ^ mask]
      const score = rank(phi, Math.min(entropy[mask], entropy[all ^ mask]))
      if (score < best.score) [best, bestMask] = [{ score, phi, cut: [] }, mask]
    }
    // a window whose covariance is not positive definite (NaN throughout) has nothing to integrate
    return { phi: Number.isFinite(best.phi) ? best.phi : 0, cut: range(n).filter((i) => bestMask & (1 << i)), method: 'exact', evaluated }
  }
  const whole = laggedInformation(j, n, range(n))
  const consider = (a: number[]) => {
    evaluated++
    const inA = new Set(a)
    const b = range(n).filter((i) => !inA.has(i))
    const phi = whole - laggedInformation(j, n, a) - laggedInformation(j, n, b)
    const h = (part: number[]) => 0.5 * (part.length * Math.log(2 * Math.PI * Math.E) + logDet(j, 2 * n, part))
    const score = rank(phi, Math.min(h(a), h(b)))
    if (score < best.score) best = { score, phi, cut: a }
  }
  consider(spectralCut(j, 2 * n, n))
  // refine: move single units across while that lowers the normalised phi (both sides non-empty)
  for (let improved = true; improved; ) {
    const current = best.score
    const from = best.cut
    for (let u = 0; u < n; u++) {
      const cut = from.includes(u) ? from.filter((x) => x !== u) : [...from, u].sort((x, y) => x - y)
      if (cut.length === 0 || cut.length === n) continue
      consider(cut)
    }
    improved = best.score < current - 1e-12
  }
  return { phi: best.phi, cut: best.cut, method: 'spectral', evaluated }
}

/**
 * phi of time series (T samples of n units) against phase-randomised surrogates of the same window.
 * The units are first put in an order of their own (by a hash of each unit's values), so the MIB
 * search, its tie-breaks and each unit's surrogate phases do not depend on how the caller lists them.
 */
export function phi(samples: readonly ArrayLike<number>[], o: PhiOptions = {}): PhiReport {
  const lag = o.lag ?? 1
  const count = o.surrogates ?? DEFAULT_SURROGATES
  const n = samples[0]?.length ?? 0
  const base = { units: n, samples: samples.length, lag, surrogates: count }
  const order = canonicalOrder(samples, n)
  const window = samples.map((row) => Float64Array.from(order, (i) => row[i]))
  const j = samples.length > lag + 1 ? laggedCovariance(window, lag) : null
  if (!j || n < 2) {
    return {
      ...base,
      phi: 0,
      level: ConsciousnessLevel.Dormant,
      phi_ar: 0,
      null_level: 0,
      null_mean: 0,
      cut: [],
      method: n <= EXACT_LIMIT ? 'exact' : 'spectral',
      bipartitions_evaluated: 0,
    }
  }
  const real = phiFromLaggedCovariance(j, n)
  const rand = rng(o.seed ?? 1)
  const nulls: number[] = []
  const f = fourier(samples.length)
  const spectra = count ? unitSpectra(window, f) : []
  for (let s = 0; s < count; s++) {
    // the surrogate's phi at the window's own MIB: a fixed cut, where the window's value was chosen as
    // the least of all cuts, so the test errs towards dormant (the least of 2^(n-1) noisy nulls would
    // sit below a modular system's one null cut and read its modules as integrated)
    const surrogate = flatLaggedCovariance(phaseRandomised(spectra, f, rand), samples.length, n, lag)
    nulls.push(surrogate ? bipartitionPhi(surrogate, n, real.cut) : 0)
  }
  const nullLevel = count ? Math.max(...nulls) : 0
  const value = Math.max(0, real.phi - nullLevel)
  return {
    ...base,
    phi: value,
    level: levelOf(value),
    phi_ar: real.phi,
    null_level: nullLevel,
    null_mean: count ? nulls.reduce((a, x) => a + x, 0) / count : 0,
    cut: real.cut.map((c) => order[c]).sort((x, y) => x - y),
    method: real.method,
    bipartitions_evaluated: real.evaluated,
  }
}

/**
 * The units sorted by a hash of their values (lowbias32 over each value's bits): a permutation of
 * the units permutes the input back to the same order. Units with equal hashes keep their order; only
 * identical units share one (short of a 1 in 2^32 collision), and swapping those changes nothing.
 */
function canonicalOrder(samples: readonly ArrayLike<number>[], n: number): number[] {
  const bits = new Float64Array(1)
  const words = new Uint32Array(bits.buffer)
  const key = range(n).map((i) => {
    let h = 0x9e3779b9
    for (const row of samples) {
      bits[0] = row[i]
      h = lowbias32(h ^ words[0])
      h = lowbias32(h ^ words[1])
    }
    return h
  })
  return range(n).sort((a, b) => key[a] - key[b])
}

type Spectrum = { amp: Float64Array; phase: Float64Array }

/** Each unit's amplitude and phase at frequencies 0..t/2 (an FFT of each unit). */
function unitSpectra(samples: readonly ArrayLike<number>[], f: Fourier): Spectrum[] {
  const t = samples.length
  const half = Math.floor(t / 2)
  const re = new Float64Array(t)
  const im = new Float64Array(t)
  return range(samples[0].length).map((i) => {
    samples.forEach((row, s) => ((re[s] = row[i]), (im[s] = 0)))
    f.forward(re, im)
    return {
      amp: Float64Array.from({ length: half + 1 }, (_, k) => Math.hypot(re[k], im[k])),
      phase: Float64Array.from({ length: half + 1 }, (_, k) => Math.atan2(im[k], re[k])),
    }
  })
}

/**
 * A surrogate window: each unit keeps its amplitude spectrum (so its own autocorrelation, and the
 * serial dependence that biases a short window's estimate) under phases drawn afresh and
 * independently per unit, so nothing passes between units. J. Theiler et al., "Testing for
 * nonlinearity in time series: the method of surrogate data", Physica D 58 (1992).
 */
function phaseRandomised(spectra: readonly Spectrum[], f: Fourier, rand: () => number): Float64Array {
  const t = f.length
  const n = spectra.length
  const half = Math.floor(t / 2)
  const out = new Float64Array(t * n)
  const re = new Float64Array(t)
  const im = new Float64Array(t)
  spectra.forEach(({ amp, phase }, i) => {
    // a real series: frequencies k and t - k are conjugate, so only 0..t/2 are drawn (the mean and,
    // for even t, the Nyquist term keep their phases) and the others mirror them
    for (let k = 0; k <= half; k++) {
      const p = k === 0 || 2 * k === t ? phase[k] : 2 * Math.PI * rand()
      re[k] = amp[k] * Math.cos(p)
      im[k] = amp[k] * Math.sin(p)
      if (k > 0) {
        re[t - k] = re[k]
        im[t - k] = -im[k]
      }
    }
    f.inverse(re, im)
    for (let s = 0; s < t; s++) out[s * n + i] = re[s]
  })
  return out
}

/** One phase-randomised surrogate of a window (what phi's null is made of). */
export function surrogateOf(samples: readonly ArrayLike<number>[], rand: () => number): Float64Array[] {
  const f = fourier(samples.length)
  const n = samples[0].length
  const flat = phaseRandomised(unitSpectra(samples, f), f, rand)
  return Array.from({ length: samples.length }, (_, k) => flat.slice(k * n, (k + 1) * n))
}

function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i)
}

/** The sign of the Fiedler vector of the |correlation| graph's Laplacian (power iteration, deflated). */
function spectralCut(s: Float64Array, stride: number, n: number): number[] {
  const w = new Float64Array(n * n)
  const degree = new Float64Array(n)
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      if (i === j) continue
      const c = Math.abs(s[i * stride + j] / Math.sqrt(s[i * stride + i] * s[j * stride + j] || 1))
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
  const cut = range(n).filter((i) => v[i] >= 0)
  return cut.length === 0 || cut.length === n ? [0] : cut
}
