// Brier-scored reputation. A trader's forecast in a market is the price vector their trades moved it
// to, time-weighted from their first trade to the close; the aggregate is the mean skill weighted by
// what the trader staked in each market, shrunk by a fixed stake, so that dust bets weigh nothing.
// Which markets count at all (independent activity) is the store's to decide: MIN_INDEPENDENT_OWNERS.
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

/** Stake (minor units, 200.00) added to the skill's denominator: one lucky market, or a pile of dust bets, does not top the board. */
export const SHRINK_STAKE = 20_000

/** A market counts toward reputation only when traders of at least this many households (owners) traded in it: self-dealing between one's own ids earns nothing. */
export const MIN_INDEPENDENT_OWNERS = 3

export interface Reputation {
  /** Stake-weighted, shrunk mean of (Brier of the uniform forecast - the trader's Brier): > 0 beats guessing 1/n. */
  skill: number
  /** The stake-weighted mean Brier score. */
  mean_brier: number | null
  markets: number
  /** Minor units the trader put at stake in those markets (the sum of |cost| of their trades). */
  staked: number
}

export interface Scored {
  forecast: readonly number[]
  outcome: readonly number[]
  /** Minor units staked in this market (> 0). */
  stake: number
}

/** The aggregate over a trader's counted markets: skill = sum stake (uniform - own) / (sum stake + SHRINK_STAKE). */
export function reputation(scored: readonly Scored[]): Reputation {
  if (scored.length === 0) return { skill: 0, mean_brier: null, markets: 0, staked: 0 }
  let gain = 0
  let total = 0
  let staked = 0
  for (const { forecast, outcome, stake } of scored) {
    const own = brier(forecast, outcome)
    gain +=
      stake *
      (brier(
        outcome.map(() => 1 / outcome.length),
        outcome,
      ) -
        own)
    total += stake * own
    staked += stake
  }
  return { skill: gain / (staked + SHRINK_STAKE), mean_brier: staked > 0 ? total / staked : null, markets: scored.length, staked }
}
