// shaders/components.wgsl (engine/gpu/components.ts labelMaps) against its CPU twin: the labels
// labels(structureMask(map), n) makes, and each component's cells and massOf, equal on any adapter
// (integers and correctly rounded products only), over maps that make a labelling go wrong: noise near
// percolation, a spiral whose unions run against the scan, rows that would join if the edges wrapped,
// a field at rest and one with a NaN.
import { expect, test } from 'vitest'
import { gpuBackend } from '../../testing/backends.js'
import {
  axisOf,
  labels,
  LISTED,
  listedComponents,
  listedShapes,
  listedTop,
  rankedComponents,
  persistenceOf,
  sideOf,
  structureMask,
  sustainOf,
  topLists,
  topModes,
  topSums,
} from '../detect/detect.js'
import { MAX_SAMPLED_CELLS } from '../detect/dynamics.js'
import { partPlaces } from '../detect/placement.js'
import type { FieldShapes, LaterSums } from '../detect/sums.js'
import { AT_THE_FLOOR } from '../../testing/fixtures.js'
import { rng } from '../util/rng.js'
import type { GpuFieldBackend } from './backend.js'
import { COMPONENTS_HEADER, FIRST_LISTS, GpuLabeller, LIST_AND_PEAK_WORDS, labelMaps } from './components.js'
import { WindowSpectra, windowPlanes } from '../detect/spectra.js'
import { kernelModule } from './context.js'
import { SHADERS } from './shaders.gen.js'

/** A map of waves: |sum of a few plane waves|, smooth, a few components. */
function waves(n: number, seed: number): Float32Array {
  const rand = rng(seed)
  const k = Array.from({ length: 4 }, () => [rand() * 0.6, rand() * 0.6, rand() * 6])
  return Float32Array.from({ length: n * n }, (_, i) =>
    Math.abs(k.reduce((s, [a, b, p]) => s + Math.sin(a * (i % n) + b * Math.floor(i / n) + p), 0)),
  )
}

/** Noise of which some 59% is over the threshold: 4-connected site percolation, components of every size. */
function percolating(n: number, seed: number): Float32Array {
  const rand = rng(seed)
  return Float32Array.from({ length: n * n }, () => (rand() < 0.593 ? 0.5 + rand() * 0.5 : rand() * 0.4))
}

/** A one-cell-wide spiral walked inwards from the top left: its cells join against the scan's order. */
function spiral(n: number): Float32Array {
  const map = new Float32Array(n * n).fill(0.1)
  let [x0, y0, x1, y1] = [0, 0, n - 1, n - 1]
  while (x0 <= x1 && y0 <= y1) {
    for (let x = x0; x <= x1; x++) map[y0 * n + x] = 1
    for (let y = y0; y <= y1; y++) map[y * n + x1] = 1
    for (let x = x1; x >= x0; x--) map[y1 * n + x] = 1
    for (let y = y1; y >= y0 + 2; y--)
      map[y * n + x0] = 1
      // the next turn two cells in, so that the rings do not touch
    ;[x0, y0, x1, y1] = [x0 + 2, y0 + 2, x1 - 2, y1 - 2]
    if (x0 <= x1 && y0 <= y1) map[y0 * n + x0 - 1] = 1
  }
  return map
}

/** Masked cells at each row's ends only: joined across the edge were a row's end its next row's start. */
function edges(n: number): Float32Array {
  return Float32Array.from({ length: n * n }, (_, i) => (i % n === 0 || i % n === n - 1 ? 1 : 0))
}

/** 2 x 2 blocks 3 cells apart: 169 components of 4 cells at N = 40 (and cut-short ones at the edges), more than a list holds at N = 40. */
function blocks(n: number): Float32Array {
  return Float32Array.from({ length: n * n }, (_, i) => ((i % n) % 3 < 2 && Math.floor(i / n) % 3 < 2 ? 1 + (i % 7) / 8 : 0.2))
}

/** Two components of mass 4: four cells of 1 (from cell 85), and five of 1, 1, 1, 0.5, 0.5 (from cell 405). */
function equalMasses(n: number): Float32Array {
  const map = new Float32Array(n * n).fill(0.1)
  for (const c of [85, 86, 125, 126]) map[c] = 1
  for (const [c, v] of [
    [405, 1],
    [406, 1],
    [407, 1],
    [445, 0.5],
    [446, 0.5],
  ])
    map[c] = v
  return map
}

/**
 * Parts whose half mean radius (the sectors' cut and the inner disc's edge) falls on their cells' radii:
 * - two pluses, arms of 1 across and 4 up and down (from cell 20 n + 8), 2 across and 4 (from 20 n + 28):
 *   each is 2 (a + b) + 1 cells whose radii sum to a (a + 1) + b (b + 1) cells' widths, so half their mean
 *   is 1 cell exactly, and the cells one across are at the cut and inside the disc;
 * - AT_THE_FLOOR (its cell (0, 0) at 32 n + 8), whose half mean radius is 6,950.5 of 2^-13 and a cell at 6,950:
 *   inside, and not at the cut.
 */
