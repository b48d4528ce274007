// LMSR against its closed forms, and properties over random trade sequences (fast-check): prices sum
// to 1, the cost of a path depends only on its end, and no sequence of trades makes money from nothing.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  cost,
  escrowMinor,
  MINOR_PER_UNIT,
  onShareGrid,
  payoutFor,
  payoutPerShare,
  prices,
  quote,
  SHARE_STEP,
  sharesFor,
  timeWeighted,
  tradeCost,
} from './lmsr.js'

const zeros = (n: number) => new Array<number>(n).fill(0)

describe('LMSR closed forms', () => {
  it('opening cost is b ln n, and the escrow is it in minor units rounded up', () => {
    for (const n of [2, 3, 7, 32]) {
      expect(cost(zeros(n), 100)).toBeCloseTo(100 * Math.log(n), 10)
      expect(escrowMinor(100, n)).toBe(Math.ceil(100 * Math.log(n) * 100))
    }
    expect(escrowMinor(100, 2)).toBe(6932) // 69.3147... units
  })

  it('prices are the softmax of q / b', () => {
    const p = prices([10, 0, -5], 20)
    const z = Math.exp(0.5) + 1 + Math.exp(-0.25)
    expect(p[0]).toBeCloseTo(Math.exp(0.5) / z, 14)
    expect(p[2]).toBeCloseTo(Math.exp(-0.25) / z, 14)
  })

  it('a small buy costs b ln((e^(1/b) + 1) / 2) and is rounded up to the minor unit', () => {
    const exact = 100 * Math.log((Math.exp(1 / 100) + 1) / 2) // 0.5012... units
    expect(tradeCost([0, 0], 100, 0, 1)).toBeCloseTo(exact, 12)
    expect(quote([0, 0], 100, 0, 1).cost).toBe(Math.ceil(exact * MINOR_PER_UNIT))
    expect(quote([0, 0], 100, 0, 1).cost).toBe(51)
  })

  it('a tiny trade keeps its precision where the difference of two costs would not', () => {
    const q = [1e7, 1e7 + 3]
    const exact = 1e-6 * prices(q, 50)[0] // first order in delta
    expect(Math.abs(tradeCost(q, 50, 0, 1e-6) - exact) / exact).toBeLessThan(1e-6)
    expect(Math.abs(cost([q[0] + 1e-6, q[1]], 50) - cost(q, 50) - exact) / exact).toBeGreaterThan(1e-3)
  })

  it("the maker's worst-case loss is at most b ln n: the escrow plus what traders paid covers any winner", () => {
    const q = zeros(4)
    let paid = 0
    for (const [i, s] of [
      [0, 500],
      [0, 900],
      [0, 2000],
    ] as const) {
      const r = quote(q, 50, i, s)
      paid += r.cost
      q[i] = r.q[i]
    }
    const payout = q[0] * MINOR_PER_UNIT
    expect(payout - paid).toBeLessThanOrEqual(escrowMinor(50, 4))
    expect(payout - paid).toBeGreaterThan(escrowMinor(50, 4) - 5) // and it is nearly reached
  })

  it('buy then sell nets zero within one minor unit', () => {
    const buy = quote([3, -2, 7], 40, 1, 25)
    const sell = quote(buy.q, 40, 1, -25)
    expect(buy.cost + sell.cost).toBeGreaterThanOrEqual(0)
    expect(buy.cost + sell.cost).toBeLessThanOrEqual(1)
  })

  it('a huge buy (delta / b beyond exp range) costs about delta', () => {
    expect(tradeCost([0, 0], 1, 0, 1000)).toBeCloseTo(1000 - Math.log(2), 8)
  })

  it('the time-weighted price of a step function, and what a share pays', () => {
    const pts = [
      { t: 10, p: [0.8, 0.2] },
      { t: 15, p: [0.6, 0.4] },
    ]
    expect(timeWeighted(pts, [0.5, 0.5], 0, 20)).toEqual([0.5 * 0.5 + 0.8 * 0.25 + 0.6 * 0.25, 0.5 * 0.5 + 0.2 * 0.25 + 0.4 * 0.25])
    expect(timeWeighted(pts, [0.5, 0.5], 12, 12)).toEqual([0.8, 0.2])
    expect(payoutPerShare([1, 0])).toEqual([100, 0])
    expect(payoutPerShare([0.337, 0.663])).toEqual([33, 66])
  })
})

const trade = (n: number) =>
  fc.record({ i: fc.integer({ min: 0, max: n - 1 }), s: fc.integer({ min: -400, max: 400 }).filter((s) => s !== 0) })
const market = fc
  .integer({ min: 2, max: 32 })
  .chain((n) =>
    fc.record({ n: fc.constant(n), b: fc.double({ min: 1, max: 5000, noNaN: true }), trades: fc.array(trade(n), { maxLength: 30 }) }),
  )

