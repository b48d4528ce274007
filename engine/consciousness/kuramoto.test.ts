// Kuramoto dynamics against what is known of them.
import { describe, expect, test } from 'vitest'
import { rng } from '../util/rng.js'
import { KuramotoModel, lorentzianFrequencies, orderParameter } from './kuramoto.js'

const phases = (n: number, seed: number) => {
  const rand = rng(seed)
  return Float64Array.from({ length: n }, () => 2 * Math.PI * rand())
}

describe('Kuramoto', () => {
  test('identical oscillators with K > 0 synchronize: r -> 1', () => {
    const m = new KuramotoModel(new Float64Array(200).fill(1), phases(200, 1), 1)
    expect(m.order().r).toBeLessThan(0.3)
    m.run(1000, 0.05)
    expect(m.order().r).toBeGreaterThan(0.999)
    expect(m.syncReport(100, 0.05)).toMatchObject({ synchronized: true, num_clusters: 1 })
  })

  test('above the critical coupling, Lorentzian frequencies give r = sqrt(1 - 2 gamma / K) for large N', () => {
    const gamma = 0.5
    for (const K of [1.5, 3]) {
      const m = new KuramotoModel(lorentzianFrequencies(20_000, gamma), phases(20_000, 2), K)
      m.run(1200, 0.05) // t = 60: past the transient
      let r = 0
      for (let k = 0; k < 200; k++) {
        m.step(0.05)
        r += m.order().r / 200
      }
      expect(Math.abs(r - Math.sqrt(1 - (2 * gamma) / K))).toBeLessThan(0.02)
    }
  })

  test('near the critical coupling (K = 1.1, K_c = 1) random Lorentzian draws settle at r = sqrt(1 - K_c / K) after a long transient', () => {
    // close to K_c the approach is slow (its rate ~ K - K_c), so the transient is t = 300; random
    // draws (not evenly spaced quantiles) carry the finite-N fluctuations a real population has.
    // dt = 0.2 is safe: RK4 carries each free rotation exactly and the coupling term is bounded by K
    const gamma = 0.5
    const K = 1.1
    const expected = Math.sqrt(1 - (2 * gamma) / K) // 0.30
    const omega = lorentzianFrequencies(4000, gamma, 0, rng(11))
    const m = new KuramotoModel(omega, phases(4000, 11), K)
    m.run(1500, 0.2)
    let r = 0
    for (let k = 0; k < 250; k++) {
      m.step(0.2)
      r += m.order().r / 250
    }
    expect(Math.abs(r - expected)).toBeLessThan(0.06)
    // the control: the same draws just below K_c stay incoherent
    const below = new KuramotoModel(omega, phases(4000, 11), 0.8)
    below.run(1500, 0.2)
    expect(below.order().r).toBeLessThan(0.1)
  })

  test('below the critical coupling, r stays near zero', () => {
    const m = new KuramotoModel(lorentzianFrequencies(20_000, 0.5), phases(20_000, 3), 0.5)
    m.run(800, 0.05)
    expect(m.order().r).toBeLessThan(0.05)
  })

  test('the mean-field and the pairwise paths agree (all-to-all weights)', () => {
    const n = 60
    const rand = rng(4)
    const omega = Float64Array.from({ length: n }, () => rand() * 2 - 1)
    const theta = phases(n, 5)
    const mean = new KuramotoModel(omega, theta, 1.3)
    const pair = new KuramotoModel(omega, theta, 1.3, new Float64Array(n * n).fill(1))
    mean.run(300, 0.02)
    pair.run(300, 0.02)
    for (let i = 0; i < n; i++) expect(Math.abs(mean.theta[i] - pair.theta[i])).toBeLessThan(1e-9)
  })

  test('two groups locked to their own frequencies are two clusters', () => {
    const omega = Float64Array.from({ length: 100 }, (_, i) => (i < 50 ? -2 : 2))
    const w = new Float64Array(100 * 100)
    for (let i = 0; i < 100; i++) for (let j = 0; j < 100; j++) w[i * 100 + j] = i < 50 === j < 50 ? 1 : 0
    const m = new KuramotoModel(omega, phases(100, 6), 4, w)
    m.run(1000, 0.02)
    const report = m.syncReport(500, 0.02)
    expect(report.num_clusters).toBe(2)
    expect(report.clusters.map((c) => c.size)).toEqual([50, 50])
    expect(report.clusters.map((c) => Math.round(c.frequency)).sort()).toEqual([-2, 2])
    expect(report.clusters.every((c) => c.r > 0.99)).toBe(true)
    expect(report.synchronized).toBe(false)
  })

  test('serializes to JSON and back', () => {
    const m = new KuramotoModel([1, 2, 3], [0.1, 0.2, 0.3], 0.7, Float64Array.from([0, 1, 1, 1, 0, 1, 1, 1, 0]))
    m.run(10, 0.1)
    const back = KuramotoModel.fromJSON(JSON.parse(JSON.stringify(m)))
    expect(back.toJSON()).toEqual(m.toJSON())
    expect(orderParameter(back.theta)).toEqual(m.order())
  })
})