function atTheCut(n: number): Float32Array {
  const map = new Float32Array(n * n).fill(0.1)
  for (const [centre, a, b] of [
    [20 * n + 8, 1, 4],
    [20 * n + 28, 2, 4],
  ]) {
    for (let x = -a; x <= a; x++) map[centre + x] = 1
    for (let y = -b; y <= b; y++) map[centre + y * n] = 1
  }
  for (const [x, y] of AT_THE_FLOOR) map[(32 + y) * n + 8 + x] = 1
  return map
}

/**
 * A row of 10 cells of 1 and, apart, a 2 x 2 block whose mass is 3 less `under`: at 0, exactly 0.3 of the
 * row's, so the row's regions are the block's (10 x 3 >= 3 x 10); under it, the row's halves.
 */
function atTheRatio(n: number, under: number): Float32Array {
  const map = new Float32Array(n * n).fill(0.1)
  for (let x = 0; x < 10; x++) map[5 * n + 4 + x] = 1
  for (const [c, v] of [
    [20 * n + 20, 0.75],
    [20 * n + 21, 0.75],
    [21 * n + 20, 0.75],
    [21 * n + 21, 0.75 - under],
  ])
    map[c] = v
  return map
}

/** Columns at the threshold exactly and a float32 step under it, under a peak of `peak`: the rule is >= of a float32 product. */
function atThreshold(n: number, peak: number): Float32Array {
  const t = Math.fround(Math.fround(0.45) * Math.fround(peak))
  const under = new Float32Array(new Uint32Array([new Uint32Array(new Float32Array([t]).buffer)[0] - 1]).buffer)[0]
  const map = Float32Array.from({ length: n * n }, (_, i) => ((i % n) % 3 === 0 ? t : under))
  map[n * n - 1] = peak
  return map
}

