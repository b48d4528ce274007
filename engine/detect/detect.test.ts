// Detection and classes on synthetic recordings of known dynamics (a confusion matrix over noisy
// reseeded copies), and signatures that do not depend on where a shape sits.
import { describe, expect, test, vi } from 'vitest'
import { CLASS_TOKENS, type ClassToken } from '../contracts/registry.js'
import { cosine } from '../util/vector.js'
import { rng } from '../util/rng.js'
import { AT_THE_FLOOR, randomPart } from '../../testing/fixtures.js'
import {
  CLASS_RULES,
  cellsRead,
  componentFrom,
  components,
  axisOf,
  halves,
  holdMeasured,
  listedComponents,
  listedTop,
  measuredOf,
  rankedComponents,
  fieldTotal,
  type Later,
  outshone,
  detect,
  labels,
  persistenceOf,
  sideOf,
  structureMask,
  sustainOf,
  THRESHOLD_OF_PEAK,
  measure,
  shapeSums,
  sectorOf,
  spectraFor,
  stabilityMap,
  withResponse,
  type Response,
  type Structure,
  type WindowReads,
} from './detect.js'
import { basinOf } from './basin.js'
import { NO_CANDIDATES } from './candidates.js'
import { regrowthFrom, regrowthSums } from './regrowth.js'
import { MAX_SAMPLED_CELLS, reachSample, type Recording } from './dynamics.js'
import { powerSumsOf, WindowSpectra } from './spectra.js'

const N = 48
const T = 64
const DT = 2
/** Angular frequency (radians per step) of DFT bin k of the recorded window. */
const bin = (k: number) => (2 * Math.PI * k) / (T * DT)
const gauss = (d2: number, s: number) => Math.exp(-d2 / (2 * s * s))

/** A recording of u(x, y, t) (normalized coordinates, t in steps) plus uniform noise of the given amplitude. */
function record(u: (x: number, y: number, t: number) => number, rand: () => number, noise = 0.05, n = N): Recording {
  const frames = Array.from({ length: T }, (_, k) => {
    const f = new Float32Array(n * n)
    for (let j = 0; j < n; j++)
      for (let i = 0; i < n; i++) f[j * n + i] = u((i + 0.5) / n, (j + 0.5) / n, k * DT) + noise * (2 * rand() - 1)
    return f
  })
  return { n, dt: DT, frames }
}

/**
 * A perturbation's outcome, synthetic: from the stability map before, the map after a kick (a broad
 * structure) or after half of it was erased (a compact one), and the structure's response.
 */
type Perturbed = (before: Float32Array, s: Structure, rand: () => number) => Response
const kickAt = (rand: () => number) => {
  const [kx, ky] = [0.2 + 0.6 * rand(), 0.2 + 0.6 * rand()]
  return Float32Array.from({ length: N * N }, (_, i) =>
    gauss((((i % N) + 0.5) / N - kx) ** 2 + ((Math.floor(i / N) + 0.5) / N - ky) ** 2, 0.08),
  )
}
const windowOf = (s: Structure) =>
  Array.from({ length: N * N }, (_, i) => i).filter(
    (i) => Math.hypot((i % N) + 0.5 - s.features.centroid_x * N, Math.floor(i / N) + 0.5 - s.features.centroid_y * N) <= 0.1 * N,
  )
const jitter = (m: Float32Array, rand: () => number) => m.map((v) => v + 0.02 * (2 * rand() - 1))
/** A map made here as a later window's sums of one sample. */
const oneSample = (sums: Float32Array): Later => ({ sums, taken: 1 })
/** The field goes back to its pattern after a kick; or takes the kick's pattern instead (the control); a seed re-forms in place; or spreads away (the control). */
const returns: Perturbed = (before, _, rand) => {
  const kick = kickAt(rand)
  return {
    basin: basinOf(
      before,
      kick,
      jitter(
        before.map((v, i) => v + 0.1 * kick[i]),
        rand,
      ),
    ),
  }
}
const keepsKick: Perturbed = (before, _, rand) => {
  const kick = kickAt(rand)
  return {
    basin: basinOf(
      before,
      kick,
      jitter(
        before.map((v, i) => 0.05 * v + kick[i]),
        rand,
      ),
    ),
  }
}
const regrows: Perturbed = (before, s, rand) => ({
  regrowth: regrowthFrom(
    regrowthSums(
      before,
      jitter(
        before.map((v) => 0.8 * v),
        rand,
      ),
      windowOf(s),
    ),
  ),
})
const spreads: Perturbed = (before, s, rand) => {
  // what is left of the seed drifts off and spreads: a broader blob a radius and more away
  const [cx, cy] = [s.features.centroid_x + 0.06, s.features.centroid_y]
  const after = Float32Array.from(
    { length: N * N },
    (_, i) => 0.5 * gauss((((i % N) + 0.5) / N - cx) ** 2 + ((Math.floor(i / N) + 0.5) / N - cy) ** 2, 0.05),
  )
  return { regrowth: regrowthFrom(regrowthSums(before, jitter(after, rand), windowOf(s))) }
}

/** A broad standing mode that keeps its stability (an attractor, or its control). */
function broadMode(r: () => number) {
  const [cx, cy, p] = [0.45 + 0.1 * r(), 0.45 + 0.1 * r(), 6 * r()]
  return { u: (x: number, y: number, t: number) => gauss((x - cx) ** 2 + (y - cy) ** 2, 0.28) * Math.cos(bin(3) * t + p), kept: 1 }
}

/** A small standing spot (a seed, or its control). */
function smallSpot(r: () => number) {
  const [cx, cy, p] = [0.3 + 0.4 * r(), 0.3 + 0.4 * r(), 6 * r()]
  return { u: (x: number, y: number, t: number) => gauss((x - cx) ** 2 + (y - cy) ** 2, 0.02) * Math.cos(bin(6) * t + p), kept: 1 }
}

/**
 * Synthetic dynamics, one per class, placed and phased by the generator; `kept` is the share of
 * stability the later window keeps, `perturbed` how it answers a perturbation, `expect` the class it
 * must get when that is not its name (the controls).
 */
const KNOWN: Record<
  ClassToken | 'fading' | 'kicked_away' | 'spread_away',
  (rand: () => number) => { u: (x: number, y: number, t: number) => number; kept: number; perturbed?: Perturbed; expect?: string }
