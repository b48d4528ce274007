// The perturbation's erase plan (erasePlan) against a scan of every cell in BigInt, and against the
// float64 plan it was before; the sums an erasure refuses (requirePlanSums). Its GPU twin's test:
// engine/gpu/kick.test.ts.
import { describe, expect, test } from 'vitest'
import { randomPart } from '../../testing/fixtures.js'
import { rng } from '../util/rng.js'
import { axisOf, halves, measure, shapeSums, sideOf } from './detect.js'
import { erasePlan, requirePlanSums } from './erase_plan.js'
import { ONE } from './placement.js'

/**
 * Every cell visited, in BigInt: the cells within reach of the centroid, (c x - Sx)^2 + (c y - Sy)^2
 * times ONE^2 at most (2 radii + c ONE)^2, and those on the negative side of the principal axis, its
 * sign as `halves` takes it (the first half's).
 */
function scanned(n: number, cells: number[]): { window: number[]; erased: number[]; tie: (cell: number) => boolean } {
  const s = shapeSums(cells, n)
  const [first] = halves(cells, n)
  const c = BigInt(s.cells)
  const bound = (2n * BigInt(s.radii) + c * BigInt(ONE)) ** 2n
  const window: number[] = []
  const erased: number[] = []
  // the side of a cell off the part: halves' rule over a part that holds it too, with the same sums, is
  // not at hand, so the side is taken from the axis alone (sideOf) only where halves cannot say
  const side = (x: number, y: number) => {
    const [dX, dY] = [s.cells * x - s.sx, s.cells * y - s.sy]
    const [C, SX, SY] = [c, BigInt(s.sx), BigInt(s.sy)]
    const A = C * BigInt(s.sxx) - SX * SX - (C * BigInt(s.syy) - SY * SY)
    const B = C * BigInt(s.sxy) - SX * SY
    return B === 0n ? (A >= 0n ? dX : dY) : sideOf(dX, dY, axisOf(A, B))
  }
  const distance = (x: number, y: number) => {
    const [dX, dY] = [c * BigInt(x) - BigInt(s.sx), c * BigInt(y) - BigInt(s.sy)]
    return (dX * dX + dY * dY) * BigInt(ONE) ** 2n
  }
  for (let y = 0; y < n; y++)
    for (let x = 0; x < n; x++) {
      if (distance(x, y) > bound) continue
      window.push(y * n + x)
      if (side(x, y) < 0) erased.push(y * n + x)
    }
  // the part's own cells fall on the sides halves puts them
  for (const cell of cells) if (window.includes(cell)) expect(erased.includes(cell)).toBe(first.includes(cell))
  // a cell exactly on the disc's edge or on the axis: where float64's rounding may fall either side
  const tie = (cell: number) => {
    const [x, y] = [cell % n, Math.floor(cell / n)]
    return distance(x, y) === bound || side(x, y) === 0
  }
  return { window, erased, tie }
}

/** The plan as it was made until 2026-12-06: float64, the disc by hypot against 2 mean_radius + 1 (plus `wider`), the side by measure's unit axis. */
function floatPlan(n: number, cells: number[], wider = 0) {
  const { axis, mean_radius, centroid_x, centroid_y } = measure(new Float32Array(n * n).fill(1), n, cells)
  const [cx, cy, reach] = [centroid_x * n - 0.5, centroid_y * n - 0.5, 2 * mean_radius + 1 + wider]
  const window: number[] = []
  const erased: number[] = []
  for (let y = 0; y < n; y++)
    for (let x = 0; x < n; x++) {
      if (Math.hypot(x - cx, y - cy) > reach) continue
      window.push(y * n + x)
      if ((x - cx) * axis[0] + (y - cy) * axis[1] < 0) erased.push(y * n + x)
    }
  return { window, erased }
}

describe('erasePlan', () => {
  test("decided in integers from the part's sums: the cells of a BigInt scan of the whole field, near edges too; the float64 plan of before but at a tie (a cell exactly on the axis or the disc's edge), where a disc a sixteenth of a cell wider is not", () => {
    const rand = rng(5)
    let [cells, wider, ties, plans] = [0, 0, 0, 0]
    for (let k = 0; k < 300; k++) {
      const n = 8 + Math.floor(rand() * 60)
      const part = randomPart(rand, n)
      if (part.length < 4) continue
      const plan = erasePlan(n, shapeSums(part, n))
      const { tie, ...exact } = scanned(n, part)
      expect(plan).toEqual(exact)
      // float64's plan parts from it only at a tie (synthetic parts have them: a column on the axis)
      const float = floatPlan(n, part)
      const apart = (a: number[], b: number[]) => [...a.filter((v) => !b.includes(v)), ...b.filter((v) => !a.includes(v))]
      const moved = [...apart(plan.window, float.window), ...apart(plan.erased, float.erased)]
      for (const cell of moved) expect(tie(cell)).toBe(true)
      ties += moved.length ? 1 : 0
      if (apart(floatPlan(n, part, 1 / 16).window, plan.window).length) wider++
      cells += plan.window.length
      plans++
    }
    // the controls: the plans were not empty, and the comparison sees a sixteenth of a cell; ties are few
    expect(cells).toBeGreaterThan(5_000)
    expect(wider).toBeGreaterThan(plans / 4)
    expect(ties).toBeLessThan(plans / 4)
  })
})

test('an erasure refuses sums no part of the field could have, naming the field, the sum and the range', () => {
  const n = 32
  const sums = shapeSums([33, 34, 65, 66], n)
  expect(() => requirePlanSums(2, n, sums)).not.toThrow()
  expect(() => requirePlanSums(2, n, { ...sums, cells: 0 })).toThrow(
    "field 2's erasure plan has cells 0, not a whole number from 1 to 1024",
  )
  expect(() => requirePlanSums(2, n, { ...sums, sx: 4 * 31 + 1 })).toThrow(
    "field 2's erasure plan has sx 125, not a whole number from 0 to 124",
  )
  expect(() => requirePlanSums(1, n, { ...sums, radii: 0.5 })).toThrow("field 1's erasure plan has radii 0.5")
  expect(() => requirePlanSums(1, n, { ...sums, sxy: -1 })).toThrow("field 1's erasure plan has sxy -1")
})