describe('LMSR properties', () => {
  it('prices sum to 1 and lie in [0, 1] after any trades', () => {
    fc.assert(
      fc.property(market, ({ n, b, trades }) => {
        const q = zeros(n)
        for (const { i, s } of trades) q[i] += s
        const p = prices(q, b)
        expect(Math.abs(p.reduce((a, x) => a + x, 0) - 1)).toBeLessThan(1e-12)
        for (const x of p) expect(x >= 0 && x <= 1).toBe(true)
      }),
    )
  })

  it('path independence: the summed trade costs equal C(end) - C(start), in any order', () => {
    fc.assert(
      fc.property(market, ({ n, b, trades }) => {
        const q = zeros(n)
        let sum = 0
        for (const { i, s } of trades) {
          sum += tradeCost(q, b, i, s)
          q[i] += s
        }
        const reversed = zeros(n)
        let back = 0
        for (const { i, s } of [...trades].reverse()) {
          back += tradeCost(reversed, b, i, s)
          reversed[i] += s
        }
        const direct = cost(q, b) - cost(zeros(n), b)
        expect(Math.abs(sum - direct)).toBeLessThan(1e-7 * Math.max(1, Math.abs(direct)))
        expect(Math.abs(back - direct)).toBeLessThan(1e-7 * Math.max(1, Math.abs(direct)))
      }),
    )
  })

  it('no money from nothing: a trader who ends where they started has paid at least zero in minor units', () => {
    fc.assert(
      fc.property(market, ({ n, b, trades }) => {
        // a round trip: the trades, then each undone in a random-looking order (reverse)
        const q = zeros(n)
        let paid = 0
        for (const { i, s } of [...trades, ...trades.map(({ i, s }) => ({ i, s: -s })).reverse()]) {
          const r = quote(q, b, i, s)
          paid += r.cost
          q[i] = r.q[i]
        }
        expect(q.every((x) => Math.abs(x) < 1e-9)).toBe(true)
        expect(paid).toBeGreaterThanOrEqual(0)
      }),
    )
  })

  it('the pool covers every winner: escrow + what traders paid >= the most any outcome pays out', () => {
    fc.assert(
      fc.property(market, ({ n, b, trades }) => {
        const q = zeros(n)
        let pool = escrowMinor(b, n)
        for (const { i, s } of trades) {
          // holdings never go negative: a sell of more than the outcome holds is refused
          if (q[i] + s < 0) continue
          const r = quote(q, b, i, s)
          pool += r.cost
          q[i] = r.q[i]
        }
        for (let w = 0; w < n; w++) expect(pool).toBeGreaterThanOrEqual(q[w] * MINOR_PER_UNIT)
        const p = prices(q, b)
        const pays = payoutPerShare(p)
        expect(pool).toBeGreaterThanOrEqual(q.reduce((a, x, k) => a + x * pays[k], 0))
      }),
    )
  })

  it('spend buys the most shares on the grid whose cost is at most spend: one step more costs more', () => {
    fc.assert(
      fc.property(market, fc.integer({ min: 1, max: 2_000_000 }), fc.nat(), ({ n, b, trades }, spend, pick) => {
        const q = zeros(n)
        for (const { i, s } of trades) if (q[i] + s >= 0) q[i] = quote(q, b, i, s).q[i]
        const i = pick % n
        const d = sharesFor(q, b, i, spend)
        expect(onShareGrid(d)).toBe(d)
        if (d > 0) expect(quote(q, b, i, d).cost).toBeLessThanOrEqual(spend)
        expect(quote(q, b, i, onShareGrid(d + SHARE_STEP)).cost).toBeGreaterThan(spend)
      }),
    )
  })

  it('fractional holdings: the pool still covers every winner, paid floor(shares x payout) each', () => {
    const frac = fc.integer({ min: 2, max: 8 }).chain((n) =>
      fc.record({
        n: fc.constant(n),
        b: fc.double({ min: 1, max: 500, noNaN: true }),
        trades: fc.array(
          fc.record({ who: fc.nat(3), i: fc.nat(n - 1), s: fc.integer({ min: -40_000, max: 40_000 }).filter((s) => s !== 0) }),
          { maxLength: 30 },
        ),
      }),
    )
    fc.assert(
      fc.property(frac, ({ n, b, trades }) => {
        const q = zeros(n)
        const held = Array.from({ length: 4 }, () => zeros(n))
        let pool = escrowMinor(b, n)
        for (const { who, i, s } of trades) {
          const shares = s * SHARE_STEP * 10 // steps of 0.001 up to 400 shares
          if (onShareGrid(held[who][i] + shares) < 0) continue
          const r = quote(q, b, i, onShareGrid(shares))
          pool += r.cost
          q[i] = r.q[i]
          held[who][i] = onShareGrid(held[who][i] + shares)
        }
        for (let w = 0; w < n; w++) {
          const pays = Array.from({ length: n }, (_, k) => (k === w ? MINOR_PER_UNIT : 0))
          expect(pool).toBeGreaterThanOrEqual(held.reduce((a, h) => a + payoutFor(h, pays), 0))
        }
      }),
    )
  })
})