> = {
  // a broad standing mode that keeps its stability: a basin
  attractor_field: (r) => ({ ...broadMode(r), perturbed: returns }),
  // the control: the same broad mode, but after a kick the field holds the kick's pattern, not its own: no basin, one standing mode
  kicked_away: (r) => ({ ...broadMode(r), perturbed: keepsKick, expect: 'standing_echo' }),
  // a rotating vortex: amplitude zero at the core, phase turning once round it
  phase_knot: (r) => {
    const [cx, cy] = [0.4 + 0.2 * r(), 0.4 + 0.2 * r()]
    return {
      u: (x, y, t) => {
        const d = Math.hypot(x - cx, y - cy)
        return (d / 0.07) * gauss(d * d, 0.07) * Math.cos(bin(4) * t - Math.atan2(y - cy, x - cx))
      },
      kept: 1,
    }
  },
  // two regions, the second at twice the first one's frequency
  harmonic_bridge: (r) => {
    const [cy, p] = [0.4 + 0.2 * r(), 6 * r()]
    return {
      u: (x, y, t) =>
        gauss((x - 0.3) ** 2 + (y - cy) ** 2, 0.05) * Math.cos(bin(4) * t + p) +
        gauss((x - 0.7) ** 2 + (y - cy) ** 2, 0.05) * Math.cos(bin(8) * t),
      kept: 1,
    }
  },
  // a standing ring
  echo_ring: (r) => {
    const [cx, cy, p] = [0.45 + 0.1 * r(), 0.45 + 0.1 * r(), 6 * r()]
    return { u: (x, y, t) => gauss((Math.hypot(x - cx, y - cy) - 0.2) ** 2, 0.025) * Math.cos(bin(5) * t + p), kept: 1 }
  },
  // a small standing spot
  memory_seed: (r) => ({ ...smallSpot(r), perturbed: regrows }),
  // the control: the same spot, but half erased it does not re-form: no seed, one standing mode
  spread_away: (r) => ({ ...smallSpot(r), perturbed: spreads, expect: 'standing_echo' }),
  // a compact standing mode
  standing_echo: (r) => {
    const [cx, cy, p] = [0.4 + 0.2 * r(), 0.4 + 0.2 * r(), 6 * r()]
    return { u: (x, y, t) => gauss((x - cx) ** 2 + (y - cy) ** 2, 0.07) * Math.cos(bin(4) * t + p), kept: 1 }
  },
  // the control: the same compact mode fading away is no structure at all
  fading: (r) => {
    const [cx, cy, p] = [0.4 + 0.2 * r(), 0.4 + 0.2 * r(), 6 * r()]
    return { u: (x, y, t) => gauss((x - cx) ** 2 + (y - cy) ** 2, 0.07) * Math.cos(bin(4) * t + p), kept: 0.3 }
  },
}

async function labelOf(kind: keyof typeof KNOWN, seed: number): Promise<string> {
  const rand = rng(seed)
  const { u, kept, perturbed } = KNOWN[kind](rand)
  const rec = record(u, rand)
  const later = stabilityMap(rec).map((v) => kept * v)
  const [found] = await detect(rec, oneSample(later))
  const s = found && perturbed ? withResponse(found, perturbed(later, found, rand)) : found
  return s?.class ?? 'fading'
}
const expected = (kind: keyof typeof KNOWN) => KNOWN[kind](rng(0)).expect ?? kind

/** The reference labelling: a flood fill from each unlabelled cell in index order, its label that first cell. */
function floodLabels(mask: Uint8Array, n: number): Int32Array {
  const label = new Int32Array(mask.length).fill(-1)
  for (let start = 0; start < mask.length; start++) {
    if (!mask[start] || label[start] >= 0) continue
    const todo = [start]
    label[start] = start
    while (todo.length) {
      const i = todo.pop()!
      const x = i % n
      for (const j of [x > 0 ? i - 1 : -1, x < n - 1 ? i + 1 : -1, i - n, i + n])
        if (j >= 0 && j < mask.length && mask[j] && label[j] < 0) todo.push(j), (label[j] = start)
    }
  }
  return label
}

/** A snake down the columns of an n x n mask, joined at alternate ends: its cells' order far from the scan's. */
function snakeMask(n: number): Uint8Array {
  const snake = new Uint8Array(n * n)
  for (let x = 0; x < n; x += 2) {
    for (let y = 0; y < n; y++) snake[y * n + x] = 1
    if (x + 1 < n) snake[(x % 4 ? 0 : n - 1) * n + x + 1] = 1
  }
  return snake
}

/**
 * A map's total as a plain BigInt sum of each cell floored to 2^(e - 38), e its peak's binade (a float32
 * over a power of two is exact in float64, and so is its floor), subnormal cells and cells below 0 as 0.
 */
function plainTotal(map: Float32Array): { units: number; unit: number } {
  const peak = map.reduce((a, v) => Math.max(a, v), 0)
  let binade = Math.floor(Math.log2(peak))
  // log2 may round up just under a power of two
  while (2 ** binade > peak) binade--
  const unit = 2 ** (binade - 25 - 13)
  return { units: Number(map.reduce((a, v) => a + (v >= 2 ** -126 ? BigInt(Math.floor(v / unit)) : 0n), 0n)), unit }
}

/**
 * Maps of sides 48, 96 and `last` whose cells spread over up to 60 binades, each with a later window's
 * sums of ten samples: most cells kept or faded a little, some by 2^fade and more.
 */
function spreadMaps(rand: () => number, last: number, fade: number): { n: number; first: Float32Array; later: Later }[] {
  return [
    [48, 60],
    [96, 8],
    [last, 30],
  ].map(([n, spread]) => {
    const first = Float32Array.from({ length: n * n }, () => 2 ** (-spread * rand() ** 2) * (0.5 + rand()) * 3e4)
    return { n, first, later: { sums: first.map((v) => 10 * v * 2 ** (-fade * rand() ** 6)), taken: 10 } }
  })
}