test('the device labels stability maps as labels(structureMask) does, and lists and ranks their components as components, massOf and partsOf do', async () => {
  const n = 40
  const maps = [
    waves(n, 1),
    waves(n, 2),
    percolating(n, 3),
    percolating(n, 4),
    spiral(n),
    edges(n),
    new Float32Array(n * n),
    atThreshold(n, 1.3),
    waves(n, 5).map((v, i) => (i === 777 ? Number.NaN : v)),
    // three binades of magnitude under a large peak and a tiny one: the masses' units follow the peak
    waves(n, 6).map((v) => v * 3e12),
    waves(n, 7).map((v) => v * 2e-30),
    blocks(n),
    equalMasses(n),
    // left to the host: a peak whose threshold is subnormal (an adapter may flush it), one at the least
    // binade listed, an infinite cell
    waves(n, 8).map((v) => v * 1.5e-38),
    waves(n, 9).map((v) => (v / 2.1) * 2 ** -102),
    waves(n, 10).map((v, i) => (i === 5 ? Number.POSITIVE_INFINITY : v)),
    atTheCut(n),
    atTheRatio(n, 0),
    atTheRatio(n, 2 ** -23),
  ]
  // a later window's sums of 10 samples for each: most cells kept or faded a little, some by 2^40 and
  // more (under the unit: 0), one cell subnormal and one below 0; then sums with a NaN, and sums all 0
  const rand = rng(12)
  const later = maps.map((map) =>
    map.map((v, i) => (i === 3 ? 2 ** -130 : i === 4 ? -1 : Math.abs(10 * v * 2 ** (-50 * rand() ** 6)) || 0)),
  )
  later[0][900] = Number.NaN
  later[1].fill(0)
  const backend = await gpuBackend(n, 1)
  try {
    const got = await labelMaps(backend as GpuFieldBackend, Float32Array.from(maps.flatMap((m) => [...m])), n, {
      labels: true,
      shapes: true,
      later: { sums: Float32Array.from(later.flatMap((l) => [...l])), taken: 10 },
      places: true,
    })
    expect(got).toHaveLength(maps.length)
    const largest: number[] = []
    const kinds: string[] = []
    let sustained = 0
    let parted = 0
    maps.forEach((map, f) => {
      const mask = structureMask(map)
      // a map with an infinity is the host's alone: the device labels none of it
      const want = map.some((v) => v === Number.POSITIVE_INFINITY) ? new Int32Array(n * n).fill(-1) : labels(mask, n)
      expect(Array.from(got[f].labels ?? []), `map ${f}'s labels`).toEqual(Array.from(want))
      // the twin's list: undefined past LISTED components, only a NaN threshold for a map with a NaN
      expect(got[f].listed, `map ${f}'s list`).toEqual(listedComponents(map, n))
      expect(inOrder(got[f].shapes), `map ${f}'s shapes`).toEqual(inOrder(listedShapes(map, n, later[f])))
      expect(got[f].top, `map ${f}'s first parts and candidates`).toEqual(listedTop(map, n, { sums: later[f], taken: 10 }))
      // where their reads fall, and the lists they read: the twins', from the same sums and cells
      expect(got[f].places, `map ${f}'s places`).toEqual(got[f].top?.parts.map((p) => partPlaces(n, p.shape)))
      expect(got[f].lists, `map ${f}'s lists`).toEqual(topLists(map, n, got[f].top))
      parted += got[f].lists?.length ?? 0
      for (const l of got[f].lists ?? []) kinds.push(typeof l.regions === 'string' ? l.regions : 'halved')
      // each listed part's sustain and persistence from what came back: sustainOf's and persistenceOf's,
      // bit for bit (its cells in the part's own units there, in the map's here)
      const shapes = got[f].shapes
      if (shapes?.later)
        for (const { cells, mass } of rankedComponents(map, n)) {
          const { units, ab, aa, bb } = shapes.later.parts.get(cells[0]) as LaterSums
          const sustain = shapes.later.unit ? (units * shapes.later.unit) / 10 / mass : 0
          const taken = { sums: later[f], taken: 10 }
          expect(sustain, `map ${f}'s part at ${cells[0]}`).toBe(sustainOf(cells, map, taken))
          const persistence = Math.max(0, Math.min(1, (aa && bb ? ab / Math.sqrt(aa * bb) : 0) * Math.min(1, sustain)))
          expect(persistence, `map ${f}'s part at ${cells[0]}`).toBe(
            persistenceOf(
              Array.from(cells, (c) => map[c]),
              cells,
              taken,
              sustain,
            ),
          )
          if (sustain > 0 && persistence > 0) sustained++
        }
      largest.push(rankedComponents(map, n)[0]?.cells.length ?? 0)
    })
    // sums with a NaN or all 0 give no unit and no units; the others sustain something
    expect([got[0].shapes?.later?.unit, got[1].shapes?.later?.unit]).toEqual([0, 0])
    expect([...(got[0].shapes?.later?.parts.values() ?? [])].every((p) => p.units === 0 && p.ab === 0 && p.bb === 0)).toBe(true)
    expect(sustained).toBeGreaterThan(20)
    // lists made for many parts, not only for none, and every kind of regions among them
    expect(parted).toBeGreaterThan(20)
    for (const kind of ['none', 'next', 'past', 'halved']) expect(kinds.filter((k) => k.startsWith(kind)).length, kind).toBeGreaterThan(0)
    // a next part of 0.3 of the mass exactly is the second region, one of a float32 step less is not: the row is halved
    expect([17, 18].map((f) => got[f].lists?.map((l) => l.regions))).toEqual([
      ['next', 'none'],
      [
        [
          [5 * n + 4, 5 * n + 5, 5 * n + 6, 5 * n + 7, 5 * n + 8],
          [5 * n + 9, 5 * n + 10, 5 * n + 11, 5 * n + 12, 5 * n + 13],
        ],
        'none',
      ],
    ])
    // the spiral is one component of some 800 cells, joined against the scan
    expect(largest[4]).toBeGreaterThan(700)
    expect(got[6].labels?.every((l) => l === -1)).toBe(true)
    // the columns at the threshold are masked, those a step under not
    expect(got[7].labels?.filter((l) => l >= 0)).toHaveLength(14 * n)
    expect(got[8].labels?.every((l) => l === -1)).toBe(true)
    // left to the host: a map at rest, a NaN, more components than a list holds, a subnormal threshold, an infinity
    expect([6, 8, 11, 13, 15].map((f) => got[f].listed)).toEqual([undefined, undefined, undefined, undefined, undefined])
    expect(rankedComponents(maps[11], n).length).toBeGreaterThan(LISTED)
    // listed: the least binade's peak; two components of equal mass, the one of more cells first
    expect(got[14].listed?.length).toBeGreaterThan(1)
    expect(Array.from(got[12].listed ?? []).slice(1)).toEqual([405, 5, 4, 85, 4, 4])
    // the pluses (the larger first): half the mean radius is one cell (2^13 of 2^-13), and the cells one
    // across, at it, reach the sectors at pi and 0 (0 and 8) and lie within it with the centre and those
    // one up and down
    const cut = [...(got[16].shapes?.parts.values() ?? [])]
    expect(cut.map((s) => [s.cells, s.radii / (2 * s.cells), s.reached & 0x101, s.inner])).toEqual([
      [13, 2 ** 13, 0x101, 5],
      [11, 2 ** 13, 0x101, 5],
      [10, 139010 / 20, 0, 3],
    ])
  } finally {
    backend.destroy()
  }
})

/** A map's shapes with its parts in their order (toEqual takes two Maps' entries in any order; the shapes come in the list's). */
const inOrder = (shapes: FieldShapes | undefined) =>
  shapes && { units: shapes.units, parts: [...shapes.parts], later: shapes.later && { ...shapes.later, parts: [...shapes.later.parts] } }

