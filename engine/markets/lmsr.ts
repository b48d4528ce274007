// The logarithmic market scoring rule (Hanson): cost, prices and trade quotes. Numbers in, numbers
// out, no I/O. Shares pay one currency unit (MINOR_PER_UNIT minor units) each if their outcome wins.
import { CrystalError } from '../errors.js'

/** Minor units (cents) per currency unit: money is stored and moved as integers of these. */
export const MINOR_PER_UNIT = 100
export const MIN_OUTCOMES = 2
export const MAX_OUTCOMES = 32
/** Shares move in steps of 10^-SHARE_DECIMALS: a fixed grid, so that sums of holdings replay exactly. */
export const SHARE_DECIMALS = 4
const SHARE_SCALE = 10 ** SHARE_DECIMALS
/** The smallest amount of shares a trade moves: 0.0001. */
export const SHARE_STEP = 1 / SHARE_SCALE
/** The most shares one trade moves. */
export const MAX_TRADE_SHARES = 1_000_000

/** `x` on the share grid (nearest step): sums of grid values stay on the grid instead of drifting. */
export function onShareGrid(x: number): number {
  return Math.round(x * SHARE_SCALE) / SHARE_SCALE
}

/** Whether `x` is a whole number of share steps (within float noise). */
export function isShareAmount(x: number): boolean {
  return Number.isFinite(x) && Math.abs(x * SHARE_SCALE - Math.round(x * SHARE_SCALE)) <= 1e-6
}

/** C(q) = b ln sum exp(q_i / b), by log-sum-exp so that large q/b does not overflow. In currency units. */
export function cost(q: readonly number[], b: number): number {
  let m = -Infinity
  for (const x of q) m = Math.max(m, x / b)
  let s = 0
  for (const x of q) s += Math.exp(x / b - m)
  return b * (m + Math.log(s))
}

/** Prices: the softmax of q / b; they sum to 1. */
export function prices(q: readonly number[], b: number): number[] {
  let m = -Infinity
  for (const x of q) m = Math.max(m, x / b)
  const e = q.map((x) => Math.exp(x / b - m))
  const s = e.reduce((a, x) => a + x, 0)
  return e.map((x) => x / s)
}

/**
 * C(q + delta e_i) - C(q) in currency units. The sum of exponentials changes by the factor
 * 1 + p_i expm1(delta / b), so the cost is b log1p(p_i expm1(delta / b)): exact for small trades,
 * where the difference of two large costs would cancel. A sale that takes that factor below 1/2 is
 * summed as (the other prices) + p_i e^(delta/b) instead, since 1 - p_i cancels when p_i is near 1;
 * beyond exp's range the difference of the two costs has nothing left to lose.
 */
export function tradeCost(q: readonly number[], b: number, i: number, delta: number): number {
  const x = delta / b
  if (x >= 700) {
    const next = q.slice()
    next[i] += delta
    return cost(next, b) - cost(q, b)
  }
  const p = prices(q, b)
  const s = p[i] * Math.expm1(x)
  if (s > -0.5) return b * Math.log1p(s)
  let rest = 0
  for (let j = 0; j < p.length; j++) if (j !== i) rest += p[j]
  return b * Math.log(rest + p[i] * Math.exp(x))
}

/**
 * Currency units to minor units, rounded against the trader: up for what they pay (and for what they
 * receive, which is minus a cost, so they get the smaller amount). A value within 1e-9 (relative) of
 * a whole minor unit is that unit: floating-point noise must not cost a trader a cent.
 */
export function toMinorAgainstTrader(units: number): number {
  const x = units * MINOR_PER_UNIT
  const r = Math.round(x)
  return Math.abs(x - r) <= 1e-9 * Math.max(1, Math.abs(x)) ? r : Math.ceil(x)
}

/** The opening subsidy the maker can lose at most: b ln n, in minor units rounded up (the funder pays it). */
export function escrowMinor(b: number, n: number): number {
  return Math.ceil(b * Math.log(n) * MINOR_PER_UNIT)
}

export interface Quote {
  /** Minor units the trader pays (negative: receives). */
  cost: number
  q: number[]
  prices: number[]
}