describe('components', () => {
  test("each cell is labelled with its component's smallest cell, as a flood fill labels it: random masks near percolation, a snake whose unions run against the scan, no wrap at the edges", async () => {
    const rand = rng(5)
    const masks: [Uint8Array, number][] = []
    for (const [n, p] of [
      [1, 1],
      [7, 0.5],
      [33, 0.55],
      [64, 0.6],
      [96, 0.45],
    ] as const)
      masks.push([Uint8Array.from({ length: n * n }, () => (rand() < p ? 1 : 0)), n])
    const n = 41
    const snake = snakeMask(n)
    masks.push([snake, n])
    // cells that touch only at corners are apart; a run under two runs joins them
    masks.push([Uint8Array.from({ length: 15 * 15 }, (_, i) => (((i % 15) + Math.floor(i / 15)) % 2 === 0 ? 1 : 0)), 15])
    masks.push([Uint8Array.from([1, 0, 1, 0, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0, 1, 0]), 4])
    // a row's last cell and the next row's first are not neighbours
    masks.push([Uint8Array.from([0, 0, 1, 1, 0, 0, 0, 0, 1]), 3])
    for (const [mask, side] of masks) {
      const want = floodLabels(mask, side)
      expect(labels(mask, side)).toEqual(want)
      // components: largest first, ties by their smallest cell, cells in index order
      const found = components(mask, side)
      const sizes = new Map<number, number>()
      for (const r of want) if (r >= 0) sizes.set(r, (sizes.get(r) ?? 0) + 1)
      const roots = [...sizes.keys()].sort((a, b) => sizes.get(b)! - sizes.get(a)! || a - b)
      expect(found.map((cells) => cells[0])).toEqual(roots)
      for (const cells of found) {
        expect(cells).toEqual([...cells].sort((a, b) => a - b))
        expect(cells.every((i) => want[i] === cells[0])).toBe(true)
        expect(cells.length).toBe(sizes.get(cells[0]))
      }
    }
    expect(components(masks[masks.length - 1][0], 3)).toEqual([[2], [3], [8]])
    // a mask whose last row is cut short (its cells past the end unset), in a fresh module that met no
    // larger mask yet (its runs' arrays made to the size of this one)
    vi.resetModules()
    const fresh = (await import('./detect.js')).components
    expect(fresh(Uint8Array.from([1, 0, 1, 1, 0, 1, 1, 0, 1, 1]), 3)).toEqual([
      [0, 3, 6, 9],
      [2, 5, 8],
    ])
    expect(components(snake, n)).toHaveLength(1)
    expect(components(masks[masks.length - 2][0], 4)).toEqual([[0, 2, 4, 5, 6, 7], [12], [14]])
    expect(components(masks[masks.length - 3][0], 15)).toHaveLength(113)
  })

  test("a component filled from its smallest cell (componentFrom) is what components lists for it, in index order, where the device listed the map's components: random maps near percolation, smooth ones, a snake, a map's edges", () => {
    const rand = rng(9)
    const maps: [Float32Array, number][] = []
    for (const [n, p] of [
      [7, 0.5],
      [33, 0.59],
      [64, 0.62],
      [96, 0.5],
    ] as const)
      maps.push([Float32Array.from({ length: n * n }, () => (rand() < p ? 0.5 + rand() / 2 : rand() * 0.4)), n])
    maps.push([
      Float32Array.from({ length: 96 * 96 }, (_, i) => Math.abs(Math.sin((i % 96) * 0.21) + Math.cos(Math.floor(i / 96) * 0.17))),
      96,
    ])
    // a snake, its fill far from the scan's order; cells on both edges of each row
    const n = 41
    maps.push(
      [Float32Array.from(snakeMask(n)), n],
      [Float32Array.from({ length: n * n }, (_, i) => (i % n === 0 || i % n === n - 1 ? 1 : 0)), n],
    )
    let filled = 0
    for (const [map, side] of maps) {
      const peak = map.reduce((a, b) => Math.max(a, b), 0)
      const threshold = Math.fround(Math.fround(THRESHOLD_OF_PEAK) * peak)
      for (const cells of components(structureMask(map), side)) {
        expect(componentFrom(map, side, cells[0], threshold)).toEqual(cells)
        filled++
      }
    }
    expect(filled).toBeGreaterThan(100)
  })

  test("a cell's sector comes from integer comparisons that agree with atan2's everywhere, the 45 degree diagonals and the axes included (every offset of a grid, and large random ones)", () => {
    const byAngle = (dx: number, dy: number) => Math.floor(((Math.atan2(dy, dx) + Math.PI) / (2 * Math.PI)) * 16) % 16
    let checked = 0
    for (let dx = -60; dx <= 60; dx++)
      for (let dy = -60; dy <= 60; dy++) {
        expect(sectorOf(dx, dy)).toBe(byAngle(dx, dy))
        checked++
      }
    const rand = rng(3)
    for (let k = 0; k < 20000; k++) {
      const [dx, dy] = [Math.round((rand() - 0.5) * 2 ** 26), Math.round((rand() - 0.5) * 2 ** 26)]
      expect(sectorOf(dx, dy)).toBe(byAngle(dx, dy))
    }
    // each of the 16 sectors, and both sides of each boundary the diagonals and axes make
    expect(
      new Set(
        Array.from({ length: 16 }, (_, s) =>
          sectorOf(
            Math.round(1000 * Math.cos(-Math.PI + (s + 0.5) * (Math.PI / 8))),
            Math.round(1000 * Math.sin(-Math.PI + (s + 0.5) * (Math.PI / 8))),
          ),
        ),
      ),
    ).toEqual(new Set(Array.from({ length: 16 }, (_, s) => s)))
    expect([
      sectorOf(5, 0),
      sectorOf(5, 5),
      sectorOf(0, 5),
      sectorOf(-5, 5),
      sectorOf(-5, 0),
      sectorOf(-5, -5),
      sectorOf(0, -5),
      sectorOf(5, -5),
      sectorOf(0, 0),
    ]).toEqual([8, 10, 12, 14, 0, 2, 4, 6, 8])
    expect(checked).toBe(121 * 121)
  })

  test("a part's shape and halves are measured as a plain pass over a mask of every cell measures them, bit for bit, in integers where docs/detection.md's exact forms say (random maps' parts, discs, rings, a part at an edge); cells out of index order are refused", () => {
    // the control: a mask of the part, the masses in one pass over the map, the moments, offsets and
    // radii in BigInt, every cell's sector by atan2, every cell of the field tested for the inner disc
    const plain = (map: Float32Array, n: number, cells: number[]) => {
      const inside = new Uint8Array(map.length)
      for (const i of cells) inside[i] = 1
      const c = BigInt(cells.length)
      const at = cells.map((i) => [BigInt(i % n), BigInt(Math.floor(i / n))])
      const sum = (f: (p: bigint[]) => bigint) => at.reduce((a, p) => a + f(p), 0n)
      const [X, Y] = [sum(([x]) => x), sum(([, y]) => y)]
      const [cx, cy] = [Number(X) / cells.length, Number(Y) / cells.length]
      const [sxx, syy, sxy] = [c * sum(([x]) => x * x) - X * X, c * sum(([, y]) => y * y) - Y * Y, c * sum(([x, y]) => x * y) - X * Y].map(
        (m) => Number(m) / cells.length,
      )
      const ONE = 2n ** 13n
      const [fx, fy] = [(2n * X * ONE + c) / (2n * c), (2n * Y * ONE + c) / (2n * c)]
      const root = (d: bigint) => {
        let r = BigInt(Math.floor(Math.sqrt(Number(d))))
        while (r * r > d) r--
        while ((r + 1n) * (r + 1n) <= d) r++
        return r
      }
      const offset = (x: bigint, y: bigint) => [x * ONE - fx, y * ONE - fy]
      const radius = (x: bigint, y: bigint) => {
        const [dx, dy] = offset(x, y)
        return root(dx * dx + dy * dy)
      }
      const radii = at.map(([x, y]) => radius(x, y))
      const total = radii.reduce((a, r) => a + r, 0n)
      const meanR = Number(total) / (cells.length * 2 ** 13)
      let reached = 0
      at.forEach(([x, y], k) => {
        const [dx, dy] = offset(x, y).map(Number)
        if (2n * c * radii[k] >= total) reached |= 1 << (Math.floor(((Math.atan2(dy, dx) + Math.PI) / (2 * Math.PI)) * 16) % 16)
      })
      let [innerCells, innerEmpty] = [0, 0]
      for (let i = 0; i < map.length; i++)
        if (2n * c * radius(BigInt(i % n), BigInt(Math.floor(i / n))) <= total)
          [innerCells, innerEmpty] = [innerCells + 1, innerEmpty + (inside[i] ? 0 : 1)]
      // the mass outside: the map's total in 2^-38 of its peak's binade (plainTotal) less the part's
      const massIn = cells.reduce((a, i) => a + map[i], 0)
      const { units, unit } = plainTotal(map)
      const [meanIn, meanOut] = [massIn / cells.length, (units * unit - massIn) / Math.max(1, map.length - cells.length)]
      let gaps = 0
      for (let b = 0; b < 16; b++) gaps += (reached >> b) & 1 ? 0 : 1
      const [tr, det] = [(sxx + syy) / cells.length, (sxx * syy - sxy * sxy) / cells.length ** 2]
      const disc = Math.sqrt(Math.max(0, (tr * tr) / 4 - det))
      return {
        annularity: innerCells ? innerEmpty / innerCells : 0,
        angular_gaps: gaps / 16,
        stability_ratio: meanOut > 0 ? meanIn / meanOut : 1,
        centroid_x: (cx + 0.5) / n,
        centroid_y: (cy + 0.5) / n,
        mean_radius: meanR,
        elongation: Math.sqrt((tr / 2 + disc) / Math.max(tr / 2 - disc, 1e-9)),
      }
    }
    // the halves across the axis, every cell's side decided in BigInt
    const plainHalves = (cells: number[], n: number) => {
      const c = BigInt(cells.length)
      const [xs, ys] = [cells.map((i) => BigInt(i % n)), cells.map((i) => BigInt(Math.floor(i / n)))]
      const sum = (v: bigint[]) => v.reduce((a, b) => a + b, 0n)
      const [sx, sy] = [sum(xs), sum(ys)]
      const A = c * sum(xs.map((x) => x * x)) - sx * sx - (c * sum(ys.map((y) => y * y)) - sy * sy)
      const B = c * sum(xs.map((x, k) => x * ys[k])) - sx * sy
      const R = A * A + 4n * B * B
      const first = (k: number) => {
        const [dX, dY] = [c * xs[k] - sx, c * ys[k] - sy]
        if (B === 0n) return (A >= 0n ? dX : dY) < 0n
        // P + dX sqrt(R) < 0
        const P = dX * A + 2n * dY * B
        if (dX === 0n) return P < 0n
        if ((P <= 0n && dX < 0n) || (P >= 0n && dX > 0n)) return dX < 0n
        return P < 0n ? P * P > dX * dX * R : dX * dX * R > P * P
      }
      return [cells.filter((_, k) => first(k)), cells.filter((_, k) => !first(k))]
    }
    // the rule before: the float axis from measure, a division a cell
    const floatHalves = (cells: number[], f: ReturnType<typeof measure>) => {
      const [cx, cy] = [f.centroid_x * n - 0.5, f.centroid_y * n - 0.5]
      const side = (i: number) => ((i % n) - cx) * f.axis[0] + (Math.floor(i / n) - cy) * f.axis[1] < 0
      return [cells.filter(side), cells.filter((i) => !side(i))]
    }
    let moved = 0
    const rand = rng(8)
    const n = 64
    const maps: Float32Array[] = []
    // smooth random maps (many parts of every shape), and discs and rings of radii on and off the cells' grid
    for (let k = 0; k < 6; k++) {
      const waves = Array.from({ length: 6 }, () => [rand() * 0.4, rand() * 0.4, rand() * 6])
      maps.push(
        Float32Array.from({ length: n * n }, (_, i) =>
          Math.abs(waves.reduce((a, [p, q, o]) => a + Math.sin(p * (i % n) + q * Math.floor(i / n) + o), 0)),
        ),
      )
    }
    for (const [cx, cy, r, ring] of [
      [20, 30, 9.5, 0],
      [31.5, 31.5, 12, 1],
      [0, 40, 14, 0],
      [50.25, 10.75, 7.3, 1],
    ])
      maps.push(
        Float32Array.from({ length: n * n }, (_, i) => {
          const d = Math.hypot((i % n) - cx, Math.floor(i / n) - cy)
          return ring ? Math.exp(-(((d - r) / 2) ** 2)) : Math.max(0, 1 - d / r) + 0.01 * rand()
        }),
      )
    let parts = 0
    for (const map of maps)
      for (const cells of components(structureMask(map), n)) {
        const shape = measure(map, n, cells)
        const { annularity, angular_gaps, stability_ratio, centroid_x, centroid_y, mean_radius, elongation } = shape
        expect({ annularity, angular_gaps, stability_ratio, centroid_x, centroid_y, mean_radius, elongation }).toEqual(plain(map, n, cells))
        const split = halves(cells, n)
        expect(split).toEqual(plainHalves(cells, n))
        moved += split[0].filter((c) => !floatHalves(cells, shape)[0].includes(c)).length
        parts++
      }
    expect(parts).toBeGreaterThan(40)
    // the float rule before put every cell on the same side
    expect(moved).toBe(0)
    // cells exactly on the line across the axis (a diagonal band's middle: no sign, the second half), and
    // cells whose float sign is within its rounding (a long thin slanted bar): the exact comparison's
    const band = Array.from({ length: n * n }, (_, i) => i).filter(
      (i) => Math.abs((i % n) - Math.floor(i / n)) <= 1 && i % n < 9 && i < 9 * n,
    )
    const bar = Array.from({ length: n * n }, (_, i) => i).filter((i) => Math.abs(3 * (i % n) - 7 * Math.floor(i / n)) <= 4 && i % n < 60)
    for (const cells of [band, bar]) expect(halves(cells, n)).toEqual(plainHalves(cells, n))
    expect(halves(band, n)[1]).toContain(4 * n + 4)
    // where the float sign is lost in rounding: dX = F(k), dY = -F(k + 1) across the axis A = B = 1 gives
    // 2 (F(k) phi - F(k + 1)) = -2 psi^k, under 1e-7 of terms of 1e8 at k = 36 and 37: negative at even k
    const fib = [0, 1]
    while (fib.length < 40) fib.push(fib[fib.length - 1] + fib[fib.length - 2])
    for (const k of [36, 37]) expect(Math.sign(sideOf(fib[k], -fib[k + 1], axisOf(1n, 1n)))).toBe(k % 2 ? 1 : -1)
    // a part whose inner disc's edge passes exactly through cells: the four at 1 from its centre (half
    // the mean radius: four cells at 1 and four at 3) are inside, where r equals the bound
    const cross = [
      [0, -3],
      [0, -1],
      [-3, 0],
      [-1, 0],
      [1, 0],
      [3, 0],
      [0, 1],
      [0, 3],
    ].map(([dx, dy]) => (20 + dy) * n + 20 + dx)
    const edge = measure(maps[0], n, cross)
    expect(edge.mean_radius).toBe(2)
    expect(edge.annularity).toBe(1 / 5)
    expect(edge.annularity).toBe(plain(maps[0], n, cross).annularity)
    // and one where half the mean radius falls just under a whole r (16,383.875 of 2^-13): the four
    // cells at 2 from the centre, at r = 16,384, are outside (found by a search over symmetric parts)
    const turns = ([a, b]: number[]) => [
      [a, b],
      [-b, a],
      [-a, -b],
      [b, -a],
    ]
    const ringed = [
      [1, 2],
      [1, 4],
      [2, 4],
      [3, 4],
      [4, 2],
      [4, 3],
      [6, 0],
    ]
      .flatMap(turns)
      .map(([dx, dy]) => (20 + dy) * n + 20 + dx)
    ringed.sort((a, b) => a - b)
    const under = measure(maps[0], n, ringed)
    expect(under.annularity).toBe(1)
    expect(under.annularity).toBe(plain(maps[0], n, ringed).annularity)
    // and one whose half mean radius is not whole (AT_THE_FLOOR), with a cell at its floor
    const diagonal = AT_THE_FLOOR.map(([dx, dy]) => (20 + dy) * n + 20 + dx)
    const sums = shapeSums(diagonal, n)
    expect([sums.radii, sums.reached & (1 << 6), sums.inner]).toEqual([139010, 0, 3])
    const { annularity, angular_gaps } = measure(maps[0], n, diagonal)
    const want = plain(maps[0], n, diagonal)
    expect([annularity, angular_gaps]).toEqual([want.annularity, want.angular_gaps])
    expect(() => measure(maps[0], n, [5, 3, 9])).toThrow(/index order: cell 3 after 5/)
    expect(() => measure(maps[0], n, [5, 5])).toThrow(/index order/)
    expect(() => halves([5, 3], n)).toThrow(/index order: cell 3 after 5/)
  })

  test("the cells a part's mode is taken over: its cells, then its box's others in scan order, sampled as sample() samples the whole list, made without it (parts of random masks, boxes at the edges and past the part); cells out of index order are refused", () => {
    const rand = rng(11)
    // the control: the list made, then 256 of it strided where it is longer
    const plain = (cells: number[], n: number, [x0, x1, y0, y1]: number[]) => {
      const list = [...cells]
      for (let y = y0; y <= y1; y++) for (let x = x0; x <= x1; x++) if (!cells.includes(y * n + x)) list.push(y * n + x)
      return list.length <= MAX_SAMPLED_CELLS
        ? list
        : Array.from({ length: MAX_SAMPLED_CELLS }, (_, i) => list[Math.floor((i * list.length) / MAX_SAMPLED_CELLS)])
    }
    let [short, long] = [0, 0]
    for (const [n, p] of [
      [12, 0.6],
      [40, 0.55],
      [64, 0.7],
    ] as const) {
      const parts = components(
        Uint8Array.from({ length: n * n }, () => (rand() < p ? 1 : 0)),
        n,
      ).slice(0, 6)
      for (const cells of parts) {
        const [a, b, c, d] = [0, 1, 2, 3].map(() => Math.floor(rand() * n))
        const box = [Math.min(a, b), Math.max(a, b), Math.min(c, d), Math.max(c, d)]
        const want = plain(cells, n, box)
        expect(reachSample(cells, n, box)).toEqual(want)
        expect(reachSample(cells, n, [0, n - 1, 0, n - 1])).toEqual(plain(cells, n, [0, n - 1, 0, n - 1]))
        if (want.length === MAX_SAMPLED_CELLS) long++
        else short++
      }
    }
    expect(short).toBeGreaterThan(2)
    expect(long).toBeGreaterThan(2)
    expect(() => reachSample([5, 3], 8, [0, 7, 0, 7])).toThrow(/index order/)
  })

  test("a part outshone by the map is one whose measured stability ratio fails the contrast rule, exactly, whatever the cells' scale: ratios a float32 step either side of the rule, maps of one value and of values over 60 binades, a part with nothing outside it", () => {
    const rand = rng(13)
    const n = 48
    const cells = n * n
    let [outshoneCount, faint] = [0, 0]
    const check = (map: Float32Array, part: number[]) => {
      const mass = part.reduce((a, i) => a + map[i], 0)
      const skipped = outshone(mass, part.length, fieldTotal(map).total, cells)
      const ratio = measure(map, n, part).stability_ratio
      expect(skipped).toBe(ratio < CLASS_RULES.contrast)
      if (ratio < CLASS_RULES.contrast) faint++
      if (skipped) outshoneCount++
    }
    // a block of cells at `inside` on a map of `outside`: the ratio set at the rule and a hair either side
    const block = Array.from({ length: 36 }, (_, k) => (10 + Math.floor(k / 6)) * n + 10 + (k % 6))
    for (const scale of [1e-30, 1e-3, 1, 1e25])
      for (const off of [-1e-6, -6e-8, 0, 6e-8, 1e-6]) {
        const outside = Math.fround(scale)
        const map = new Float32Array(cells).fill(outside)
        for (const i of block) map[i] = Math.fround(outside * CLASS_RULES.contrast * (1 + off))
        check(map, block)
      }
    // random maps whose cells span 60 binades; their components' parts
    for (let k = 0; k < 30; k++) {
      const map = Float32Array.from({ length: cells }, () => 2 ** (-60 * rand() ** 3) * (0.5 + rand()))
      const peak = map.reduce((a, v) => Math.max(a, v), 0)
      for (const part of components(
        Uint8Array.from(map, (v) => (v >= 0.3 * peak ? 1 : 0)),
        n,
      ))
        check(map, part)
    }
    expect(faint).toBeGreaterThan(5)
    expect(outshoneCount).toBe(faint)
    // a part of the whole map, or with nothing outside it at the total's resolution (2^-38 of the
    // peak's binade), stands out of nothing: a ratio of 1
    const quiet = new Float32Array(cells).fill(2 ** -40)
    for (const i of block) quiet[i] = 1
    check(quiet, block)
    expect(measure(quiet, n, block).stability_ratio).toBe(1)
    expect(outshone(1, cells, 1, cells)).toBe(true)
  })

  test("a map's total: each cell floored to 2^-13 of its masked cells' units, summed exactly (a plain BigInt sum); masses exact in it; subnormal and negative cells 0", () => {
    const rand = rng(21)
    for (const [n, spread] of [
      [48, 60],
      [96, 8],
      [512, 30],
    ]) {
      const map = Float32Array.from({ length: n * n }, () => 2 ** (-spread * rand() ** 2) * (0.5 + rand()) * 3e4)
      const { units, unit, total } = fieldTotal(map)
      expect({ units, unit }).toEqual(plainTotal(map))
      expect(total).toBe(units * unit)
      // a component's mass is whole units: exact in the total
      for (const part of components(structureMask(map), n)) {
        const mass = part.reduce((a, i) => a + map[i], 0)
        expect(Number.isInteger(mass / unit)).toBe(true)
      }
    }
    // 2^24 cells at the peak, as many as N = 4096 has: a sum past 2^53, one rounding
    const big = new Float32Array(4096 * 4096).fill(Math.fround(1 - 2 ** -24))
    const units = fieldTotal(big).units
    expect(units).toBe(Number(BigInt(2 ** 24 - 1) * 2n ** 15n * 2n ** 24n))
    expect(units).toBeGreaterThan(2 ** 62)
    // subnormal cells and cells below 0 count 0; a NaN or an infinity, or a peak of 0, gives 0
    const odd = Float32Array.from([1, 2 ** -130, -1, 0.5])
    expect(fieldTotal(odd).units).toBe(1.5 / fieldTotal(odd).unit)
    for (const v of [Number.NaN, Number.POSITIVE_INFINITY]) expect(fieldTotal(Float32Array.from([1, v])).total).toBe(0)
    expect(fieldTotal(new Float32Array(9)).total).toBe(0)
  })

  test("a part's sustain: its later sums each floored to fieldTotal's unit of those sums, summed exactly (a plain BigInt sum), over the samples taken, over its mass; in any order; past 2^53; cells under the unit, subnormal or below 0 count 0", () => {
    const plainSustain = (cells: number[], first: Float32Array, later: Later, { unit } = plainTotal(later.sums)) => {
      const units = cells.reduce((a, c) => a + (later.sums[c] >= 2 ** -126 ? BigInt(Math.floor(later.sums[c] / unit)) : 0n), 0n)
      return (Number(units) * unit) / later.taken / cells.reduce((a, c) => a + first[c], 0)
    }
    let [parts, floored] = [0, 0]
    // some cells faded by 2^40 and more
    for (const { n, first, later } of spreadMaps(rng(23), 512, 50)) {
      const total = plainTotal(later.sums)
      for (const part of components(structureMask(first), n)) {
        const sustain = sustainOf(part, first, later)
        expect(sustain).toBe(plainSustain(part, first, later, total))
        expect(sustainOf([...part].reverse(), first, later)).toBe(sustain)
        parts++
        if (part.some((c) => later.sums[c] < total.unit)) floored++
      }
    }
    // the control: parts with cells under the unit, which a plain sum would count
    expect([parts > 20, floored > 0]).toEqual([true, true])
    // 2^20 cells at the peak: units past 2^53, one rounding
    const big = { sums: new Float32Array(1 << 20).fill(Math.fround(1 - 2 ** -24)), taken: 1 }
    const all = Array.from({ length: 1 << 20 }, (_, c) => c)
    expect(sustainOf(all, new Float32Array(1 << 20).fill(1), big)).toBe(plainSustain(all, new Float32Array(1 << 20).fill(1), big))
    expect((2 ** 20 * (1 - 2 ** -24)) / fieldTotal(big.sums).unit).toBeGreaterThan(2 ** 53)
    // the peak (1) is outside the part: 2^-40, under its unit 2^-38, a subnormal cell and one below 0 count 0
    const odd = { sums: Float32Array.from([1, 2 ** -40, 2 ** -130, -1, 0.5]), taken: 2 }
    const ones = new Float32Array(5).fill(1)
    expect(sustainOf([1, 2, 3, 4], ones, odd)).toBe(0.5 / 2 / 4)
    expect(sustainOf([1, 2, 3], ones, odd)).toBe(0)
    // a subnormal cell counts 0 where the unit is under it too (an adapter may flush it to 0)
    expect(sustainOf([1], ones, { sums: Float32Array.from([2 ** -100, 2 ** -130]), taken: 1 })).toBe(0)
    // sums that are not a map (a NaN or an infinity), or all 0, or a part that held nothing: 0
    for (const v of [Number.NaN, Number.POSITIVE_INFINITY])
      expect(sustainOf([0], ones, { sums: Float32Array.from([1, v]), taken: 1 })).toBe(0)
    expect(sustainOf([0], ones, { sums: new Float32Array(2), taken: 1 })).toBe(0)
    expect(sustainOf([0], new Float32Array(2), { sums: Float32Array.from([1, 1]), taken: 1 })).toBe(0)
  })

  test("a structure's persistence: the cosine of its cells' first and later values as whole units (exact sums, a plain BigInt sum's figure) times its sustain capped at 1; the same bits in the map's units as in the part's; near the float sums of the means", () => {
    const bits = (v: number) => new Uint32Array(Float32Array.of(v).buffer)[0]
    const unitOf = (top: number, lift: number) => 2 ** ((bits(top) >>> 23) - 127 - 23 - lift)
    let parts = 0
    for (const { n, first, later } of spreadMaps(rng(29), 256, 30)) {
      const peak = first.reduce((a, v) => Math.max(a, v), 0)
      const laterPeak = later.sums.reduce((a, v) => Math.max(a, v), 0)
      for (const part of components(structureMask(first), n)) {
        const a = part.map((c) => first[c])
        const sustain = sustainOf(part, first, later)
        const persistence = persistenceOf(a, part, later, sustain)
        // the reference: BigInt sums of the units, each made a float64 once
        const [qa, qb] = [
          a.map((v) => BigInt(v / unitOf(peak, 2))),
          part.map((c) => BigInt(Math.floor(later.sums[c] / unitOf(laterPeak, 2)))),
        ]
        const [ab, aa, bb] = [qa.map((x, k) => x * qb[k]), qa.map((x) => x * x), qb.map((x) => x * x)].map((p) =>
          Number(p.reduce((x, y) => x + y, 0n)),
        )
        expect(persistence).toBe(Math.max(0, Math.min(1, (aa && bb ? ab / Math.sqrt(aa * bb) : 0) * Math.min(1, sustain))))
        // the map's cells a power of two larger: the same bits
        expect(
          persistenceOf(
            a.map((v) => v * 2 ** 20),
            part,
            later,
            sustain,
          ),
        ).toBe(persistence)
        // the rule before: float64 sums of the values and the means
        const means = part.map((c) => Math.fround(later.sums[c] / 10))
        const [fab, faa, fbb] = [
          a.reduce((x, v, k) => x + v * means[k], 0),
          a.reduce((x, v) => x + v * v, 0),
          means.reduce((x, v) => x + v * v, 0),
        ]
        const before = Math.min(
          1,
          (fab / Math.sqrt(faa * fbb)) * Math.min(1, means.reduce((x, v) => x + v, 0) / a.reduce((x, v) => x + v, 0)),
        )
        expect(Math.abs(persistence - before)).toBeLessThan(1e-6)
        parts++
      }
    }
    expect(parts).toBeGreaterThan(20)
    // no later unit (sums with a NaN, or all 0), no sustain or no first values: 0
    const ones = new Float32Array(4).fill(1)
    expect(persistenceOf(ones, [0, 1, 2, 3], { sums: Float32Array.from([1, 1, Number.NaN, 1]), taken: 1 }, 1)).toBe(0)
    expect(persistenceOf(ones, [0, 1, 2, 3], { sums: new Float32Array(4), taken: 1 }, 1)).toBe(0)
    expect(persistenceOf(ones, [0, 1, 2, 3], { sums: ones, taken: 1 }, 0)).toBe(0)
    expect(persistenceOf(ones, [0, 1, 2, 3], { sums: ones, taken: 1 }, 1)).toBe(1)
    expect(persistenceOf(new Float32Array(4), [0, 1, 2, 3], { sums: ones, taken: 1 }, 1)).toBe(0)
  })

  test("the threshold is a float32 rule, as a kernel's f32 product makes it: a cell at fround(fround(0.45) x peak) is in, the float below it out; no cell where the peak is 0 or NaN", () => {
    const at = Math.fround(Math.fround(THRESHOLD_OF_PEAK) * 3)
    const below = at - 2 ** -23 // the float32 below `at` (in [1, 2) an ulp is 2^-23)
    expect(Math.fround(below)).toBe(below)
    // the float64 rule would leave `at` out: the two rules differ here
    expect(at < THRESHOLD_OF_PEAK * 3).toBe(true)
    expect([...structureMask(Float32Array.from([3, at, below, 0]))]).toEqual([1, 1, 0, 0])
    expect([...structureMask(new Float32Array(4))]).toEqual([0, 0, 0, 0])
    expect([...structureMask(Float32Array.from([3, Number.NaN, 3, 2]))]).toEqual([0, 0, 0, 0])
  })
})