test('maps that do not fill a storage binding go in groups that do, with the same labels and lists', async () => {
  const n = 24
  const maps = Array.from({ length: 7 }, (_, f) => (f % 2 ? percolating(n, 10 + f) : waves(n, 10 + f)))
  const backend = (await gpuBackend(n, 1)) as GpuFieldBackend
  try {
    const flat = Float32Array.from(maps.flatMap((m) => [...m]))
    // room for 3 fields a binding: groups of 3, 3 and 1 (a field's list, peak, labels and tallies)
    const narrow = {
      device: backend.device,
      transfers: backend.transfers,
      failure: () => backend.failure(),
      check: () => backend.check(),
      bindingBytes: (LIST_AND_PEAK_WORDS + 4 * n * n) * 4 * 3,
    }
    const reads = backend.transfers.snapshot().reads
    const got = await labelMaps(narrow, flat, n, { labels: true })
    // the groups' lists and labels in one read
    expect(backend.transfers.snapshot().reads - reads).toBe(1)
    maps.forEach((map, f) => expect(Array.from(got[f].labels ?? [])).toEqual(Array.from(labels(structureMask(map), n))))
    maps.forEach((map, f) => expect(got[f].listed).toEqual(listedComponents(map, n)))
    // with their shapes (a binding then holds 2 fields: groups of 2, 2, 2 and 1), still one read
    // and a later window's sums each, read in the group's fields
    const later = flat.map((v, i) => v * (1 + (i % 7)))
    const shaped = await labelMaps(narrow, flat, n, { shapes: true, later: { sums: later, taken: 3 } })
    expect(backend.transfers.snapshot().reads - reads).toBe(2)
    const cells = n * n
    maps.forEach((map, f) => {
      const own = later.subarray(f * cells, (f + 1) * cells)
      expect(inOrder(shaped[f].shapes)).toEqual(inOrder(listedShapes(map, n, own)))
      expect(shaped[f].top).toEqual(listedTop(map, n, { sums: own, taken: 3 }))
    })
    // and again, in the buffer the last call kept: every sum starts from 0
    const again = await labelMaps(narrow, flat, n, { shapes: true, later: { sums: later, taken: 3 } })
    expect(again.map((l) => inOrder(l.shapes))).toEqual(shaped.map((l) => inOrder(l.shapes)))
    expect(shaped.map((l) => l.listed)).toEqual(got.map((l) => l.listed))
    // without the labels, the lists and peaks alone come back, in one read: some 2 KB a field
    const before = backend.transfers.snapshot()
    const lists = await labelMaps(narrow, flat, n)
    const after = backend.transfers.snapshot()
    expect([after.reads - before.reads, after.bytes_read - before.bytes_read]).toEqual([1, 7 * LIST_AND_PEAK_WORDS * 4])
    expect(lists.map((l) => l.listed)).toEqual(got.map((l) => l.listed))
    await expect(labelMaps(backend, flat.subarray(1), n)).rejects.toThrow('not a whole number')
  } finally {
    backend.destroy()
  }
})

test("the candidates at the sustain's bound, moved by 2^-20 either way: the device's table is the twin's, a part that may hold is a candidate and only one that surely holds ends it", async () => {
  const n = 32
  const taken = 5
  // a field-wide square of 1 (225 cells at (10, 10)), then a smaller one of 0.9 (36 cells at 0, 0), over 0.1
  const inside = (i: number, x0: number, side: number) =>
    i % n >= x0 && i % n < x0 + side && Math.floor(i / n) >= x0 && Math.floor(i / n) < x0 + side
  const map = Float32Array.from({ length: n * n }, (_, i) => (inside(i, 10, 15) ? 1 : inside(i, 0, 6) ? 0.9 : 0.1))
  // later sums over 5 samples: the small square keeps 0.8, the wide one 0.6 (1 + d) for each d, a float32 apart
  const ds = [2 ** -19, 2 ** -21, 0, -(2 ** -21), -(2 ** -19)]
  const later = ds.map((d) => Float32Array.from(map, (v, i) => (inside(i, 10, 15) ? 3 * (1 + d) : inside(i, 0, 6) ? taken * v * 0.8 : 0.5)))
  const backend = (await gpuBackend(n, 1)) as GpuFieldBackend
  try {
    const got = await labelMaps(backend, Float32Array.from(ds.flatMap(() => [...map])), n, {
      shapes: true,
      later: { sums: Float32Array.from(later.flatMap((l) => [...l])), taken },
    })
    const [wide, small] = [10 * n + 10, 0]
    expect(
      got.map((g) => g.top?.candidates && { roots: g.top.candidates.parts.map((p) => p.root), complete: g.top.candidates.complete }),
    ).toEqual([
      // surely holds, and field-wide: it ends the list
      { roots: [wide], complete: true },
      // within 2^-20 of the bound either way: a candidate that ends nothing (the host's float64 decides it)
      { roots: [wide, small], complete: true },
      { roots: [wide, small], complete: true },
      { roots: [wide, small], complete: true },
      // under the bound lowered: none
      { roots: [small], complete: true },
    ])
    ds.forEach((_, f) => expect(got[f].top, `case ${f}`).toEqual(listedTop(map, n, { sums: later[f], taken })))
  } finally {
    backend.destroy()
  }
})

