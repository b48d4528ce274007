// Phi_AR against its closed form, and the reported phi against its controls (DESIGN.md section 13):
// i.i.d. noise, lockstep, independent blocks, and phase-randomised surrogates of the same window.
import { describe, expect, test } from 'vitest'
import { rng } from '../util/rng.js'
import {
  bipartitionPhi,
  ConsciousnessLevel,
  laggedCovariance,
  levelOf,
  LEVEL_THRESHOLDS,
  phi,
  phiFromLaggedCovariance,
  surrogateOf,
} from './iit.js'

function gaussian(rand: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand())
}

/** T samples of the VAR(1) process x_t = A x_{t-1} + e_t, e_t ~ N(0, I), after a burn-in. */
function autoregressive(a: number[][], t: number, seed: number): Float64Array[] {
  const rand = rng(seed)
  const n = a.length
  let x = new Float64Array(n)
  const out: Float64Array[] = []
  for (let k = 0; k < t + 100; k++) {
    const y = Float64Array.from(a, (row) => row.reduce((s, v, j) => s + v * x[j], gaussian(rand)))
    if (k >= 100) out.push(y)
    x = y
  }
  return out
}

/** The exact joint covariance of (x_t, x_{t-1}) for that process, standardised (Lyapunov by iteration). */
function exactLagged(a: number[][]): Float64Array {
  const n = a.length
  const mul = (p: number[][], q: number[][]) => p.map((row) => q[0].map((_, j) => row.reduce((s, v, k) => s + v * q[k][j], 0)))
  const tr = (p: number[][]) => p[0].map((_, j) => p.map((row) => row[j]))
  let s: number[][] = a.map((row, i) => row.map((_, j) => (i === j ? 1 : 0)))
  for (let it = 0; it < 2000; it++) s = mul(mul(a, s), tr(a)).map((row, i) => row.map((v, j) => v + (i === j ? 1 : 0)))
  const g = mul(a, s) // Cov(x_t, x_{t-1})
  const j = new Float64Array(4 * n * n)
  for (let p = 0; p < n; p++) {
    for (let q = 0; q < n; q++) {
      const d = Math.sqrt(s[p][p] * s[q][q])
      j[p * 2 * n + q] = j[(n + p) * 2 * n + n + q] = s[p][q] / d
      j[p * 2 * n + n + q] = j[(n + q) * 2 * n + p] = g[p][q] / d
    }
  }
  return j
}

const ring = (n: number, self: number, next: number) =>
  Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? self : j === (i + 1) % n ? next : 0)))
const noise = (n: number, t: number, seed: number) => {
  const rand = rng(seed)
  return Array.from({ length: t }, () => Float64Array.from({ length: n }, () => gaussian(rand)))
}

