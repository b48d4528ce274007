// Where a part's reads fall, as integers (engine/detect/placement.ts): each rule is the exact value of
// its definition (a BigInt rational's here), and the float rules it replaced agree with it except at a
// half cell's tie, which the float rules broke by their rounding.
import { describe, expect, test } from 'vitest'
import { rng } from '../util/rng.js'
import { components, shapeSums } from './detect.js'
import { modalSamples } from './modal.js'
import { blockOffsets, CIRCLE_POINTS, circleCells, ONE, type Placement, placementOf, reachBox, signatureWindow } from './placement.js'

const floorBig = (a: bigint, b: bigint) => (a >= 0n ? a / b : -((-a + b - 1n) / b))
const big = BigInt
/** Within 1e-6 of half a cell: where a float rule's rounding decided. */
const atTie = (v: number) => Math.abs(v - Math.floor(v) - 0.5) < 1e-6

/** Random placements on a field of side n: parts of 1 to `most` cells, radii up to `reach` cells. */
function placements(rand: () => number, n: number, count: number, most: number, reach: number): Placement[] {
  return Array.from({ length: count }, () => {
    // small parts often (their centroids land on halves and whole cells), and parts of many cells
    const c = 1 + Math.floor(rand() * (rand() < 0.5 ? 8 : most))
    const [sx, sy] = [0, 0].map(() => Math.floor(rand() * (n - 1) * c))
    return placementOf(n, { cells: c, sx, sy, radii: Math.floor(rand() * reach * c * ONE), edges: [0, n - 1, 0, n - 1] })
  })
}