describe('classes from dynamics', () => {
  test('the confusion matrix over 8 noisy, moved and rephased copies of each known dynamics is at least 90% diagonal, every row at least 7 of 8', async () => {
    const kinds = Object.keys(KNOWN) as (keyof typeof KNOWN)[]
    const matrix: Record<string, Record<string, number>> = {}
    let diagonal = 0
    for (const kind of kinds) {
      matrix[kind] = {}
      for (let seed = 1; seed <= 8; seed++) {
        const label = await labelOf(kind, 1000 * kinds.indexOf(kind) + seed)
        matrix[kind][label] = (matrix[kind][label] ?? 0) + 1
        if (label === expected(kind)) diagonal++
      }
    }
    expect(matrix, JSON.stringify(matrix)).toBeDefined()
    expect(diagonal / (8 * kinds.length), JSON.stringify(matrix)).toBeGreaterThanOrEqual(0.9)
    for (const kind of kinds)
      expect(matrix[kind][expected(kind)] ?? 0, `${kind}: ${JSON.stringify(matrix[kind])}`).toBeGreaterThanOrEqual(7)
    expect(kinds.filter((k) => expected(k) === k && k !== 'fading').sort()).toEqual([...CLASS_TOKENS].sort())
  })

  test('a vortex winds once, a standing mode stands and does not wind', async () => {
    const rand = rng(5)
    const knot = record(KNOWN.phase_knot(rand).u, rand)
    const [k] = await detect(knot, oneSample(stabilityMap(knot)))
    expect(Math.abs(k.features.winding)).toBe(1)
    expect(k.features.standing).toBeLessThan(0.5)
    const blob = record(KNOWN.standing_echo(rand).u, rand)
    const [b] = await detect(blob, oneSample(stabilityMap(blob)))
    expect(b.features.winding).toBe(0)
    expect(b.features.standing).toBeGreaterThan(0.8)
    expect(b.features.frequency).toBeCloseTo(4 / (T * DT), 6)
  })

  test('noise alone makes no structure; an empty recording has none', async () => {
    const rand = rng(9)
    const noise = record(() => 0, rand, 0.05)
    expect(await detect(noise, oneSample(stabilityMap(noise)))).toEqual([])
    const empty = record(() => 0, rand, 0)
    expect(await detect(empty, oneSample(new Float32Array(N * N)))).toEqual([])
  })
})

