// The candidates a field's perturbation may act on (candidateTable, the twin of the table shaders/components.wgsl
// `rank` writes; engine/gpu/components.test.ts holds the two to the same words), against detection on real
// windows and on parts made to sit either side of each rule.
import { expect, test } from 'vitest'
import { randomGenomeWindows } from '../../bench/discovery.js'
import { MaterialCatalog } from '../field/materials.js'
import { candidateTable, CANDIDATES, type FieldScale, RULES_AS_RATIOS } from './candidates.js'
import { CLASS_RULES, detect, listedTop, shapeSums } from './detect.js'
import type { TopPart } from './sums.js'

test.each([
  ['europium_crystal', 64],
  ['metamaterial', 48],
] as const)(
  "detection's first structure is one of the candidates wherever they are complete, over every listed part, planned on the same sums (%s, N = %i)",
  async (name, n) => {
    const windows = await randomGenomeWindows(new MaterialCatalog().get(name), n, 24, 3)
    let found = 0
    for (const w of windows) {
      const c = listedTop(w.spectra.stability(), n, w.later)?.candidates
      const [first] = await detect(w.spectra, w.later, 1)
      if (!c?.complete || !first) continue
      found++
      const { cells, sx, sy, sxx, syy, sxy, radii } = shapeSums(first.cells, n)
      expect(c.parts.find((p) => p.root === first.cells[0])).toEqual({
        root: first.cells[0],
        sums: { cells, sx, sy, sxx, syy, sxy, radii },
      })
    }
    expect(found).toBeGreaterThan(windows.length / 2)
  },
)

const N = 32
/** A square part of side `side` at (x, y), holding `mass`, `kept` of it in the later window (in the same units, one sample). */
function square(x: number, y: number, side: number, mass: number, kept: number): TopPart {
  const cells = Array.from({ length: side * side }, (_, k) => (y + Math.floor(k / side)) * N + x + (k % side))
  return { root: cells[0], cells: cells.length, mass, shape: shapeSums(cells, N), later: { units: kept, ab: 0, aa: 0, bb: 0 } }
}
const TOTAL = 40_000
/** A field of side N, total `total`, whose units (the total's, a mass's, the later sums') are all 1, and one sample taken. */
const scale = (total = TOTAL): FieldScale => ({ n: N, taken: 1, total, totalUnit: 1, massUnit: 1, laterUnit: 1 })
const roots = (parts: TopPart[], f = scale()) => {
  const c = candidateTable(parts, f)
  return { roots: c.parts.map((p) => p.root), complete: c.complete }
}

test("the rules' ratios are CLASS_RULES' bounds", () => {
  const { persists, contrast, fieldWide, compact } = RULES_AS_RATIOS
  expect([Number(persists[0]) / Number(persists[1]), Number(contrast[0]) / Number(contrast[1]), 1 / fieldWide, 1 / compact]).toEqual([
    CLASS_RULES.persists,
    CLASS_RULES.contrast,
    CLASS_RULES.field_wide,
    CLASS_RULES.compact,
  ])
})