test("at N = 512 the shapes' sums and squares pass 2^32 (two words each): a field-wide component, a disc and a ring off the grid", async () => {
  const n = 512
  const rand = rng(5)
  const maps = [
    Float32Array.from({ length: n * n }, () => 1 + rand() * 0.5),
    ...[
      [300.3, 200.7, 180, 0],
      [255.5, 256.25, 140, 1],
    ].map(([cx, cy, r, ring]) =>
      Float32Array.from({ length: n * n }, (_, i) => {
        const d = Math.hypot((i % n) - cx, Math.floor(i / n) - cy)
        return ring ? Math.exp(-(((d - r) / 6) ** 2)) : Math.max(0, 1 - d / r) + 0.01 * rand()
      }),
    ),
  ]
  const backend = (await gpuBackend(32, 1)) as GpuFieldBackend
  try {
    // later sums of some 2^38 units a cell: the field-wide component's past 2^53
    const later = Float32Array.from(
      maps.flatMap((m) => [...m]),
      (v) => 7 * v,
    )
    const got = await labelMaps(backend, Float32Array.from(maps.flatMap((m) => [...m])), n, {
      shapes: true,
      later: { sums: later, taken: 1 },
      places: true,
    })
    maps.forEach((map, f) => {
      const own = later.subarray(f * n * n, (f + 1) * n * n)
      expect(inOrder(got[f].shapes), `map ${f}'s shapes`).toEqual(inOrder(listedShapes(map, n, own)))
      // and the candidates, whose sums past 2^53 make their rules maybe and never sure
      expect(got[f].top, `map ${f}'s first parts and candidates`).toEqual(listedTop(map, n, { sums: own, taken: 1 }))
      // where the first parts' reads fall, from sums past 2^32, and their lists (sampled from 2^18 cells): the twins'
      expect(got[f].places, `map ${f}'s places`).toEqual(got[f].top?.parts.map((p) => partPlaces(n, p.shape)))
      expect(got[f].lists, `map ${f}'s lists`).toEqual(topLists(map, n, got[f].top))
    })
    // and persistence's sums past 2^64 (three words)
    const [wide] = [...(got[0].shapes?.later?.parts.values() ?? [])]
    expect([wide.units, wide.ab, wide.aa, wide.bb].every((sum) => sum > 2 ** 55)).toBe(true)
    expect(wide.aa).toBeGreaterThan(2 ** 64)
    const whole = [...(got[0].shapes?.parts.values() ?? [])]
    expect(whole.map((s) => s.cells)).toEqual([n * n])
    expect(whole[0].sxx).toBeGreaterThan(2 ** 34)
    expect(whole[0].radii).toBeGreaterThan(2 ** 38)
    // the total of 2^18 cells of some 2^38 units each: past 2^53, one rounding
    expect(got[0].shapes?.units).toBeGreaterThan(2 ** 55)
  } finally {
    backend.destroy()
  }
})

test("the first parts' lists' power sums and cells at their modes made where the window's planes lie (first_sums, first_modes) are topSums' and topModes' bit for bit: planes in one buffer, in chunks of 5 (a bin's planes across two) and of 1", async () => {
  const n = 40
  const frames = 32
  const maps = [waves(n, 21), waves(n, 22), percolating(n, 23), atTheRatio(n, 2 ** -23), atTheCut(n), new Float32Array(n * n)]
  const fields = maps.length
  const cells = n * n
  const planes = windowPlanes(frames)
  const rand = rng(31)
  // plane 1 (sum |u|) the map times the frames (the map exactly, frames a power of two); the others at random
  const window = new Float32Array(planes * fields * cells)
  for (let p = 0; p < planes; p++)
    for (let f = 0; f < fields; f++)
      for (let c = 0; c < cells; c++)
        window[(p * fields + f) * cells + c] = p === 1 ? maps[f][c] * frames : Math.fround((rand() - 0.5) * (p === 0 ? 10 : 6))
  const backend = (await gpuBackend(16, 1)) as GpuFieldBackend
  try {
    const flat = Float32Array.from(maps.flatMap((m) => [...m]))
    const spectra = maps.map((_, f) => new WindowSpectra(n, 4, frames, { plane: (p, c) => window[(p * fields + f) * cells + c] }))
    let halved = 0
    const bins = new Set<number | undefined>()
    for (const perChunk of [planes, 5, 1]) {
      const got = await labelMaps(backend, flat, n, { shapes: true, places: true, window: { planes: window, frames, perChunk } })
      maps.forEach((_, f) => {
        const { top, lists, sums } = got[f]
        if (!top || !lists) return expect(sums, `map ${f}`).toBeUndefined()
        expect(
          sums?.map((p) => p.sums),
          `map ${f}, ${perChunk} planes a chunk`,
        ).toEqual(topSums(spectra[f], top, lists))
        expect(
          sums?.map((p) => p.modes),
          `map ${f}'s modes, ${perChunk} planes a chunk`,
        ).toEqual(topModes(spectra[f], top, lists))
        bins.add(sums?.[0].modes[0])
        halved += lists.filter((l) => Array.isArray(l.regions)).length
      })
      // a map at rest has no parts, and no sums
      expect(got[5].sums).toBeUndefined()
      expect(got[0].sums?.[0].sums.length).toBe(FIRST_LISTS * spectra[0].bins)
    }
    expect(halved).toBeGreaterThan(3)
    // modes at several bins, not one
    expect(bins.size).toBeGreaterThan(2)
  } finally {
    backend.destroy()
  }
})

/**
 * Runs `entry` of `check` (an entry point over `out` alone, added to the module the kernels are in) over
 * `words`, `each` words an invocation in workgroups of 64, and gives back `out` after it.
 */
async function runCheck(backend: GpuFieldBackend, check: string, entry: string, words: Uint32Array, each = 8): Promise<Uint32Array> {
  const { device, transfers } = backend
  const module = kernelModule(device, COMPONENTS_HEADER, SHADERS.components + check, SHADERS.integers)
  const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: entry } })
  const buffer = device.createBuffer({ size: words.byteLength, usage: 0x80 | 0x4 | 0x8 })
  transfers.write(buffer, 0, words)
  const encoder = device.createCommandEncoder()
  const pass = encoder.beginComputePass()
  pass.setPipeline(pipeline)
  pass.setBindGroup(0, device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [{ binding: 2, resource: { buffer } }] }))
  pass.dispatchWorkgroups(Math.ceil(words.length / (64 * each)))
  pass.end()
  transfers.submit(encoder)
  const [back] = await transfers.readRanges([{ src: buffer, offset: 0, bytes: words.byteLength }], () => backend.failure())
  transfers.destroy(buffer)
  return new Uint32Array(back)
}

