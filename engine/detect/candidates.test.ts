// The candidates a field's perturbation may act on (candidatesOf), against detection on real windows and
// on first parts made to sit either side of each rule.
import { expect, test } from 'vitest'
import { randomGenomeWindows } from '../../bench/discovery.js'
import { MaterialCatalog } from '../field/materials.js'
import { candidatesOf } from './candidates.js'
import { detect, listedTop, shapeSums, TOP_PARTS } from './detect.js'
import type { FieldTop, TopPart } from './sums.js'

test.each([
  ['europium_crystal', 64],
  ['metamaterial', 48],
] as const)(
  "detection's first structure is one of the candidates wherever they are complete, planned on the same sums (%s, N = %i)",
  async (name, n) => {
    const windows = await randomGenomeWindows(new MaterialCatalog().get(name), n, 24, 3)
    let found = 0
    for (const w of windows) {
      const c = candidatesOf(listedTop(w.spectra.stability(), n, w.later.sums), n, w.later.taken)
      const [first] = await detect(w.spectra, w.later, 1)
      if (!c.complete || !first) continue
      found++
      const { cells, sx, sy, sxx, syy, sxy, radii } = shapeSums(first.cells, n)
      expect(c.parts.find((p) => p.root === first.cells[0])).toEqual({
        root: first.cells[0],
        area: first.features.area,
        sums: { cells, sx, sy, sxx, syy, sxy, radii },
      })
    }
    expect(found).toBeGreaterThan(windows.length / 2)
  },
)

const N = 32
/** A square part of side `side` at (x, y), holding `mass` over a map of total TOTAL, `kept` of it in the later window (laterUnit 1, one sample). */
function square(x: number, y: number, side: number, mass: number, kept: number): TopPart {
  const cells = Array.from({ length: side * side }, (_, k) => (y + Math.floor(k / side)) * N + x + (k % side))
  return { root: cells[0], cells: cells.length, mass, shape: shapeSums(cells, N), later: { units: kept, ab: 0, aa: 0, bb: 0 } }
}
const TOTAL = 40_000
const field = (...parts: TopPart[]): FieldTop => ({ total: TOTAL, laterUnit: 1, parts })
const roots = (top: FieldTop) => {
  const c = candidatesOf(top, N, 1)
  return { roots: c.parts.map((p) => p.root), complete: c.complete }
}

test("the candidates: every part that holds (sustain and contrast, as detection's holds), in rank order, to the first field-wide or compact one; complete where that one is among the first parts, or they are all the field's", () => {
  // 36 cells (3.5% of the field: neither field-wide nor compact), 9 (compact), 225 (22%: field-wide)
  const [mid, mid2, mid3, mid4] = [0, 8, 16, 24].map((x) => square(x, 0, 6, 3000, 3000))
  const compact = square(0, 10, 3, 2000, 2000)
  const wide = square(10, 10, 15, 20_000, 20_000)
  expect(roots(field(mid, compact, mid2))).toEqual({ roots: [mid.root, compact.root], complete: true })
  expect(roots(field(mid, wide, compact))).toEqual({ roots: [mid.root, wide.root], complete: true })
  // the sustain's rule at its edge: 0.6 of the mass kept holds, a unit less does not
  const edge = (kept: number) => square(0, 0, 6, 5000, kept)
  expect(roots(field(edge(3000), compact)).roots).toEqual([mid.root, compact.root])
  expect(roots(field(edge(2999), compact)).roots).toEqual([compact.root])
  // the contrast's: mean inside 1.5 times the mean outside holds (36 cells of 1,024, total 40,000)
  const contrast = (mass: number) => square(0, 0, 6, mass, mass)
  const atEdge = (1.5 * 36 * TOTAL) / (1024 - 36 + 1.5 * 36)
  expect(roots(field(contrast(Math.ceil(atEdge)), compact)).roots).toEqual([mid.root, compact.root])
  expect(roots(field(contrast(Math.floor(atEdge)), compact)).roots).toEqual([compact.root])
  // a part that fades, then one that holds: the one that holds, though it is not the part of most mass
  expect(roots(field(square(0, 0, 6, 9000, 100), compact))).toEqual({ roots: [compact.root], complete: true })
  // every first part holding and none decided: past them more may hold
  expect(roots(field(mid, mid2, mid3, mid4))).toEqual({ roots: [mid.root, mid2.root, mid3.root, mid4.root], complete: TOP_PARTS > 4 })
  expect(roots(field(mid, mid2, mid3))).toEqual({ roots: [mid.root, mid2.root, mid3.root], complete: true })
  // nothing holds among the first parts, and there may be more
  expect(roots(field(...[0, 8, 16, 24].map((x) => square(x, 0, 6, 3000, 10))))).toEqual({ roots: [], complete: TOP_PARTS > 4 })
  // the host labelled the map (no first parts), or no later window was summed: nothing known
  expect(candidatesOf(undefined, N, 1)).toEqual({ parts: [], complete: false })
  expect(candidatesOf({ total: TOTAL, parts: [mid] }, N, 1)).toEqual({ parts: [], complete: false })
})
