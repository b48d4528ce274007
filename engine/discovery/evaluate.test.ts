// The perturbation experiment of evaluate.ts: it reads the window after the perturbation, and its plan
// (erasePlan) against a scan of every cell in BigInt, and against the float64 plan it was before.
import { describe, expect, test } from 'vitest'
import type { EngineOptions } from '../field/engine.js'
import { MaterialCatalog } from '../field/materials.js'
import { createNodeEngine } from '../node.js'
import { rng } from '../util/rng.js'
import { axisOf, halves, measure, shapeSums, sideOf } from '../detect/detect.js'
import { ONE } from '../detect/placement.js'
import { erasePlan, evaluate } from './evaluate.js'
import { randomGenome } from './genome.js'

test('the perturbation is answered from the window after it: field-wide structures come back part of the way, compact ones regrow part of the way', async () => {
  const responses = async (material: string, size: number) => {
    const rand = rng(4)
    const genomes = Array.from({ length: 12 }, () => randomGenome(rand, { min_steps: 60, max_steps: 200 }))
    const open = (o: EngineOptions) => createNodeEngine({ ...o, backend: 'cpu' })
    const evaluations = await evaluate(genomes, { size, material: new MaterialCatalog().get(material), seed: 1, open })
    return evaluations.flatMap((e) => (e.structure?.response ? [e.structure.response] : []))
  }
  // Read from the window before the kick or erasure (as evolve did from 2026-11-25 to 11-27: the sums
  // collected before the later window was observed), each map is compared with itself: every basin and
  // every regrowth is 1.
  const basins = (await responses('europium_crystal', 24)).flatMap((r) => (r.basin === undefined ? [] : [r.basin]))
  expect(basins.length).toBeGreaterThanOrEqual(6)
  for (const b of basins) expect(b).toBeLessThan(0.99)
  expect(Math.min(...basins)).toBeGreaterThan(0)
  // the erasure's path (the mask, the scaling in place, the regrowth over the disc): compact structures here
  const regrowths = (await responses('metamaterial', 32)).flatMap((r) => (r.regrowth === undefined ? [] : [r.regrowth]))
  expect(regrowths.length).toBeGreaterThanOrEqual(1)
  for (const g of regrowths) expect(g).toBeLessThan(0.99)
}, 60_000)

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
      // a blob round a centre, on or off the field's edge, in index order (as detection gives a part)
      const [px, py, r] = [rand() * n, rand() * n, 1 + rand() * Math.min(8, n / 3)]
      const stretch = 0.4 + rand() * 1.6
      const part: number[] = []
      for (let y = 0; y < n; y++)
        for (let x = 0; x < n; x++) if (Math.hypot((x - px) * stretch, y - py) <= r && rand() < 0.9) part.push(y * n + x)
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
