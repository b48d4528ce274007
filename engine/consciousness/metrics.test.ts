// Metrics and the Xi signature on systems whose answers are known.
import { describe, expect, test } from 'vitest'
import { rng } from '../util/rng.js'
import { levelOf } from './iit.js'
import { KuramotoModel, lorentzianFrequencies } from './kuramoto.js'
import { differentiation, measure } from './metrics.js'

const phases = (n: number, seed: number) => {
  const rand = rng(seed)
  return Float64Array.from({ length: n }, () => 2 * Math.PI * rand())
}

describe('differentiation', () => {
  test('0 for one block, 1 for all singletons, in between for two halves', () => {
    expect(differentiation([{ size: 100, frequency: 0, r: 1 }], 100)).toBe(0)
    expect(differentiation([], 100)).toBeCloseTo(1, 12)
    expect(
      differentiation(
        [
          { size: 50, frequency: -1, r: 1 },
          { size: 50, frequency: 1, r: 1 },
        ],
        100,
      ),
    ).toBeCloseTo(Math.log(2) / Math.log(100), 12)
  })
})

describe('metrics', () => {
  test('lockstep oscillators: redundant, not integrated (phi < 0.05) and undifferentiated, so Xi is 0', () => {
    const m = new KuramotoModel(new Float64Array(120).fill(1), phases(120, 1), 2)
    m.run(1500, 0.05)
    const x = measure(m, { steps: 200, dt: 0.05 })
    expect(x.num_clusters).toBe(1)
    expect(x.mean_order).toBeGreaterThan(0.99)
    expect(x.signature.differentiation).toBe(0)
    expect(x.xi).toBe(0)
    expect(x.phi).toBeLessThan(0.05)
    expect(x.consciousness_level).toBe(levelOf(x.phi))
  })

  test('incoherent oscillators are differentiated; two locked groups are two clusters; Xi = phi x D', () => {
    const crowd = new KuramotoModel(lorentzianFrequencies(120, 2), phases(120, 2), 0)
    const c = measure(crowd, { steps: 400, dt: 0.05 })
    expect(c.signature.differentiation).toBeGreaterThan(0.9)
    // uncoupled oscillators share nothing: whatever their own dynamics, no information is integrated
    expect(c.phi).toBeLessThan(0.05)

    const w = new Float64Array(120 * 120)
    for (let i = 0; i < 120; i++) for (let j = 0; j < 120; j++) w[i * 120 + j] = i < 60 === j < 60 ? 1 : 0
    const groups = new KuramotoModel(
      Float64Array.from({ length: 120 }, (_, i) => (i < 60 ? -1 : 1)),
      phases(120, 3),
      4,
      w,
    )
    groups.run(800, 0.05)
    const g = measure(groups, { steps: 400, dt: 0.05, dreaming: true })
    expect(g.num_clusters).toBe(2)
    expect(g.signature.differentiation).toBeGreaterThan(0)
    expect(g.signature.differentiation).toBeLessThan(c.signature.differentiation)
    expect(g.xi).toBeCloseTo(g.phi * g.signature.differentiation, 12)
    expect(g.dreaming).toBe(true)
  })

  test('metrics serialize to JSON and back', () => {
    const m = new KuramotoModel(new Float64Array(20).fill(1), phases(20, 4), 1)
    const x = measure(m, { steps: 50, dt: 0.05 })
    expect(JSON.parse(JSON.stringify(x))).toEqual(x)
  })
})
