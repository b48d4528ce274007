// The perturbation's erase plan (docs/detection.md, item 6): the disc round a part's centroid and the
// half of it erased, decided in integers from the part's sums, so that the device decides the same
// cells (shaders/erase.wgsl, its GPU twin; test: engine/gpu/kick.test.ts) and the host needs no list.
import { axisOf, sideOf } from './detect.js'
import type { PlanSums } from './sums.js'
import { ONE } from './placement.js'
import { CrystalError } from '../errors.js'

/** A field's erasure as its part's sums plan it (erasePlan): the perturbation of a part smaller than its field. */
export interface PlannedErasure {
  field: number
  sums: PlanSums
}

/**
 * The cells within reach of a part's centroid (twice its mean radius and a cell), row by row (the
 * window regrowth is measured over), and those of them on the negative side of its principal axis
 * (erased), decided in integers from its sums, as shaders/erase.wgsl decides them on the device
 * (docs/detection.md item 6): with c its cells, dX = c x - Sx and dY = c y - Sy, a cell is within
 * reach where (dX^2 + dY^2) ONE^2 <= (2 radii + c ONE)^2 (the mean radius is radii / (c ONE)), and
 * its side is `halves`' (sideOf). Only the disc's bounding box, a cell wider each way, is visited.
 */
export function erasePlan(n: number, s: PlanSums) {
  const window: number[] = []
  const erased: number[] = []
  const c = s.cells
  const reach = (2 * s.radii) / (c * ONE) + 1
  const span = (centre: number) => [Math.max(0, Math.floor(centre - reach) - 1), Math.min(n - 1, Math.ceil(centre + reach) + 1)]
  const [[x0, x1], [y0, y1]] = [span(s.sx / c), span(s.sy / c)]
  const [C, SX, SY] = [BigInt(c), BigInt(s.sx), BigInt(s.sy)]
  const A = C * BigInt(s.sxx) - SX * SX - (C * BigInt(s.syy) - SY * SY)
  const B = C * BigInt(s.sxy) - SX * SY
  const axis = axisOf(A, B)
  // where B = 0 the axis is x or y (measure's), and the side dX's or dY's sign
  const along = B === 0n ? (A >= 0n ? 'x' : 'y') : undefined
  const bound = (2 * s.radii + c * ONE) ** 2
  for (let y = y0; y <= y1; y++) {
    const dY = c * y - s.sy
    for (let x = x0; x <= x1; x++) {
      const dX = c * x - s.sx
      if (!withinReach(dX, dY, bound, s.radii, c)) continue
      window.push(y * n + x)
      const side = along === 'x' ? dX : along === 'y' ? dY : sideOf(dX, dY, axis)
      if (side < 0) erased.push(y * n + x)
    }
  }
  return { window, erased }
}

/** (dX^2 + dY^2) ONE^2 <= (2 radii + c ONE)^2 (`bound` its right side in float64): float64's where clear of its rounding, else BigInt's. */
function withinReach(dX: number, dY: number, bound: number, radii: number, c: number): boolean {
  const d = (dX * dX + dY * dY) * ONE * ONE
  if (Math.abs(d - bound) > 2 ** -40 * bound) return d < bound
  return (BigInt(dX) ** 2n + BigInt(dY) ** 2n) * BigInt(ONE) ** 2n <= BigInt(2 * radii + c * ONE) ** 2n
}

/**
 * Refuses sums no part of a field of side n could have: each a whole number from 0, 1 to n^2 cells, the
 * first moments at most cells (n - 1), the second at most cells (n - 1)^2, the radii at most cells 2 n
 * ONE. Within these the device's words hold every product its plan takes (shaders/erase.wgsl).
 */
export function requirePlanSums(field: number, n: number, s: PlanSums): void {
  const most = {
    cells: n * n,
    sx: s.cells * (n - 1),
    sy: s.cells * (n - 1),
    sxx: s.cells * (n - 1) ** 2,
    syy: s.cells * (n - 1) ** 2,
    sxy: s.cells * (n - 1) ** 2,
    radii: s.cells * 2 * n * ONE,
  }
  for (const [key, limit] of Object.entries(most)) {
    const v = s[key as keyof PlanSums]
    const least = key === 'cells' ? 1 : 0
    if (!Number.isSafeInteger(v) || v < least || v > limit)
      throw new CrystalError('bad_argument', `field ${field}'s erasure plan has ${key} ${v}, not a whole number from ${least} to ${limit}`)
  }
}