test("the candidates: every part that holds (sustain and contrast, as detection's holds), in rank order over every listed part, to the first field-wide or compact one; complete unless more hold than the table has room for", () => {
  // 36 cells (3.5% of the field: neither field-wide nor compact), 9 (compact), 225 (22%: field-wide)
  const [mid, mid2, mid3, mid4, mid5] = [0, 8, 16, 24].map((x) => square(x, 0, 6, 3000, 3000)).concat(square(0, 20, 6, 3000, 3000))
  const compact = square(0, 10, 3, 2000, 2000)
  const wide = square(10, 10, 15, 20_000, 20_000)
  expect(roots([mid, compact, mid2])).toEqual({ roots: [mid.root, compact.root], complete: true })
  expect(roots([mid, wide, compact])).toEqual({ roots: [mid.root, wide.root], complete: true })
  // the sustain's rule at its edge: 0.6 of the mass kept holds, a unit less does not
  const edge = (kept: number) => square(0, 0, 6, 5000, kept)
  expect(roots([edge(3000), compact]).roots).toEqual([mid.root, compact.root])
  expect(roots([edge(2999), compact]).roots).toEqual([compact.root])
  // the contrast's: mean inside 1.5 times the mean outside holds (36 cells of 1,024, total 40,000)
  const contrast = (mass: number) => square(0, 0, 6, mass, mass)
  const atEdge = (1.5 * 36 * TOTAL) / (1024 - 36 + 1.5 * 36)
  expect(roots([contrast(Math.ceil(atEdge)), compact]).roots).toEqual([mid.root, compact.root])
  expect(roots([contrast(Math.floor(atEdge)), compact]).roots).toEqual([compact.root])
  // nothing outside the part: the host's ratio is 1, which does not hold
  expect(roots([contrast(TOTAL)]).roots).toEqual([])
  // a part that fades, then one that holds: the one that holds, though it is not the part of most mass
  expect(roots([square(0, 0, 6, 9000, 100), compact])).toEqual({ roots: [compact.root], complete: true })
  // every part holding and none decided: complete where the table holds them all, not where one more holds
  expect(CANDIDATES).toBe(4)
  expect(roots([mid, mid2, mid3, mid4])).toEqual({ roots: [mid.root, mid2.root, mid3.root, mid4.root], complete: true })
  expect(roots([mid, mid2, mid3, mid4, mid5])).toEqual({ roots: [mid.root, mid2.root, mid3.root, mid4.root], complete: false })
  // one that does not hold past a full table takes no room
  expect(roots([mid, mid2, mid3, mid4, square(0, 20, 6, 3000, 10)]).complete).toBe(true)
  // no later sums' unit (their peak was 0, NaN or infinite): nothing holds
  expect(roots([mid, compact], { ...scale(), laterUnit: 0 })).toEqual({ roots: [], complete: true })
})

test("each rule's bound moved by 2^-20 either way: a part that may hold is a candidate, and only one that surely holds ends the list; past 2^53 none ends it", () => {
  // a field-wide part of mass 5 x 2^21 (the sustain's bound 0.6 is 3 x 2^21 kept), a compact one that holds after it
  const M = 5 * 2 ** 21
  const wide = (kept: number) => square(10, 10, 15, M, kept)
  const small = square(0, 0, 3, 2 ** 19, 2 ** 19)
  const f = scale(2 * M)
  // 0.6 (1 + 2^-20) of the mass and more: surely holds, and ends the list
  expect(roots([wide(3 * 2 ** 21 + 6), small], f)).toEqual({ roots: [wide(0).root], complete: true })
  // within 2^-20 of 0.6 either way: may hold (the host's float64 may say either), so the compact part after it too
  for (const kept of [3 * 2 ** 21 + 5, 3 * 2 ** 21, 3 * 2 ** 21 - 6])
    expect(roots([wide(kept), small], f).roots).toEqual([wide(0).root, small.root])
  // under 0.6 (1 - 2^-20): not a candidate
  expect(roots([wide(3 * 2 ** 21 - 7), small], f).roots).toEqual([small.root])
  // the later sums' unit twice the mass's and two samples: the same sustain, the same answers
  const twice = { ...f, laterUnit: 2, taken: 2 }
  expect(roots([wide(3 * 2 ** 21 + 6), small], twice).roots).toEqual([wide(0).root])
  expect(roots([wide(3 * 2 ** 21 - 7), small], twice).roots).toEqual([small.root])
  // a total past 2^53, which the host rounds: the wide part may hold, and ends nothing
  const huge = { ...f, total: 2 ** 53, massUnit: 2 ** 30, totalUnit: 2 ** 30 }
  const heavy = (kept: number) => square(10, 10, 15, 2 ** 52, kept)
  expect(roots([heavy(2 ** 52), { ...small, mass: 2 ** 40, later: { units: 2 ** 40, ab: 0, aa: 0, bb: 0 } }], huge).roots).toEqual([
    heavy(0).root,
    small.root,
  ])
})