describe("where a part's reads fall", () => {
  test('the box its mode is taken over: 1.5 radii either side of the centroid, floored and ceiled exactly (a BigInt rational), at N = 96 and near 2^53 at N = 4096; the float rule it replaced agrees', () => {
    const rand = rng(5)
    for (const [n, most] of [
      [96, 9216],
      [4096, 16_000_000],
    ]) {
      for (const p of placements(rand, n, 20_000, most, n / 2)) {
        const d = big(2 * p.c * ONE)
        const exact = (s: number): number[] => [
          Math.max(0, Number(floorBig(big(2 * s) * big(ONE) - 3n * big(p.rc), d))),
          Math.min(n - 1, Number(-floorBig(-(big(2 * s) * big(ONE) + 3n * big(p.rc)), d))),
        ]
        const box = reachBox(p)
        expect(box).toEqual([...exact(p.sx), ...exact(p.sy)])
        if (n === 96) {
          // the rule before: from the centroid as the shape's share of the side, and the mean radius
          const [cx, cy] = [p.sx, p.sy].map((s) => ((s / p.c + 0.5) / n) * n - 0.5)
          const r = p.rc / (p.c * ONE)
          const float = (v: number) => [Math.max(0, Math.floor(v - 1.5 * r)), Math.min(n - 1, Math.ceil(v + 1.5 * r))]
          expect(box).toEqual([...float(cx), ...float(cy)])
        }
      }
    }
  })

  test("a winding circle's cells: each point rounded to the nearest cell (halves up) exactly from a table of cosines, at N = 96 and N = 4096; Math.cos's points agree except at a half cell's tie; moved by whole cells, the same cells moved", () => {
    const rand = rng(6)
    let [ties, points] = [0, 0]
    for (const [n, most] of [
      [96, 9216],
      [4096, 16_000_000],
    ]) {
      for (const p of placements(rand, n, 800, most, n / 3)) {
        for (const tenths of [10, 7]) {
          const cells = circleCells(p, tenths)
          expect(cells.length).toBe(CIRCLE_POINTS)
          for (let j = 0; j < CIRCLE_POINTS; j++) {
            const a = (2 * Math.PI * j) / CIRCLE_POINTS
            // exact: round(s / c + (tenths / 10) r cos) with r = rc / (c ONE) and cos the table's (checked below)
            const table = (angle: number) => big(Math.round(Math.cos(angle) * 2 ** 30))
            const scale = big(ONE) * 2n ** 30n
            const rounded = (s: number, cos: bigint) =>
              Number(floorBig(20n * scale * big(s) + 2n * big(tenths) * big(p.rc) * cos + 10n * scale * big(p.c), 20n * scale * big(p.c)))
            const [x, y] = [rounded(p.sx, table(a)), rounded(p.sy, table(a - Math.PI / 2))]
            const inField = x >= 0 && y >= 0 && x < n && y < n
            expect(cells[j], `point ${j}`).toBe(inField ? y * n + x : -1)
            if (n !== 96) continue
            // the rule before, in float64 with Math.cos
            const r = (tenths / 10) * (p.rc / (p.c * ONE))
            const [fx, fy] = [p.sx / p.c + r * Math.cos(a), p.sy / p.c + r * Math.sin(a)]
            points++
            if (atTie(fx) || atTie(fy)) ties++
            else expect([Math.round(fx) + 0, Math.round(fy) + 0]).toEqual([x, y])
          }
        }
        // moved by whole cells (inside the field): every point moves with it
        const [dx, dy] = [3, -2]
        const moved = { ...p, sx: p.sx + dx * p.c, sy: p.sy + dy * p.c }
        const [before, after] = [circleCells(p, 10), circleCells(moved, 10)]
        for (let j = 0; j < CIRCLE_POINTS; j++) {
          const [x, y] = [before[j] % n, Math.floor(before[j] / n)]
          if (before[j] >= 0 && x + dx < n && y + dy >= 0) expect(after[j]).toBe((y + dy) * n + x + dx)
        }
      }
    }
    // the control: the float rule met ties (small parts' centroids on halves), where the exact rule decides
    expect(ties).toBeGreaterThan(0)
    expect(ties).toBeLessThan(points / 100)
    // the table is cos(j pi / 16) to 2^-30, the points counterclockwise from +x: a part of one cell at (10, 20)
    // with a radius of 2 cells: (12, 20), (10, 22), (8, 20), (10, 18); a half rounds up
    const one = placementOf(96, { cells: 1, sx: 10, sy: 20, radii: 2 * ONE, edges: [10, 10, 20, 20] })
    const circle = circleCells(one, 10)
    expect([0, 8, 16, 24].map((j) => [circle[j] % 96, Math.floor(circle[j] / 96)])).toEqual([
      [12, 20],
      [10, 22],
      [8, 20],
      [10, 18],
    ])
    // a tie float64 misses: a ring of 2,088 cells' radius at N = 4096, whose point 15 (cos 15 pi / 16) falls at
    // x = 2 exactly, where float64's sum of the centroid and the offset reads 1.99999999999977
    const wide = placementOf(4096, { cells: 8035, sx: 16_466_899, sy: 8_035_000, radii: 137_438_953_472, edges: [0, 4095, 0, 4095] })
    const offset = (10 * wide.rc * -1053110176) / (10 * wide.c * ONE * 2 ** 30)
    expect(Math.floor(wide.sx / wide.c + offset + 0.5)).toBe(1)
    expect(circleCells(wide, 10)[15] % 4096).toBe(2)
    // 0.7 of 5 cells from 10.5: 14 and 7 (13.5 and 7.0 rounded up), across the field's edge -1
    const half = placementOf(96, { cells: 2, sx: 21, sy: 0, radii: 2 * 5 * ONE, edges: [10, 11, 0, 0] })
    expect([0, 16].map((j) => circleCells(half, 7)[j] % 96)).toEqual([14, 7])
    expect(circleCells(half, 7)[24]).toBe(-1)
  })

  test("a signature's window: c times its half side is the farthest cell's distance from the centroid times c, plus c (at least c), as measured cell by cell: from the edges shapeSums takes (parts of random masks)", () => {
    const rand = rng(17)
    const plain = (n: number, cells: number[], c: number, sx: number, sy: number) => {
      let hc = c
      for (const i of cells) hc = Math.max(hc, Math.abs((i % n) * c - sx) + c, Math.abs(Math.floor(i / n) * c - sy) + c)
      return hc
    }
    let parts = 0
    for (const n of [7, 33, 96]) {
      for (const cells of components(
        Uint8Array.from({ length: n * n }, () => (rand() < 0.6 ? 1 : 0)),
        n,
      ).slice(0, 8)) {
        const sums = shapeSums(cells, n)
        const [xs, ys] = [cells.map((i) => i % n), cells.map((i) => Math.floor(i / n))]
        expect(sums.edges).toEqual([Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)])
        const { c, sx, sy } = placementOf(n, sums)
        expect(signatureWindow(placementOf(n, sums))).toEqual({ c, sx, sy, hc: plain(n, cells, c, sx, sy) })
        parts++
      }
    }
    expect(parts).toBeGreaterThan(12)
    // a single cell: half a side of one cell
    expect(signatureWindow(placementOf(9, shapeSums([40], 9)))).toEqual({ c: 1, sx: 4, sy: 4, hc: 1 })
  })

  test("a modal block's samples along a side: the float loop's cells (steps from half a step in, rounded) except at a half cell's tie, where halves round up; 8 a block where a step is a cell or more", () => {
    const rand = rng(8)
    let ties = 0
    for (let t = 0; t < 20_000; t++) {
      const c = 1 + Math.floor(rand() * (rand() < 0.5 ? 6 : 9000))
      // half sides of whole cells (steps of one cell, 8 of 2 cells) and of any fraction
      const hc = rand() < 0.3 ? (1 + Math.floor(rand() * 40)) * c : c + Math.floor(rand() * 50 * c)
      const half = hc / c
      const [block, stride] = [(2 * half) / 4, Math.max(1, (2 * half) / 32)]
      for (let b = 0; b < 4; b++) {
        const want: number[] = []
        const end = -half + (b + 1) * block
        let tie = false
        let y = -half + b * block + stride / 2
        for (; y < end; y += stride) {
          want.push(Math.round(y) + 0)
          tie ||= atTie(y) || end - y < 1e-6
        }
        tie ||= y - end < 1e-6
        const got = blockOffsets({ c, sx: 0, sy: 0, hc }, b, 4, 8)
        // exact: sample m at (start + m + 1/2) steps of 2 half / 32 from the centre where that step is a
        // cell or more (start = (b - 2) 8), else at -half + b block + 1/2 + m while within the block
        const exact: number[] = []
        if (half >= 16)
          for (let m = 0; m < 8; m++) exact.push(Number(floorBig(big(2 * hc * (2 * ((b - 2) * 8 + m) + 1) + 32 * c), big(64 * c))))
        else for (let m = 0; (2 * m + 1) * c < hc; m++) exact.push(Number(floorBig(big(-2 * hc + b * hc + 2 * c * (m + 1)), big(2 * c))))
        expect(got).toEqual(exact)
        if (tie) ties++
        else expect(got).toEqual(want)
      }
    }
    expect(ties).toBeGreaterThan(0)
    // a window of half side 8 round a whole cell: blocks of 4 cells, sampled at -7.5 .. -4.5 rounded up
    expect(blockOffsets({ c: 1, sx: 0, sy: 0, hc: 8 }, 0, 4, 8)).toEqual([-7, -6, -5, -4])
    // of half side 32: steps of 2 cells from a cell in (-31, -29, ..., -17)
    expect(blockOffsets({ c: 1, sx: 0, sy: 0, hc: 32 }, 0, 4, 8)).toEqual([-31, -29, -27, -25, -23, -21, -19, -17])
  })

  test("a modal map's samples: round its window's centre (halves up), moved by whole cells the same samples moved, counted outside the field too", () => {
    const rand = rng(9)
    const n = 64
    for (let t = 0; t < 300; t++) {
      const c = 1 + Math.floor(rand() * 40)
      const w = { c, sx: Math.floor(rand() * 40 * c), sy: Math.floor(rand() * 40 * c), hc: c + Math.floor(rand() * 30 * c) }
      const [dx, dy] = [1 + Math.floor(rand() * 10), 1 + Math.floor(rand() * 10)]
      const [a, b] = [modalSamples(n, w), modalSamples(n, { ...w, sx: w.sx + dx * c, sy: w.sy + dy * c })]
      expect(b.counts).toEqual(a.counts)
      for (let k = 0; k < 16; k++) {
        const moved = Array.from(a.cells.subarray(k ? a.ends[k - 1] : 0, a.ends[k]))
          .map((i) => [(i % n) + dx, Math.floor(i / n) + dy])
          .filter(([x, y]) => x < n && y < n)
          .map(([x, y]) => y * n + x)
        const inB = Array.from(b.cells.subarray(k ? b.ends[k - 1] : 0, b.ends[k]))
        expect(inB.filter((i) => i % n >= dx && Math.floor(i / n) >= dy)).toEqual(moved)
      }
    }
    // a centre at 10.5 (21 / 2) rounds up to 11: a half side of 8 samples from 11 - 7 = 4
    const { cells, counts } = modalSamples(32, { c: 2, sx: 21, sy: 21, hc: 16 })
    expect([cells[0] % 32, Math.floor(cells[0] / 32)]).toEqual([4, 4])
    expect(Array.from(counts)).toEqual(new Array(16).fill(16))
    // at a field's corner the samples outside are counted, not read: offsets -3.5 .. -0.5 round to -3 .. 0,
    // so 1 + 4 + 4 of a side's 16 are in the field
    const corner = modalSamples(32, { c: 1, sx: 0, sy: 0, hc: 8 })
    expect(Array.from(corner.counts)).toEqual(new Array(16).fill(16))
    expect(corner.cells.length).toBe(9 * 9)
  })
})
