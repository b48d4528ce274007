// Brier-scored reputation. A trader's forecast in a market is the price vector their trades moved it
// to, time-weighted from their first trade to the close; the aggregate is a shrunk mean skill.
import { timeWeighted, type PricePoint } from './lmsr.js'

/** Brier score of a forecast against the resolution (one-hot, or a play market's probability vector): sum (f_i - o_i)^2, 0 best, 2 worst. */
export function brier(forecast: readonly number[], outcome: readonly number[]): number {
  return forecast.reduce((s, f, i) => s + (f - outcome[i]) ** 2, 0)
}

/**
 * A trader's forecast: after each of their trades the market's new prices stand as their forecast
 * until their next trade; the mean of that step function over [first trade, close].
 */
export function traderForecast(ownTrades: readonly PricePoint[], closedAt: number): number[] {
  const first = ownTrades[0]
  return timeWeighted(ownTrades, first.p, first.t, Math.max(first.t, closedAt))
}

/** Markets added to the skill's denominator, so that one lucky market does not top the board. */
export const SHRINK_MARKETS = 2

export interface Reputation {
  /** Shrunk mean of (Brier of the uniform forecast - the trader's Brier): > 0 beats guessing 1/n. */
  skill: number
  mean_brier: number | null
  markets: number
}

/** The aggregate over a trader's resolved markets: skill = sum (uniform - own) / (markets + SHRINK_MARKETS). */
export function reputation(scored: readonly { forecast: readonly number[]; outcome: readonly number[] }[]): Reputation {
  if (scored.length === 0) return { skill: 0, mean_brier: null, markets: 0 }
  let gain = 0
  let total = 0
  for (const { forecast, outcome } of scored) {
    const own = brier(forecast, outcome)
    gain += brier(outcome.map(() => 1 / outcome.length), outcome) - own
    total += own
  }
  return { skill: gain / (scored.length + SHRINK_MARKETS), mean_brier: total / scored.length, markets: scored.length }
}