test("the shapes' 64-bit helpers (wide_sqrt, wide_mul, wide_div) against BigInt, at the ends of their ranges: roots whose f32 estimate falls under the floor and over it, products of the largest words, quotients near 2^32", async () => {
  // an entry point over `out` alone, in the module the kernels are in: each 8 words, D (two), a, b in and
  // floor(sqrt(D)), a b (two), floor(D / b) out
  const check = `
@compute @workgroup_size(64)
fn check_wide(@builtin(global_invocation_id) gid: vec3<u32>) {
  let at = 8u * gid.x;
  if (at + 8u > arrayLength(&out)) { return; }
  let d = vec2<u32>(atomicLoad(&out[at]), atomicLoad(&out[at + 1u]));
  let a = atomicLoad(&out[at + 2u]);
  let b = atomicLoad(&out[at + 3u]);
  atomicStore(&out[at + 4u], wide_sqrt(d));
  let m = wide_mul(a, b);
  atomicStore(&out[at + 5u], m.x);
  atomicStore(&out[at + 6u], m.y);
  atomicStore(&out[at + 7u], wide_div(d, b).x);
}`
  const rand = rng(31)
  const word = () => Math.floor(rand() * 2 ** 32)
  // the device's estimate: an f32 root of D made in f32, truncated
  const estimate = (d: bigint) =>
    Math.trunc(Math.fround(Math.sqrt(Math.fround(Math.fround(Number(d >> 32n)) * 2 ** 32 + Math.fround(Number(d & 0xffffffffn))))))
  const floorRoot = (d: bigint) => {
    let r = BigInt(Math.floor(Math.sqrt(Number(d))))
    while (r * r > d) r--
    while ((r + 1n) * (r + 1n) <= d) r++
    return r
  }
  // squared distances up to 2^51 (N = 4096): squares, one under and one over, and random ones
  const roots: bigint[] = [0n, 1n, 2n, 3n, 2n ** 51n - 1n]
  for (let k = 0; k < 200; k++) {
    const r = BigInt(Math.floor(2 ** (10 + 15.5 * rand())))
    roots.push(r * r, r * r - 1n, r * r + 2n * r)
    roots.push(BigInt(Math.floor(rand() * 2 ** 51)))
  }
  const under = roots.filter((d) => BigInt(estimate(d)) < floorRoot(d)).length
  const over = roots.filter((d) => BigInt(estimate(d)) > floorRoot(d)).length
  expect([under, over].every((k) => k > 10)).toBe(true)
  const cases = roots.map((d, k) => {
    const edge = [0, 1, 0xffff, 0x10000, 0xffffffff]
    const [a, b] = k < 25 ? [edge[k % 5], edge[Math.floor(k / 5)]] : [word(), word()]
    // a divisor under 2^31 and a quotient under 2^32 (wide_div's terms)
    const divisor = BigInt(1 + Math.floor(rand() * (2 ** 31 - 1)))
    // random, or a power of two times the divisor (a partial remainder equal to it), or D over 2^19
    const dividend = [
      BigInt(Math.floor(rand() * 2 ** 32)) * divisor + BigInt(Math.floor(rand() * Number(divisor))),
      divisor << BigInt(k % 32),
      d >> 19n,
    ][k % 3]
    return { d, a, b, divisor, dividend }
  })
  const backend = (await gpuBackend(16, 1)) as GpuFieldBackend
  try {
    const run = (inputs: [bigint, number, number][]) => {
      const words = new Uint32Array(8 * inputs.length)
      inputs.forEach(([d, a, b], k) => words.set([Number(d & 0xffffffffn), Number(d >> 32n), a, b], 8 * k))
      return runCheck(backend, check, 'check_wide', words)
    }
    const squares = await run(cases.map(({ d, a, b }) => [d, a, b]))
    const quotients = await run(cases.map(({ dividend, divisor }) => [dividend, 0, Number(divisor)]))
    cases.forEach(({ d, a, b, divisor, dividend }, k) => {
      const at = 8 * k
      expect([squares[at + 4], squares[at + 5], squares[at + 6]], `case ${k}`).toEqual([
        Number(floorRoot(d)),
        Number((BigInt(a) * BigInt(b)) & 0xffffffffn),
        Number((BigInt(a) * BigInt(b)) >> 32n),
      ])
      expect(quotients[at + 7], `case ${k}'s quotient`).toBe(Number(dividend / divisor))
    })
  } finally {
    backend.destroy()
  }
})

