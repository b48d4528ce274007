// Integrated information against closed forms and symmetries.
import { describe, expect, test } from 'vitest'
import { rng } from '../discovery/genome.js'
import { ConsciousnessLevel, covariance, levelOf, LEVEL_THRESHOLDS, mutualInformation, phi, phiFromCovariance } from './iit.js'

function gaussian(rand: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand())
}

/** A random symmetric positive definite n x n matrix. */
function randomCovariance(n: number, seed: number): Float64Array {
  const rand = rng(seed)
  const a = Float64Array.from({ length: n * n }, () => gaussian(rand))
  const s = new Float64Array(n * n)
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) for (let k = 0; k < n; k++) s[i * n + j] += (a[i * n + k] * a[j * n + k]) / n
  for (let i = 0; i < n; i++) s[i * n + i] += 0.1
  return s
}

describe('phi', () => {
  test('is zero for independent units, exactly (covariance) and from samples', () => {
    for (const n of [2, 5, 20]) {
      const s = new Float64Array(n * n)
      for (let i = 0; i < n; i++) s[i * n + i] = 1 + i
      expect(phiFromCovariance(s, n).phi).toBe(0)
    }
    const rand = rng(1)
    const samples = Array.from({ length: 20_000 }, () => [gaussian(rand), gaussian(rand), gaussian(rand), gaussian(rand)])
    expect(phi(samples).phi).toBeLessThan(0.005)
  })

  test('matches the closed form -1/2 ln(1 - rho^2) for two coupled Gaussian units', () => {
    for (const rho of [0.1, 0.5, 0.9, -0.7]) {
      const r = phiFromCovariance(Float64Array.from([1, rho, rho, 1]), 2)
      expect(r.phi).toBeCloseTo(-0.5 * Math.log(1 - rho * rho), 12)
      expect(r.method).toBe('exact')
    }
    // and from samples: x, y = rho x + sqrt(1 - rho^2) e
    const rand = rng(2)
    const samples = Array.from({ length: 50_000 }, () => {
      const x = gaussian(rand)
      return [x, 0.6 * x + 0.8 * gaussian(rand)]
    })
    expect(phi(samples).phi).toBeCloseTo(-0.5 * Math.log(1 - 0.36), 2)
  })

  test('does not depend on how the units are labelled', () => {
    const n = 9
    const s = randomCovariance(n, 3)
    const perm = [4, 0, 8, 2, 6, 1, 7, 3, 5]
    const p = new Float64Array(n * n)
    for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) p[i * n + j] = s[perm[i] * n + perm[j]]
    const a = phiFromCovariance(s, n)
    const b = phiFromCovariance(p, n)
    expect(b.phi).toBeCloseTo(a.phi, 10)
    expect(a.bipartitions_evaluated).toBe(2 ** (n - 1) - 1)
    // the weakest cut is the same set of units, relabelled
    const mapped = b.cut.map((i) => perm[i]).sort((x, y) => x - y)
    const complement = Array.from({ length: n }, (_, i) => i).filter((i) => !mapped.includes(i))
    expect([mapped, complement]).toContainEqual(a.cut)
  })

  test('above 16 units the heuristic finds a planted weakest cut', () => {
    // two blocks of 10, tightly coupled inside, weakly across: the cut between the blocks is weakest
    const n = 20
    const s = new Float64Array(n * n)
    for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) s[i * n + j] = i === j ? 1 : (i < 10) === (j < 10) ? 0.6 : 0.02
    const r = phiFromCovariance(s, n)
    expect(r.method).toBe('spectral')
    const blocks = Array.from({ length: 10 }, (_, i) => i)
    expect(r.phi).toBeCloseTo(mutualInformation(s, n, blocks), 10)
    expect([blocks, blocks.map((i) => i + 10)]).toContainEqual(r.cut)
  })

  test('levels follow the documented thresholds', () => {
    expect(levelOf(0)).toBe(ConsciousnessLevel.Dormant)
    for (const [level, threshold] of LEVEL_THRESHOLDS) {
      expect(levelOf(threshold)).toBe(level)
      expect(levelOf(threshold - 1e-9)).not.toBe(level)
    }
    expect(phiFromCovariance(Float64Array.from([1, 0.95, 0.95, 1]), 2).level).toBe(ConsciousnessLevel.Lucid)
  })

  test('a report serializes to JSON and back', () => {
    const r = phiFromCovariance(covariance([[1, 2], [2, 3.5], [3, 6.1], [4, 8]]), 2)
    expect(JSON.parse(JSON.stringify(r))).toEqual(r)
  })
})
