// The arithmetic of the Observatory's charts and scales: round tick values on a linear or a log axis, their
// labels, and the marks a timeline draws where energy went into or out of the field.
import type { BooksType as Books } from '../engine/contracts/api.js'

/** The 1, 2 or 5 times a power of ten nearest to x (on a log scale: the cut-offs are the geometric means). */
function roundStep(x: number): number {
  const p = 10 ** Math.floor(Math.log10(x))
  const m = x / p
  return (m >= Math.sqrt(50) ? 10 : m >= Math.sqrt(10) ? 5 : m >= Math.sqrt(2) ? 2 : 1) * p
}

/** The smallest 1, 2 or 5 times a power of ten at or above x (1 for nothing): a round scale that holds x. */
export function roundUp(x: number): number {
  if (!(x > 0)) return 1
  const p = 10 ** Math.floor(Math.log10(x))
  return Number((([1, 2, 5, 10].find((m) => m * p >= x * (1 - 1e-9)) ?? 10) * p).toPrecision(1))
}

/** Round values (multiples of 1, 2 or 5 times a power of ten) spanning [lo, hi], about `count` of them; whole numbers only when `whole`. */
export function linearTicks(lo: number, hi: number, count = 5, whole = false): number[] {
  if (!(hi > lo)) return [lo]
  const step = Math.max(roundStep((hi - lo) / count), whole ? 1 : 0)
  const out: number[] = []
  for (let v = Math.ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step) out.push(Number(v.toPrecision(12)))
  return out
}

/** Powers of ten in [lo, hi] (lo > 0); over less than two decades, also 2 and 5 times them. */
export function logTicks(lo: number, hi: number): number[] {
  if (!(lo > 0) || !(hi >= lo)) return []
  const a = Math.floor(Math.log10(lo))
  const b = Math.ceil(Math.log10(hi))
  const mantissas = b - a <= 2 ? [1, 2, 5] : [1]
  const out: number[] = []
  for (let e = a; e <= b; e++) for (const m of mantissas) out.push(Number((m * 10 ** e).toPrecision(12)))
  return out.filter((v) => v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9))
}

/** A tick's label: short, with a k or M suffix for large values and exponent form for tiny ones. */
export function tickLabel(v: number): string {
  const a = Math.abs(v)
  if (a === 0) return '0'
  if (a >= 1e6) return `${Number((v / 1e6).toPrecision(3))}M`
  if (a >= 1e4) return `${Number((v / 1e3).toPrecision(3))}k`
  if (a < 1e-3) return v.toExponential(0)
  return String(Number(v.toPrecision(3)))
}

/** A place on the timeline where the books show energy put in (a write, a pulse) or taken out by a dream. */
export interface Mark {
  step: number
  kind: 'in' | 'dream'
  /** The energy put in (positive) or taken out (negative) since the sample before. */
  delta: number
}

/**
 * The marks of a timeline, from its books alone (so they hold for changes made by any client): the
 * running total `injected` rises at a write or pulse and falls where a dream's edit took energy out.
 * Changes smaller than `tolerance` of the largest energy are rounding, not events.
 */
export function marksOf(points: readonly Books[], tolerance = 1e-6): Mark[] {
  const scale = Math.max(1e-30, ...points.map((p) => Math.abs(p.energy)), ...points.map((p) => Math.abs(p.injected)))
  const out: Mark[] = []
  for (let i = 1; i < points.length; i++) {
    const delta = points[i].injected - points[i - 1].injected
    if (Math.abs(delta) > tolerance * scale) out.push({ step: points[i].step, kind: delta > 0 ? 'in' : 'dream', delta })
  }
  return out
}