test("a circle's point rounded on the device (rounded_along) is the exact rational's at N = 4096, past 2^64 in three words: random parts, a tie float64 misses, negative cosines, points off the field", async () => {
  // an entry point over `out` alone: each 8 words, s (two), c, rc (two), t, the cosine (an i32) in and the cell's x out
  const check = `
@compute @workgroup_size(64)
fn check_along(@builtin(global_invocation_id) gid: vec3<u32>) {
  let at = 8u * gid.x;
  if (at + 8u > arrayLength(&out)) { return; }
  let s = vec2<u32>(atomicLoad(&out[at]), atomicLoad(&out[at + 1u]));
  let rc = vec2<u32>(atomicLoad(&out[at + 3u]), atomicLoad(&out[at + 4u]));
  let x = rounded_along(s, atomicLoad(&out[at + 2u]), rc, atomicLoad(&out[at + 5u]), bitcast<i32>(atomicLoad(&out[at + 6u])));
  atomicStore(&out[at + 7u], bitcast<u32>(x));
}`
  const rand = rng(41)
  const ONE = 2 ** 13
  const scale = 2n ** 43n
  const floorBig = (a: bigint, b: bigint) => (a >= 0n ? a / b : -((-a + b - 1n) / b))
  // cos(j pi / 16) to 2^-30, j = 0 to 8 (placement.ts's table), either sign
  const table = [1073741824, 1053110176, 992008094, 892783698, 759250125, 596538995, 410903207, 209476638, 0]
  type Case = { s: number; c: number; rc: number; t: number; cos: number }
  const cases: Case[] = [{ s: 16_466_899, c: 8035, rc: 137_438_953_472, t: 10, cos: -1053110176 }]
  for (let k = 0; k < 600; k++) {
    const c = 1 + Math.floor(rand() * (k % 3 === 0 ? 40 : 2 ** 24))
    const s = Math.floor(rand() * 4095 * c)
    const rc = Math.max(c * ONE, Math.min(2 ** 50 - 1, Math.floor(rand() * 2000 * c * ONE)))
    const cos = table[k % 9] * (rand() < 0.5 ? -1 : 1)
    cases.push({ s, c, rc, t: k % 2 ? 10 : 7, cos })
  }
  const exact = ({ s, c, rc, t, cos }: Case) =>
    Number(floorBig(20n * scale * BigInt(s) + 2n * BigInt(t) * BigInt(rc) * BigInt(cos) + 10n * scale * BigInt(c), 20n * scale * BigInt(c)))
  // past 2^64: the products of most cases
  expect(cases.filter(({ rc, t, cos }) => 2 * t * rc * Math.abs(cos) > 2 ** 64).length).toBeGreaterThan(300)
  const backend = (await gpuBackend(16, 1)) as GpuFieldBackend
  try {
    const words = new Uint32Array(8 * cases.length)
    const low = (v: number) => v % 2 ** 32
    const high = (v: number) => Math.floor(v / 2 ** 32)
    cases.forEach(({ s, c, rc, t, cos }, k) => words.set([low(s), high(s), c, low(rc), high(rc), t, cos >>> 0], 8 * k))
    const got = new Int32Array((await runCheck(backend, check, 'check_along', words)).buffer)
    cases.forEach((one, k) => expect(got[8 * k + 7], `case ${k}`).toBe(exact(one)))
    // the tie: x = 2 exactly, where float64 reads 1.99999999999977
    expect(got[7]).toBe(2)
    // points left of the field and past it
    expect(cases.some((one) => exact(one) < 0)).toBe(true)
    expect(cases.some((one) => exact(one) >= 4096)).toBe(true)
  } finally {
    backend.destroy()
  }
})

test("a list's entry lands where sample() takes it (sampled_slot): every entry of lists of 1 to 2^24 entries (a part and its box are within the field: 4096^2 cells at most), those the sample skips nowhere", async () => {
  // an entry point over `out` alone: each 4 words, k and a list's length in, the slot out
  const check = `
@compute @workgroup_size(64)
fn check_sampled(@builtin(global_invocation_id) gid: vec3<u32>) {
  let at = 4u * gid.x;
  if (at + 4u > arrayLength(&out)) { return; }
  atomicStore(&out[at + 2u], sampled_slot(atomicLoad(&out[at]), atomicLoad(&out[at + 1u])));
}`
  const rand = rng(43)
  const lengths = [
    1,
    255,
    256,
    257,
    300,
    511,
    513,
    9216,
    9217,
    262_143,
    2 ** 24 - 1,
    2 ** 24,
    ...Array.from({ length: 20 }, () => 257 + Math.floor(rand() * 2 ** 20)),
  ]
  // sampledAt's picks: entry floor(i length / 256) at i, all entries where 256 or fewer
  const slots = new Map<string, number>()
  const cases: [number, number][] = []
  for (const length of lengths) {
    const picks =
      length <= MAX_SAMPLED_CELLS
        ? Array.from({ length }, (_, i) => i)
        : Array.from({ length: MAX_SAMPLED_CELLS }, (_, i) => Math.floor((i * length) / MAX_SAMPLED_CELLS))
    picks.forEach((k, i) => slots.set(`${k}/${length}`, i))
    // each pick and the entries either side of it
    for (const k of picks) for (const near of [k - 1, k, k + 1]) if (near >= 0 && near < length) cases.push([near, length])
  }
  const words = new Uint32Array(4 * cases.length)
  cases.forEach(([k, length], c) => words.set([k, length], 4 * c))
  const backend = (await gpuBackend(16, 1)) as GpuFieldBackend
  try {
    const got = await runCheck(backend, check, 'check_sampled', words, 4)
    cases.forEach(([k, length], c) => expect(got[4 * c + 2], `entry ${k} of ${length}`).toBe(slots.get(`${k}/${length}`) ?? 0xffffffff))
  } finally {
    backend.destroy()
  }
})