describe('the cells detection reads', () => {
  /**
   * The window with no plane but the stability map readable, power sums only of the lists listed and
   * planes at a mode's bin only of the cells listed with that mode, each made from every plane, as the
   * GPU makes them where the planes live.
   */
  // a list as a string of its cells: the plain key ListIndex stands in for
  const listKey = (cells: ArrayLike<number>) => Array.prototype.join.call(cells, ',')
  const only = (spec: WindowSpectra, reads: WindowReads) => {
    const lists = Array.from(reads.ends, (end, l) => listKey(reads.lists.subarray(l ? reads.ends[l - 1] : 0, end)))
    const modes = new Set(
      Array.from({ length: reads.modes.length / 2 }, (_, k) => `${reads.modes[2 * k]}/${lists[reads.modes[2 * k + 1]]}`),
    )
    return new WindowSpectra(spec.n, spec.dt, spec.frames, {
      plane: (p, c) => {
        if (p !== 1) throw new Error(`plane ${p} of cell ${c} read`)
        return spec.source.plane(p, c)
      },
      powers: (list) => {
        if (!lists.includes(listKey(list))) throw new Error(`power sums of ${list.length} cells from cell ${list[0]} read`)
        return powerSumsOf(spec, list)
      },
      modePlanes: (cell, mode, bin) => {
        if (!modes.has(`${cell}/${listKey(mode)}`)) throw new Error(`cell ${cell} read at its mode's bin`)
        return [0, 2 * bin, 2 * bin + 1].map((p) => spec.source.plane(p, cell))
      },
    })
  }

  /** The window with its map's components listed (PlaneSource.listed). */
  const withList = (spec: WindowSpectra, list: Float64Array) =>
    new WindowSpectra(spec.n, spec.dt, spec.frames, {
      plane: (p, c) => spec.source.plane(p, c),
      listed: () => list,
    })

  test("a part's second region, a component outshone, is filled from the device's list where the measure handed on did not make its cells", () => {
    // a bright disc that stands out, and a dimmer square of more cells (over half its mass) that does not: the disc's regions are both
    const n = 48
    const map = new Float32Array(n * n).fill(0.4)
    for (let i = 0; i < n * n; i++) {
      const [x, y] = [i % n, Math.floor(i / n)]
      if ((x - 12) ** 2 + (y - 12) ** 2 <= 25) map[i] = 1
      if (x >= 30 && x < 41 && y >= 30 && y < 41) map[i] = 0.46
    }
    const spectra = (list?: Float64Array) =>
      new WindowSpectra(n, DT, T, { plane: (p, c) => (p === 1 ? map[c] * T : 0), listed: list && (() => list) })
    const list = listedComponents(map, n)!
    expect(list.length).toBe(7)
    const want = cellsRead(spectra(), oneSample(map), 1)
    const first = spectra(list)
    expect(cellsRead(first, oneSample(map), 1)).toEqual(want)
    const packed = measuredOf(first.stability())!
    // the disc's 81 cells, then the square's 121, made for the disc's regions; handed on as if they were not
    expect(Array.from(packed.ends)).toEqual([81, 202])
    const handed = spectra(list)
    holdMeasured(handed.stability(), n, { ...packed, cells: packed.cells.subarray(0, 81), ends: Int32Array.from([81, 81]) }, list)
    expect(cellsRead(handed, oneSample(map), 1)).toEqual(want)
    // the square is a list the window reads (the disc's second region)
    const square = rankedComponents(map, n)[1].cells
    expect(Array.from(want.ends, (end, l) => want.lists.subarray(l ? want.ends[l - 1] : 0, end).join())).toContain(square.join())
  })

  test("detection reads no plane but the stability map, only the power sums and the cells at a mode cellsRead names, and finds the same structures; the part it plans to perturb is the first structure wherever the shape decides, and so is one of the candidates the listed parts' sums make", async () => {
    const kinds = Object.keys(KNOWN) as (keyof typeof KNOWN)[]
    // each known dynamics alone, and two of them side by side (a second component: regions, a second structure)
    const pairs: [keyof typeof KNOWN, keyof typeof KNOWN | undefined][] = [
      ...kinds.map((k) => [k, undefined] as [keyof typeof KNOWN, undefined]),
      ['phase_knot', 'standing_echo'],
      ['fading', 'memory_seed'],
    ]
    let [found, unmade] = [0, 0]
    const [decided, undecided, ended, open]: string[][] = [[], [], [], []]
    for (const [i, [a, b]] of pairs.entries()) {
      const rand = rng(300 + i)
      const [ka, kb] = [KNOWN[a](rand), b && KNOWN[b](rand)]
      // the second one moved to the other half of the field
      const rec = record((x, y, t) => ka.u(x, y, t) + (kb ? kb.u((x + 0.5) % 1, y, t) : 0), rand)
      const spec = spectraFor(rec)
      const later = oneSample(stabilityMap(rec).map((v) => ka.kept * v))
      for (const limit of [1, Infinity]) {
        const reads = cellsRead(spec, later, limit)
        const want = await detect(spec, later, limit)
        expect(await detect(only(spec, reads), later, limit), `${a} ${b ?? ''} limit ${limit}`).toEqual(want)
        // with the map's components as the device lists them: the same reads and structures, no map labelled;
        // handed on after a cells job (measuredOf, holdMeasured) with the cells of outshone parts never made
        const list = listedComponents(spec.stability(), N)!
        expect(cellsRead(withList(spec, list), later, limit)).toEqual(reads)
        expect(await detect(withList(spec, list), later, limit)).toEqual(want)
        const measuredFirst = withList(spec, list)
        cellsRead(measuredFirst, later, limit)
        const packed = measuredOf(measuredFirst.stability())!
        unmade += Array.from(packed.ends).filter((end, k) => end === (k ? packed.ends[k - 1] : 0)).length
        const handed = withList(spec, list)
        holdMeasured(handed.stability(), N, packed, list)
        expect(await detect(handed, later, limit)).toEqual(want)
        // the control: a list of no components finds nothing, so the list is what detection took; one that
        // is not this map's (a count off by one) is refused where its cells are made
        if (want.length) {
          expect(await detect(withList(spec, list.subarray(0, 1)), later, limit)).toEqual([])
          const wrong = list.map((v, k) => (k % 3 === 2 ? v + 1 : v))
          await expect(detect(withList(spec, wrong), later, limit)).rejects.toThrow(/has \d+ cells, but \d+ in this map/)
        }
        found += want.length
        if (limit === 1) {
          // the part a perturbation would act on, from the maps alone: where its shape classes it, the first
          // structure, measured alike; where no part holds, none is found
          const { planned } = reads
          if (!planned) expect(want).toEqual([])
          else if (planned.decided) {
            const first = want[0]
            expect(first.cells).toContain(planned.cell)
            const { cells, sx, sy, sxx, syy, sxy, radii } = shapeSums(first.cells, N)
            expect(planned).toMatchObject({ area: first.features.area, sums: { cells, sx, sy, sxx, syy, sxy, radii } })
            decided.push(first.class)
          } else undecided.push(want[0]?.class ?? 'none')
          // the parts a perturbation may act on, from the listed parts' sums alone: the first structure is
          // one of them, planned alike; where none holds, none is found
          const { parts, complete } = listedTop(spec.stability(), N, later)?.candidates ?? NO_CANDIDATES
          expect(complete).toBe(true)
          const [first] = want
          if (!parts.length) expect(want).toEqual([])
          if (first) {
            const { cells, sx, sy, sxx, syy, sxy, radii } = shapeSums(first.cells, N)
            const planned = { root: first.cells[0], sums: { cells, sx, sy, sxx, syy, sxy, radii } }
            expect(parts.find((p) => p.root === first.cells[0])).toEqual(planned)
          }
          // ended by a part its shape decides, or by the parts running out
          const area = (parts.at(-1)?.sums.cells ?? NaN) / (N * N)
          ;(area >= CLASS_RULES.field_wide || area < CLASS_RULES.compact ? ended : open).push(first?.class ?? 'none')
        }
        if (want.length) {
          // the controls: without the cells read at a mode's bin detection fails, and so it does without the lists' sums
          await expect(detect(only(spec, { ...reads, modes: new Int32Array(0) }), later, limit)).rejects.toThrow(/read at its mode's bin/)
          const noLists = { lists: new Int32Array(0), ends: new Int32Array(0), modes: new Int32Array(0) }
          await expect(detect(only(spec, noLists), later, limit)).rejects.toThrow(/power sums of \d+ cells/)
          const cells = new Set([...reads.lists, ...reads.modes.filter((_, k) => k % 2 === 0)])
          if (want.every((s) => s.features.area < 0.2)) expect(cells.size).toBeLessThan((N * N) / 2)
        }
      }
    }
    expect(found).toBeGreaterThan(pairs.length)
    // components outshone whose cells a listed map never made
    expect(unmade).toBeGreaterThan(0)
    // both kinds of plan met: shapes that decide, and parts only their spectra class
    expect(decided.length).toBeGreaterThan(0)
    expect(undecided.length).toBeGreaterThan(0)
    expect(ended.length).toBeGreaterThan(0)
    expect(open.length).toBeGreaterThan(0)
  })
})

describe("the perturbation's answers: a field-wide structure's basin, a smaller one's regrowth", () => {
  /** Pearson correlation of two maps, float64 sums in cell order: the basin's definition (docs/detection.md). */
  const pearson = (a: Float32Array, b: Float32Array) => {
    let [ma, mb] = [0, 0]
    for (let i = 0; i < a.length; i++) {
      ma += a[i]
      mb += b[i]
    }
    ma /= a.length
    mb /= a.length
    let [ab, aa, bb] = [0, 0, 0]
    for (let i = 0; i < a.length; i++) {
      const [x, y] = [a[i] - ma, b[i] - mb]
      ab += x * y
      aa += x * x
      bb += y * y
    }
    return aa && bb ? ab / Math.sqrt(aa * bb) : 0
  }
  test("is the share of the way from the correlation of |kick| with the map before back to the pattern: float32 sums within 1e-5 of float64's, from the sums as from their means (maps of 9,216 cells, flat ones too)", () => {
    const rand = rng(11)
    const map = (f: (i: number) => number) => Float32Array.from({ length: 96 * 96 }, (_, i) => f(i))
    let worst = 0
    for (let k = 0; k < 40; k++) {
      const before = k % 9 === 0 ? map(() => 0) : map(() => rand() * (k % 5))
      const kick = map(() => (rand() - 0.5) * (k % 3))
      const after = map((i) => 0.7 * before[i] + 0.3 * rand())
      const base = Math.max(0, pearson(before, kick.map(Math.abs)))
      const want = base >= 1 ? 0 : Math.max(0, Math.min(1, (pearson(before, after) - base) / (1 - base)))
      const got = basinOf(before, kick, after)
      // a flat map or kick correlates with nothing: exactly 0, as in float64
      if (want === 0 && (k % 9 === 0 || k % 5 === 0 || k % 3 === 0)) expect(got).toBe(0)
      worst = Math.max(worst, Math.abs(got - want))
      // evolve measures it from a window's sums of 10 samples, not their means
      const tenfold = (m: Float32Array) => m.map((v) => v * 10)
      expect(basinOf(tenfold(before), kick, tenfold(after))).toBeCloseTo(want, 5)
    }
    expect(worst).toBeLessThan(1e-5)
    expect(worst).toBeGreaterThan(0)
  })

  test("a smaller structure's regrowth is the correlation over its disc of the map after with the one before: float32 sums (regrowthSums) within 1e-5 of float64's over the disc's cells, from the sums as from their means, 0 where either is flat", () => {
    const rand = rng(12)
    const n = 96
    let worst = 0
    for (let k = 0; k < 40; k++) {
      const window = randomPart(rand, n, 30)
      if (!window.length) continue
      const before = Float32Array.from({ length: n * n }, () => (k % 9 === 0 ? 0 : rand() * (1 + (k % 5))))
      const after = before.map((v) => (0.2 + (k % 4) / 5) * v + 0.3 * rand())
      const at = (m: Float32Array) => Float32Array.from(window, (c) => m[c])
      const want = Math.max(0, Math.min(1, pearson(at(before), at(after))))
      const got = regrowthFrom(regrowthSums(before, after, window))
      if (k % 9 === 0) expect(got).toBe(0)
      worst = Math.max(worst, Math.abs(got - want))
      const tenfold = (m: Float32Array) => m.map((v) => v * 10)
      expect(regrowthFrom(regrowthSums(tenfold(before), tenfold(after), window))).toBeCloseTo(want, 5)
    }
    expect(worst).toBeLessThan(1e-5)
    expect(worst).toBeGreaterThan(0)
  })
})

describe('signatures', () => {
  const ringAt = (cx: number, cy: number, n = N): Recording => ({
    n,
    dt: DT,
    frames: [0, 1, 2, 3].map(
      (k) => record((x, y, t) => gauss((Math.hypot(x - cx, y - cy) - 0.2) ** 2, 0.03) * Math.cos(bin(2) * (t + k)), rng(1), 0, n).frames[k],
    ),
  })

  test('the same shape elsewhere on the field has the same signature and hash', async () => {
    const a = ringAt(0.45, 0.45)
    const b = ringAt(0.45 + 5 / N, 0.45 + 3 / N) // moved by whole cells
    const [sa] = await detect(a, oneSample(stabilityMap(a)))
    const [sb] = await detect(b, oneSample(stabilityMap(b)))
    expect(cosine(sa.signature, sb.signature)).toBeGreaterThan(0.999)
    expect(sa.hash).toBe(sb.hash)
    expect(Math.hypot(...sa.signature)).toBeCloseTo(1, 9)
  })

  test('the same shape at another resolution has a nearly equal signature', async () => {
    const a = ringAt(0.5, 0.5)
    const b = ringAt(0.5, 0.5, 96)
    const [sa] = await detect(a, oneSample(stabilityMap(a)))
    const [sb] = await detect(b, oneSample(stabilityMap(b)))
    expect(cosine(sa.signature, sb.signature)).toBeGreaterThan(0.95)
    expect(sa.hash).toMatch(/^[0-9a-f]{64}$/)
  })
})

test('a recording with a NaN anywhere (a field that diverged) has no structure; the control without it has', async () => {
  const blob = (x: number, y: number, t: number) => gauss((x - 0.5) ** 2 + (y - 0.5) ** 2, 0.08) * Math.cos(bin(3) * t)
  const clean = record(blob, rng(3), 0.01)
  const later = oneSample(stabilityMap(clean))
  expect(await detect(clean, later)).not.toHaveLength(0)
  // the NaN in the first frame's last cell, after the peak: the map's last cell is NaN
  const diverged = { ...clean, frames: clean.frames.map((f, k) => (k === 0 ? f.map((v, i) => (i === f.length - 1 ? Number.NaN : v)) : f)) }
  expect(Number.isNaN(stabilityMap(diverged).at(-1))).toBe(true)
  expect(await detect(diverged, later)).toEqual([])
})