describe('Phi_AR', () => {
  test('matches the closed form for a two-unit autoregressive system (within 1e-3)', () => {
    // x_t = A x_{t-1} + e, Sigma_e = I. Stationary covariance S from S = A S A' + I (three linear
    // equations in s11, s12, s22, solved by Cramer's rule); Phi_AR = I(X) - I(x1) - I(x2) with
    // I(X) = 1/2 ln(det S / det Sigma_e) and I(xi) = -1/2 ln(1 - rho_i^2), rho_i = (A S)_ii / s_ii.
    for (const [a11, a12, a21, a22] of [
      [0.4, 0.3, 0.2, 0.5],
      [0.1, 0.8, -0.3, 0.2],
      [0.5, 0, 0, 0.7],
    ]) {
      const m = [
        [1 - a11 * a11, -2 * a11 * a12, -a12 * a12],
        [-a11 * a21, 1 - a11 * a22 - a12 * a21, -a12 * a22],
        [-a21 * a21, -2 * a21 * a22, 1 - a22 * a22],
      ]
      const det3 = (x: number[][]) =>
        x[0][0] * (x[1][1] * x[2][2] - x[1][2] * x[2][1]) -
        x[0][1] * (x[1][0] * x[2][2] - x[1][2] * x[2][0]) +
        x[0][2] * (x[1][0] * x[2][1] - x[1][1] * x[2][0])
      const solve = (col: number) => det3(m.map((row, i) => row.map((v, k) => (k === col ? [1, 0, 1][i] : v)))) / det3(m)
      const [s11, s12, s22] = [solve(0), solve(1), solve(2)]
      const rho1 = (a11 * s11 + a12 * s12) / s11
      const rho2 = (a21 * s12 + a22 * s22) / s22
      const closed = 0.5 * Math.log(s11 * s22 - s12 * s12) + 0.5 * Math.log(1 - rho1 ** 2) + 0.5 * Math.log(1 - rho2 ** 2)

      const exact = phiFromLaggedCovariance(
        exactLagged([
          [a11, a12],
          [a21, a22],
        ]),
        2,
      )
      expect(Math.abs(exact.phi - closed)).toBeLessThan(1e-3)
      // and estimated from 100,000 samples, within sampling error
      const est = phi(
        autoregressive(
          [
            [a11, a12],
            [a21, a22],
          ],
          100_000,
          7,
        ),
        { surrogates: 0 },
      )
      expect(Math.abs(est.phi_ar - closed)).toBeLessThan(0.01)
    }
  })

  test('two independent coupled blocks: exactly 0 at the cut between them; joined, well above 0', () => {
    // two rings of 6, each unit driven by its neighbour within its own ring; joined, one ring of 12
    const apart = Array.from({ length: 12 }, (_, i) =>
      Array.from({ length: 12 }, (_, j) => (i === j ? 0.2 : j === (i < 6 ? (i + 1) % 6 : 6 + ((i - 5) % 6)) ? 0.7 : 0)),
    )
    const r = phiFromLaggedCovariance(exactLagged(apart), 12)
    expect(Math.abs(r.phi)).toBeLessThan(1e-6)
    expect(r.cut).toEqual([0, 1, 2, 3, 4, 5])
    // control: the same units and links, but one ring
    expect(phiFromLaggedCovariance(exactLagged(ring(12, 0.2, 0.7)), 12).phi).toBeGreaterThan(0.5)
    // from 32-sample windows, the blocks apart read dormant in at least 95% of 60 windows
    const reads = Array.from({ length: 60 }, (_, s) => phi(autoregressive(apart, 32, 100 + s)))
    expect(reads.filter((x) => x.level === ConsciousnessLevel.Dormant).length).toBeGreaterThanOrEqual(57)
  })

  test('does not depend on how the units are labelled: the MIB, Phi_AR and the null alike', () => {
    const samples = autoregressive(ring(12, 0.2, 0.7), 128, 3)
    const a = phi(samples)
    expect(a.phi).toBeGreaterThan(0) // a window with something above its null, so every figure is exercised
    expect(a.bipartitions_evaluated).toBe(2 ** 11 - 1)
    for (const seed of [1, 2, 3]) {
      const shuffle = rng(seed)
      const perm = Array.from({ length: 12 }, (_, i) => i)
      for (let i = 11; i > 0; i--) {
        const k = Math.floor(shuffle() * (i + 1))
        ;[perm[i], perm[k]] = [perm[k], perm[i]]
      }
      const b = phi(samples.map((row) => Float64Array.from(perm, (p) => row[p])))
      for (const key of ['phi', 'phi_ar', 'null_level', 'null_mean'] as const) expect(Math.abs(b[key] - a[key])).toBeLessThan(1e-9)
      const mapped = b.cut.map((i) => perm[i]).sort((x, y) => x - y)
      const complement = Array.from({ length: 12 }, (_, i) => i).filter((i) => !mapped.includes(i))
      expect([mapped, complement]).toContainEqual(a.cut)
    }
    // control: the null is a random draw (another seed moves it), so its agreement above is the order's doing
    expect(Math.abs(phi(samples, { seed: 2 }).null_level - a.null_level)).toBeGreaterThan(1e-3)
  })

  test('above 16 units the heuristic finds the planted weakest cut', () => {
    const n = 20
    const a = Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? 0.2 : i < 10 === j < 10 ? 0.06 : 0.002)))
    const j = exactLagged(a)
    const r = phiFromLaggedCovariance(j, n)
    expect(r.method).toBe('spectral')
    const blocks = Array.from({ length: 10 }, (_, i) => i)
    expect([blocks, blocks.map((i) => i + 10)]).toContainEqual(r.cut)
    expect(r.phi).toBeCloseTo(bipartitionPhi(j, n, blocks), 10)
  })
})