test("a cell's side of its part's axis on the device (side_of, exact_side) is sideOf's at N = 4096 (A and B past 2^64): random axes, cells a few units off the axis, and cells on it where the root is whole", async () => {
  // an entry point over `out` alone: each 20 words, dX and dY (two words each), A and B (BIG words each) in, side_of's and exact_side's signs out
  const check = `
@compute @workgroup_size(64)
fn check_side(@builtin(global_invocation_id) gid: vec3<u32>) {
  let at = 20u * gid.x;
  if (at + 20u > arrayLength(&out)) { return; }
  let dX = vec2<u32>(atomicLoad(&out[at]), atomicLoad(&out[at + 1u]));
  let dY = vec2<u32>(atomicLoad(&out[at + 2u]), atomicLoad(&out[at + 3u]));
  var a: Big;
  var b: Big;
  for (var k = 0u; k < BIG; k++) {
    a[k] = atomicLoad(&out[at + 4u + k]);
    b[k] = atomicLoad(&out[at + 10u + k]);
  }
  let axis = axis_of(a, b);
  atomicStore(&out[at + 16u], bitcast<u32>(side_of(dX, dY, axis)));
  atomicStore(&out[at + 17u], bitcast<u32>(exact_side(dX, dY, axis)));
}`
  const rand = rng(47)
  // a random integer under 2^bits
  const big = (bits: number) => BigInt(Math.floor(rand() * 2 ** Math.min(30, bits))) << BigInt(Math.max(0, bits - 30))
  const signed = (v: bigint) => (rand() < 0.5 ? -v : v)
  const whole = (v: number) => BigInt(Math.round(v))
  type Case = { dX: bigint; dY: bigint; A: bigint; B: bigint }
  const cases: Case[] = []
  for (let k = 0; k < 400; k++) {
    const A = signed(big(10 + Math.floor(rand() * 62)))
    const B = signed(big(10 + Math.floor(rand() * 62))) || 1n
    // across the axis: (dX, dY) along (-2 B, A + sqrt R), a few units off it, within N^3 = 2^36
    const [ux, uy] = [-2 * Number(B), Number(A) + Math.hypot(Number(A), 2 * Number(B))]
    const t = (rand() * 2 ** 35) / Math.max(Math.abs(ux), Math.abs(uy))
    const off = () => BigInt(Math.floor(rand() * 7) - 3)
    cases.push({ dX: whole(t * ux) + off(), dY: whole(t * uy) + off(), A, B })
    cases.push({ dX: signed(big(36)), dY: signed(big(36)), A, B })
  }
  // A = k (p^2 - q^2), B = k p q: sqrt R = k (p^2 + q^2) is whole, the axis along (p, q), and t (-q, p) on it
  for (let k = 0; k < 200; k++) {
    const [p, q] = [signed(big(14)) || 1n, signed(big(14)) || 1n]
    const m = big(40)
    const t = signed(big(20))
    cases.push({ dX: -t * q, dY: t * p, A: m * (p * p - q * q), B: m * p * q })
  }
  const reference = ({ dX, dY, A, B }: Case) => Math.sign(sideOf(Number(dX), Number(dY), axisOf(A, B))) || 0
  expect(cases.filter((one) => reference(one) === 0).length).toBeGreaterThan(150)
  expect(cases.filter(({ A }) => A > 2n ** 64n || A < -(2n ** 64n)).length).toBeGreaterThan(50)
  const words = new Uint32Array(20 * cases.length)
  const limbs = (v: bigint, count: number) => Array.from({ length: count }, (_, k) => Number(BigInt.asUintN(32, v >> BigInt(32 * k))))
  cases.forEach(({ dX, dY, A, B }, k) => words.set([...limbs(dX, 2), ...limbs(dY, 2), ...limbs(A, 6), ...limbs(B, 6)], 20 * k))
  const backend = (await gpuBackend(16, 1)) as GpuFieldBackend
  try {
    const got = new Int32Array((await runCheck(backend, check, 'check_side', words, 20)).buffer)
    cases.forEach((one, k) => expect([got[20 * k + 16], got[20 * k + 17]], `case ${k}`).toEqual([reference(one), reference(one)]))
  } finally {
    backend.destroy()
  }
})

test("the groups' layout: offsets a multiple of 256 bytes, within a binding; none where one field exceeds it", () => {
  // N = 96 at population 1,000 in one 2 GiB binding: one group, some 16 bytes a cell
  const bytes = Math.ceil((2000 * (LIST_AND_PEAK_WORDS + 4 * 96 * 96) * 4) / 256) * 256
  expect(GpuLabeller.layout(96, 2000, 2 ** 31)).toEqual({ most: 2000, words: LIST_AND_PEAK_WORDS + 4 * 96 * 96, groupBytes: bytes, bytes })
  // N = 256, 256 fields, WebGPU's default 128 MiB binding: groups of 127, over 256 MiB in all (the recorder then leaves the maps to the host)
  const layout = GpuLabeller.layout(256, 256, 2 ** 27)!
  expect(layout.most).toBe(127)
  expect(layout.groupBytes % 256).toBe(0)
  expect(layout.groupBytes).toBeLessThanOrEqual(2 ** 27)
  expect(layout.bytes).toBeGreaterThan(2 ** 28)
  expect(GpuLabeller.layout(4096, 1, 2 ** 27)).toBeUndefined()
})
