// Reputation and the ledger chain: Brier scores against hand-computed values, the forecast extraction,
// and a chain that names the first altered entry.
import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { entryText, GENESIS, verifyChain, type LedgerEntry } from './ledger.js'
import { brier, reputation, SHRINK_STAKE, traderForecast } from './reputation.js'

const sha = (s: string) => createHash('sha256').update(s).digest('hex')

describe('Brier reputation', () => {
  it('scores a forecast against the outcome: 0 for certainty that was right, 2 for certainty that was wrong', () => {
    expect(brier([1, 0], [1, 0])).toBe(0)
    expect(brier([0, 1], [1, 0])).toBe(2)
    expect(brier([0.7, 0.3], [1, 0])).toBeCloseTo(0.18, 12)
  })

  it("a trader's forecast is the price their trades left, time-weighted to the close", () => {
    // moved to 0.8 at t=0, then to 0.6 at t=30; closes at t=40
    expect(
      traderForecast(
        [
          { t: 0, p: [0.8, 0.2] },
          { t: 30, p: [0.6, 0.4] },
        ],
        40,
      )[0],
    ).toBeCloseTo(0.75, 12)
  })

  it('skill beats the uniform forecast only when the forecasts were better than 1/n, weighted by stake and shrunk by SHRINK_STAKE', () => {
    const good = reputation([
      { forecast: [0.9, 0.1], outcome: [1, 0], stake: 10_000 },
      { forecast: [0.2, 0.8], outcome: [0, 1], stake: 30_000 },
    ])
    expect(good.skill).toBeCloseTo((10_000 * (0.5 - 0.02) + 30_000 * (0.5 - 0.08)) / (40_000 + SHRINK_STAKE), 12)
    expect(good.mean_brier).toBeCloseTo((10_000 * 0.02 + 30_000 * 0.08) / 40_000, 12)
    expect(good.staked).toBe(40_000)
    expect(reputation([{ forecast: [0.1, 0.9], outcome: [1, 0], stake: 100 }]).skill).toBeLessThan(0)
    expect(reputation([])).toEqual({ skill: 0, mean_brier: null, markets: 0, staked: 0 })
  })

  it('a dust bet, however well placed, earns next to nothing; the same forecast with money behind it does', () => {
    // the gaming case: 5 minor units on a certainty that came true
    const dust = reputation([{ forecast: [1, 0], outcome: [1, 0], stake: 5 }])
    const staked = reputation([{ forecast: [0.8, 0.2], outcome: [1, 0], stake: 20_000 }])
    expect(dust.skill).toBeLessThan(0.001)
    expect(staked.skill).toBeGreaterThan(0.2)
  })
})

describe('ledger chain', () => {
  const chain = (): LedgerEntry[] => {
    const out: LedgerEntry[] = []
    let prev = GENESIS
    for (let seq = 1; seq <= 5; seq++) {
      const e = {
        seq,
        ts: `2026-11-21T00:00:0${seq}.000Z`,
        kind: 'trade' as const,
        agent_id: 'a',
        market_id: 'MKT-000001',
        amount: -seq * 10,
        detail: '{"shares":1}',
        prev_hash: prev,
      }
      prev = sha(entryText(e))
      out.push({ ...e, hash: prev })
    }
    return out
  }

  it('verifies an untouched chain', () => {
    expect(verifyChain(chain(), sha)).toMatchObject({ ok: true, entries: 5 })
  })

  it('names the first altered entry, whatever field was changed', () => {
    const c = chain()
    c[2] = { ...c[2], amount: -1 }
    expect(verifyChain(c, sha)).toMatchObject({ ok: false, first_bad: 3 })
    const d = chain()
    d.splice(1, 1)
    expect(verifyChain(d, sha)).toMatchObject({ ok: false, first_bad: 3 })
  })
})