describe('phi against its null (12 units x 32 samples, the publisher window)', () => {
  test("a surrogate keeps each unit's mean and circular autocovariance, and nothing between units", () => {
    for (const t of [31, 32]) {
      const x = autoregressive(ring(3, 0.5, 0.4), t, 4)
      const y = surrogateOf(x, rng(5))
      const auto = (w: ArrayLike<number>[], i: number, lag: number) => w.reduce((s, row, k) => s + row[i] * w[(k + lag) % t][i], 0)
      for (let i = 0; i < 3; i++) {
        expect(y.reduce((s, row) => s + row[i], 0)).toBeCloseTo(
          x.reduce((s, row) => s + row[i], 0),
          9,
        )
        for (const lag of [0, 1, 5]) expect(auto(y, i, lag)).toBeCloseTo(auto(x, i, lag), 8)
      }
      // the units' phases were drawn apart: their cross-products no longer match the window's
      const cross = (w: ArrayLike<number>[]) => w.reduce((s, row) => s + row[0] * row[1], 0)
      expect(Math.abs(cross(y) - cross(x))).toBeGreaterThan(1e-3)
    }
  })

  test('i.i.d. noise reads dormant in at least 95% of 500 windows, though its raw Phi_AR is far from 0', () => {
    const reads = Array.from({ length: 500 }, (_, s) => phi(noise(12, 32, 1000 + s), { seed: s + 1 }))
    const dormant = reads.filter((r) => r.level === ConsciousnessLevel.Dormant).length
    expect(dormant).toBeGreaterThanOrEqual(475)
    // the control: without the surrogates, the estimator's bias alone would read far above the thresholds
    const raw = reads.reduce((s, r) => s + r.phi_ar, 0) / reads.length
    expect(raw).toBeGreaterThan(1)
    // the null at the window's own cut sits above that cut's value (the least of all cuts): conservative
    expect(reads.reduce((s, r) => s + r.null_mean, 0) / reads.length).toBeGreaterThan(raw)
  }, 300_000)

  test('lockstep reads phi < 0.05: every unit the same signal, with or without a little noise', () => {
    for (let s = 0; s < 20; s++) {
      const rand = rng(s)
      const [w, p] = [0.2 + rand(), 6 * rand()]
      const same = Array.from({ length: 32 }, (_, k) => new Float64Array(12).fill(Math.sin(w * k + p)))
      expect(phi(same).phi).toBeLessThan(0.05)
      const noisy = same.map((row) => row.map((v) => v + 0.01 * gaussian(rand)))
      expect(phi(noisy).phi).toBeLessThan(0.05)
    }
  })

  test('a field that does not change reads 0 (a constant unit carries nothing)', () => {
    const still = Array.from({ length: 32 }, () => Float64Array.from({ length: 12 }, (_, i) => Math.sin(i)))
    expect(phi(still)).toMatchObject({ phi: 0, level: ConsciousnessLevel.Dormant, phi_ar: 0 })
    const oneStill = noise(12, 32, 5).map((row) => ((row[3] = 0.5), row))
    expect(phi(oneStill).phi).toBe(0)
  })

  test('a coupled system reads well above its surrogates; the same units uncoupled do not', () => {
    // a ring of 12 units, each driven by its neighbour (exact Phi_AR 0.65 nats), 256-sample windows:
    // at 32 samples the test has almost no power (docs/consciousness.md gives the figures)
    const exact = phiFromLaggedCovariance(exactLagged(ring(12, 0.2, 0.7)), 12).phi
    expect(exact).toBeGreaterThan(0.6)
    const coupled = Array.from({ length: 6 }, (_, s) => phi(autoregressive(ring(12, 0.2, 0.7), 256, 200 + s)))
    // control: each unit keeps its own memory (same self-coupling), no neighbour
    const apart = Array.from({ length: 6 }, (_, s) => phi(autoregressive(ring(12, 0.2, 0), 256, 200 + s)))
    for (const r of coupled) expect(r.phi_ar).toBeGreaterThan(r.null_level)
    const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[xs.length >> 1]
    expect(median(coupled.map((r) => r.phi))).toBeGreaterThan(0.3)
    expect(coupled.every((r) => r.level !== ConsciousnessLevel.Dormant)).toBe(true)
    expect(apart.filter((r) => r.level === ConsciousnessLevel.Dormant).length).toBeGreaterThanOrEqual(5)
  })
})

describe('levels', () => {
  test('follow the documented thresholds', () => {
    expect(levelOf(0)).toBe(ConsciousnessLevel.Dormant)
    for (const [level, threshold] of LEVEL_THRESHOLDS) {
      expect(levelOf(threshold)).toBe(level)
      expect(levelOf(threshold - 1e-9)).not.toBe(level)
    }
  })

  test('a report serializes to JSON and back', () => {
    const r = phi(noise(4, 40, 9), { surrogates: 3 })
    expect(JSON.parse(JSON.stringify(r))).toEqual(r)
    expect(
      laggedCovariance(
        [
          [1, 2],
          [1, 2],
          [1, 2],
        ],
        1,
      ),
    ).toBeNull()
  })
})
