// The coupling bridge in its three modes, and in closed loop with the oscillators.
import { describe, expect, test } from 'vitest'
import { rng } from '../util/rng.js'
import { CouplingBridge, CouplingMode, DEFAULT_BRIDGE } from './bridge.js'
import { KuramotoModel, lorentzianFrequencies } from './kuramoto.js'

describe('coupling bridge', () => {
  test('static gives K0; market scales it by 0.5 + p; the field energy scales it, capped at 2x', () => {
    const s = new CouplingBridge({ ...DEFAULT_BRIDGE, base_coupling: 2 })
    expect(s.coupling()).toBe(2)
    const m = new CouplingBridge({ ...DEFAULT_BRIDGE, mode: CouplingMode.Market, base_coupling: 2 })
    m.setMarketProbability(0.9)
    expect(m.coupling()).toBeCloseTo(2.8, 12)
    expect(() => m.setMarketProbability(1.2)).toThrow('a market probability is in [0, 1], got 1.2')
    m.listen(0.5)
    expect(m.coupling()).toBeCloseTo(1.4, 12)
    m.listen(10)
    expect(m.coupling()).toBeCloseTo(5.6, 12)
  })

  test('adaptive mode holds the order parameter: it settles where theory puts K for r* (K = 2 gamma / (1 - r*^2))', () => {
    const gamma = 0.5
    const rand = rng(3)
    const osc = new KuramotoModel(
      lorentzianFrequencies(10_000, gamma),
      Float64Array.from({ length: 10_000 }, () => 2 * Math.PI * rand()),
      0,
    )
    const bridge = new CouplingBridge({ ...DEFAULT_BRIDGE, mode: CouplingMode.Adaptive, base_coupling: 0.5, target_order: 0.6, gain: 1 })
    for (let i = 0; i < 3000; i++) {
      osc.coupling = bridge.coupling()
      osc.step(0.05)
      bridge.update(osc.order(), 0.05)
    }
    expect(Math.abs(osc.order().r - 0.6)).toBeLessThan(0.03)
    expect(Math.abs(bridge.coupling() - (2 * gamma) / (1 - 0.36))).toBeLessThan(0.1)
  })

  test('drive: a pulse placed, phased and sized by the collective phase and coherence', () => {
    const b = new CouplingBridge()
    const p = b.drive({ r: 0.8, psi: Math.PI / 2 })
    expect(p.x).toBeCloseTo(0.5, 12)
    expect(p.y).toBeCloseTo(0.75, 12)
    expect(p.amplitude).toBeCloseTo(0.4, 12)
    expect(p.phase).toBeCloseTo(Math.PI / 2, 12)
  })

  test('serializes to JSON and back', () => {
    const b = new CouplingBridge({ ...DEFAULT_BRIDGE, mode: CouplingMode.Adaptive })
    b.update({ r: 0.1, psi: 0 }, 1)
    b.listen(0.7)
    const back = CouplingBridge.fromJSON(JSON.parse(JSON.stringify(b)))
    expect(back.toJSON()).toEqual(b.toJSON())
    expect(back.coupling()).toBe(b.coupling())
  })
})