/** The quote for `shares` of outcome `i` (negative sells): the cost against the trader, the new state. */
export function quote(q: readonly number[], b: number, i: number, shares: number): Quote {
  if (!Number.isInteger(i) || i < 0 || i >= q.length)
    throw new CrystalError('bad_argument', `outcome index ${i} is not one of the market's ${q.length} outcomes`, { field: 'outcome' })
  if (!Number.isFinite(shares) || shares === 0)
    throw new CrystalError('bad_argument', `shares must be a non-zero number, got ${shares}`, { field: 'shares' })
  const next = q.slice()
  next[i] = onShareGrid(next[i] + shares)
  let c = toMinorAgainstTrader(tradeCost(q, b, i, shares))
  // a buy always costs something: a price that underflowed to 0 does not give shares away
  if (shares > 0 && c < 1) c = 1
  return { cost: c, q: next, prices: prices(next, b) }
}

/**
 * The most shares of outcome `i` that `spendMinor` minor units buy, on the share grid. Inverting
 * b log1p(p_i expm1(d / b)) = S gives d = b log1p(expm1(S / b) / p_i), rounded down to the grid (at
 * most `maxShares`); the quote rounded against the trader can still fit S a little beyond it (a cost
 * within 1e-9 of a whole minor unit is that unit) or not at it, so the answer is searched from there:
 * galloping up while it fits, then bisecting (the quote grows with the shares).
 * 0 when S buys not even one step.
 */
export function sharesFor(q: readonly number[], b: number, i: number, spendMinor: number, maxShares = MAX_TRADE_SHARES): number {
  if (!Number.isInteger(spendMinor) || spendMinor < 1)
    throw new CrystalError('bad_argument', `spend must be a whole number of minor units >= 1, got ${spendMinor}`, { field: 'spend' })
  const p = prices(q, b)[i]
  const exact = b * Math.log1p(Math.expm1(spendMinor / MINOR_PER_UNIT / b) / p)
  const cap = maxShares * SHARE_SCALE
  const fits = (steps: number) => steps === 0 || quote(q, b, i, steps / SHARE_SCALE).cost <= spendMinor
  const guess = Math.min(Math.floor(exact * SHARE_SCALE + 1e-9), cap)
  // lo fits and hi does not (or is past the cap): from the guess, gallop up, or bisect below it
  let lo = 0
  let hi = guess
  if (fits(guess)) {
    let step = 1
    for (lo = guess; lo + step <= cap && fits(lo + step); step *= 2) lo += step
    hi = Math.min(lo + step, cap + 1)
  }
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2)
    if (fits(mid)) lo = mid
    else hi = mid
  }
  return lo / SHARE_SCALE
}

/** A time series of price vectors, each holding from its time until the next. */
export interface PricePoint {
  t: number
  p: readonly number[]
}

/**
 * The time-weighted mean of a step function of price vectors over [from, to] (ms). The value before
 * the first point is `initial`. Used for a play market's resolution (its last day) and for a trader's
 * forecast (from their first trade to the close).
 */
export function timeWeighted(points: readonly PricePoint[], initial: readonly number[], from: number, to: number): number[] {
  if (!(to > from)) {
    // an empty window: the value at `to`
    let p = initial
    for (const x of points) if (x.t <= to) p = x.p
    return p.slice()
  }
  const acc = new Array<number>(initial.length).fill(0)
  let current = initial
  let t = from
  for (const x of points) {
    if (x.t <= from) {
      current = x.p
      continue
    }
    if (x.t >= to) break
    for (let k = 0; k < acc.length; k++) acc[k] += current[k] * (x.t - t)
    t = x.t
    current = x.p
  }
  for (let k = 0; k < acc.length; k++) acc[k] += current[k] * (to - t)
  return acc.map((v) => v / (to - from))
}

/**
 * What one share of each outcome pays at settlement, in minor units: the winner pays a whole unit;
 * a probability vector (a play market's rule) pays floor(p_i * 100), so the pool always covers it.
 */
export function payoutPerShare(resolution: readonly number[]): number[] {
  return resolution.map((p) => Math.floor(p * MINOR_PER_UNIT + 1e-9))
}

/** One holder's payout for their holdings (shares per outcome), in whole minor units rounded down: fractional shares leave the odd fraction of a cent with the maker. */
export function payoutFor(holdings: readonly number[], perShare: readonly number[]): number {
  let x = 0
  for (let k = 0; k < holdings.length; k++) x += holdings[k] * perShare[k]
  return Math.floor(x + 1e-6)
}
