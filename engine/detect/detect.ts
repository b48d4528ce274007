// Structure detection (docs/detection.md): threshold a recorded window's stability map, find connected
// components, measure each one's shape and dynamics, classify it by documented rules of dynamics, and
// give it a signature (translation-normalized, L2-normalized) with a blake3 hash of its quantized form.
import type { ClassToken } from '../contracts/registry.js'
import { blake3Hex } from '../util/hash.js'
import { CrystalError } from '../errors.js'
import { spectraOf } from '../cpu/spectra.js'
import { MAX_SAMPLED_CELLS, measureDynamics, type DynamicsFeatures, reachSample, type Recording, sample, strongestBin } from './dynamics.js'
import { modalMap, type ModalSamples, modalSamples } from './modal.js'
import { centreOf, circleCells, ONE, type PartLists, type Placement, placementOf, reachBox, signatureWindow } from './placement.js'
import { type PartReads, ServedSpectra } from './served.js'
import { ListIndex, powerSumsOf, WindowSpectra } from './spectra.js'
import { candidateTable } from './candidates.js'
import type { FieldShapes, FieldTop, LaterSums, PersistenceSums, PlanSums, ShapeSums, TopPart } from './sums.js'

/** Side of the square signature patch: SIGNATURE_SIDE^2 floats of shape (then the modal map's). */
export const SIGNATURE_SIDE = 16
/**
 * Share of a signature's cosine that comes from the modal map rather than the shape: most structures
 * are blobs, so shape alone barely tells two genomes apart, while how their power divides among the
 * modes and places does, and it survives a change of noise seed (docs/detection.md has the figures).
 */
export const MODAL_WEIGHT = 0.75
/** Cells at or above this fraction of the map's peak stability belong to structures. */
export const THRESHOLD_OF_PEAK = 0.45
/** Components smaller than this many cells are noise, not structures. */
export const MIN_AREA_CELLS = 4
const SECTORS = 16
const ALL_SECTORS = (1 << SECTORS) - 1

function bitsSet(bits: number): number {
  let count = 0
  for (let b = bits; b; b &= b - 1) count++
  return count
}

export interface ShapeFeatures {
  /** Cells in the component as a fraction of the field. */
  area: number
  /** sqrt of the ratio of the principal second moments (1 = isotropic). */
  elongation: number
  /** Fraction of the inner disc (within half the mean radius of the centroid) not in the component: 1 = a hole in the middle. */
  annularity: number
  /** Fraction of 16 angular sectors around the centroid that the component does not reach. */
  angular_gaps: number
  /** Mean stability inside the component over the mean outside it. */
  stability_ratio: number
  centroid_x: number
  centroid_y: number
}

export type StructureFeatures = ShapeFeatures & DynamicsFeatures

/**
 * How a structure answered a perturbation (docs/detection.md): `basin`, for a field-wide one kicked
 * by random pulses, is the share of the way back to its own pattern the field went (1 = all the way,
 * 0 = no nearer than the kick itself); `regrowth`, for a smaller one with half of it erased, is how
 * well it re-formed in place (1 = as before, 0 = nothing like it).
 */
export interface Response {
  basin?: number
  regrowth?: number
}

export interface Structure {
  class: ClassToken
  confidence: number
  features: StructureFeatures
  /** Set once a perturbation experiment has been run on it (discovery does; a synthetic recording cannot). */
  response?: Response
  /** Stability mass (sum over the component): how much of the field's persistence it holds. */
  mass: number
  cells: number[]
  signature: number[]
  hash: string
}

/** Sum of `map` over `cells`. */
function massOf(map: Float32Array, cells: number[]): number {
  let s = 0
  for (const i of cells) s += map[i]
  return s
}

/** Each run's first cell, the cell after it and its parent: made once a thread and grown as needed (three zeroed arrays a call were a sixth of components' time). */
let runs = { start: new Int32Array(0), end: new Int32Array(0), parent: new Int32Array(0) }
function runScratch(count: number): typeof runs {
  if (runs.start.length < count) runs = { start: new Int32Array(count), end: new Int32Array(count), parent: new Int32Array(count) }
  return runs
}

/**
 * 4-connected components of the cells where mask is set, largest first (ties by their smallest cell),
 * each one's cells in index order: the order sums over them go in on every backend (docs/detection.md).
 * A union-find over each row's runs of set cells, a run joined to the runs of the row above that it
 * touches, each set's root its first run in the scan, which holds the component's smallest cell (a
 * union-find over cells took twice as long: a field's largest component is thousands of cells).
 */
export function components(mask: Uint8Array, n: number): number[][] {
  // a last row cut short is a row (the cells past the mask are not set)
  const rows = Math.ceil(mask.length / n)
  // at most half a row's cells, rounded up, start a run
  const { start, end, parent } = runScratch(rows * ((n + 1) >> 1))
  const find = (r: number) => {
    while (parent[r] !== r) {
      // path halving
      parent[r] = parent[parent[r]]
      r = parent[r]
    }
    return r
  }
  let count = 0
  let above = 0
  for (let y = 0; y < rows; y++) {
    const [row, base] = [count, y * n]
    // the first run of the row above that may touch this row's next run
    let first = above
    for (let x = 0; x < n; ) {
      if (!mask[base + x]) {
        x++
        continue
      }
      const from = x
      while (x < n && mask[base + x]) x++
      const r = count++
      start[r] = base + from
      end[r] = base + x
      parent[r] = r
      // the runs above over columns [from, x): the roots linked, the larger to the smaller
      while (first < row && end[first] - base + n <= from) first++
      for (let q = first; q < row && start[q] - base + n < x; q++) {
        const [a, b] = [find(q), find(r)]
        if (a !== b) parent[Math.max(a, b)] = Math.min(a, b)
      }
    }
    above = row
  }
  const out: number[][] = []
  // each root's component, numbered as its first run comes
  const id = new Int32Array(count)
  for (let r = 0; r < count; r++) {
    const root = find(r)
    if (root === r) {
      id[r] = out.length
      out.push([])
    }
    const cells = out[id[root]]
    for (let i = start[r]; i < end[r]; i++) cells.push(i)
  }
  return out.sort((a, b) => b.length - a.length)
}

let fill = { seen: new Uint8Array(0), stack: new Int32Array(0) }

/**
 * The cells of the 4-connected component of the cells at or above `threshold` that holds `root` (its
 * smallest cell, where the device listed it), in index order: what `components` lists for it, made
 * without labelling the rest of the map (engine/gpu/components.ts). A fill from the root, then its box
 * scanned in index order for the cells it reached.
 */
export function componentFrom(map: Float32Array, n: number, from: number, threshold: number): number[] {
  // the root as a small integer: one read from a list (a Float64Array) can come boxed as a double, and
  // one double stored in `out` turns this allocation site's arrays to doubles from then on, which every
  // loop over a part's cells then reads slower (measured in the CHANGELOG)
  const root = from | 0
  const len = map.length
  if (fill.seen.length < len) fill = { seen: new Uint8Array(len), stack: new Int32Array(len) }
  const { seen, stack } = fill
  let top = 0
  stack[top++] = root
  seen[root] = 1
  // the box: its columns from each cell's, its rows from the least and the greatest cell (no division a cell)
  let [left, right, least, most, count] = [root % n, root % n, root, root, 0]
  while (top) {
    const i = stack[--top]
    count++
    const x = i % n
    if (x < left) left = x
    else if (x > right) right = x
    if (i > most) most = i
    else if (i < least) least = i
    if (x > 0 && !seen[i - 1] && map[i - 1] >= threshold) {
      seen[i - 1] = 1
      stack[top++] = i - 1
    }
    if (x < n - 1 && i + 1 < len && !seen[i + 1] && map[i + 1] >= threshold) {
      seen[i + 1] = 1
      stack[top++] = i + 1
    }
    if (i >= n && !seen[i - n] && map[i - n] >= threshold) {
      seen[i - n] = 1
      stack[top++] = i - n
    }
    if (i + n < len && !seen[i + n] && map[i + n] >= threshold) {
      seen[i + n] = 1
      stack[top++] = i + n
    }
  }
  const out = new Array<number>(count)
  // its box in index order (from the root's row where the root is its smallest cell), every mark cleared
  for (let y = Math.floor(least / n), bottom = Math.floor(most / n), k = 0; y <= bottom; y++)
    for (let i = y * n + left, end = Math.min(y * n + right + 1, len); i < end; i++)
      if (seen[i]) {
        out[k++] = i
        seen[i] = 0
      }
  return out
}

/**
 * Each cell's component: the smallest index among the 4-connected cells where mask is set, -1 where it
 * is not. The smallest index is every labelling's answer whatever order its unions run in (a device's
 * atomicMin on each root is one), so the labels are the same wherever they are made.
 */
export function labels(mask: Uint8Array, n: number): Int32Array {
  const out = new Int32Array(mask.length).fill(-1)
  for (const cells of components(mask, n)) for (const i of cells) out[i] = cells[0]
  return out
}

/** The columns and rows of a part's cells (placed), kept between calls: a window measures up to some 35 parts. */
let coords = { x: new Float64Array(0), y: new Float64Array(0) }

/**
 * Each of a part's cells' column and row (valid up to cells.length, until the next call), found by
 * walking the rows as the cells come, in index order (a division and a remainder a cell were a quarter
 * of measuring).
 */
function placed(cells: readonly number[], n: number): { x: Float64Array; y: Float64Array } {
  if (coords.x.length < cells.length) coords = { x: new Float64Array(2 * cells.length), y: new Float64Array(2 * cells.length) }
  const { x, y } = coords
  let [row, rowStart] = [0, 0]
  for (let k = 0; k < cells.length; k++) {
    const i = cells[k]
    if (k && i <= cells[k - 1])
      throw new CrystalError('internal', `a part's cells must be listed in index order: cell ${i} after ${cells[k - 1]}`)
    while (i >= rowStart + n) {
      row++
      rowStart += n
    }
    x[k] = i - rowStart
    y[k] = row
  }
  return coords
}

/** c s - a b exactly (BigInt only past 2^53), as a float64: c times a second moment about the centroid. */
function momentTimesCount(c: number, s: number, a: number, b: number): number {
  const [cs, ab] = [c * s, a * b]
  if (cs < 2 ** 53 && Math.abs(ab) < 2 ** 53) return cs - ab
  return Number(BigInt(c) * BigInt(s) - BigInt(a) * BigInt(b))
}

/**
 * floor(sqrt(d)) of an integer d < 2^52: exact from float64's correctly rounded root (where d < m^2 the
 * root is under m - 1/(2m), more than the half ulp it can round by).
 */
function isqrt(d: number): number {
  return Math.floor(Math.sqrt(d))
}

/**
 * Which of the 16 sectors (atan2's angle from -pi, 22.5 degrees each) the integer offset (dx, dy) lies in,
 * by integer comparisons only: b < (sqrt 2 - 1) a is (a + b)^2 < 2 a^2, and b > (sqrt 2 + 1) a is
 * (b - a)^2 > 2 a^2 (every square under 2^52 for offsets under 2^25, as at N = 4096 with 13 fractional bits:
 * integers only, and larger ones would round). -0 counts as 0 (atan2 would put (-0, 0) in sector 0; an
 * offset made as a difference is never -0).
 */
export function sectorOf(dx: number, dy: number): number {
  // psi = atan2(|dy|, dx) in [0, pi] as 8 steps of 22.5 degrees: exactly m, or strictly between m and m + 1
  const [a, b] = [Math.abs(dx), Math.abs(dy)]
  let m: number
  let exact: boolean
  if (a === 0) [m, exact] = [b === 0 ? 0 : 4, true]
  else if (b === 0) [m, exact] = [0, true]
  else if (b === a) [m, exact] = [2, true]
  else if (b < a) [m, exact] = [(a + b) ** 2 < 2 * a * a ? 0 : 1, false]
  else [m, exact] = [(b - a) ** 2 < 2 * a * a ? 2 : 3, false]
  // the left half mirrors the right: psi = pi - psi'
  if (dx < 0) [m, exact] = exact ? [8 - m, true] : [7 - m, false]
  // floor(theta / 22.5 degrees) with theta = psi above the axis and -psi below it
  const k = dy >= 0 ? m : exact ? -m : -(m + 1)
  return (((k + 8) % SECTORS) + SECTORS) % SECTORS
}

/** Half the mean radius as bounds on a squared distance D: a cell is out where D >= out, within where D < within. */
function halfMeanRadius(radii: number, c: number): { out: number; within: number } {
  // 2 c r >= sum r is r >= ceil(sum r / 2c); 2 c r <= sum r is r <= floor(sum r / 2c), so D < (that + 1)^2
  const [out, inside] = [Math.ceil(radii / (2 * c)), Math.floor(radii / (2 * c))]
  return { out: out * out, within: (inside + 1) * (inside + 1) }
}

/** The ShapeSums of a part's cells (in index order) on a field of n x n. */
export function shapeSums(cells: readonly number[], n: number): ShapeSums {
  const { x: xs, y: ys } = placed(cells, n)
  const c = cells.length
  let [sx, sy, sxx, syy, sxy] = [0, 0, 0, 0, 0]
  let [x0, x1] = [n, -1]
  for (let k = 0; k < c; k++) {
    const x = xs[k]
    const y = ys[k]
    sx += x
    sy += y
    sxx += x * x
    syy += y * y
    sxy += x * y
    if (x < x0) x0 = x
    if (x > x1) x1 = x
  }
  // in index order, the first cell is on the least row and the last on the greatest
  const edges: ShapeSums['edges'] = c ? [x0, x1, ys[0], ys[c - 1]] : [n, -1, n, -1]
  const [fx, fy] = [Math.floor((2 * sx * ONE + c) / (2 * c)), Math.floor((2 * sy * ONE + c) / (2 * c))]
  let radii = 0
  for (let k = 0; k < c; k++) {
    const dx = xs[k] * ONE - fx
    const dy = ys[k] * ONE - fy
    radii += isqrt(dx * dx + dy * dy)
  }
  // the cut compares squared offsets, so it takes no root a cell; once every sector is reached, the
  // other cells cannot change them, so the cells are visited every stride-th first (the first visits
  // span the part's rows)
  const { out, within } = halfMeanRadius(radii, c)
  let reached = 0
  let inner = 0
  const stride = Math.max(1, Math.floor(Math.sqrt(c)))
  for (let start = 0; start < stride; start++)
    for (let k = start; k < c; k += stride) {
      const dx = xs[k] * ONE - fx
      const dy = ys[k] * ONE - fy
      const d = dx * dx + dy * dy
      if (d >= out && reached !== ALL_SECTORS) reached |= 1 << sectorOf(dx, dy)
      if (d < within) inner++
    }
  return { cells: c, sx, sy, sxx, syy, sxy, fx, fy, radii, reached, inner, edges }
}

/** A part's shape (`total`: its map's fieldTotal, where known). */
export function measure(
  map: Float32Array,
  n: number,
  cells: number[],
  total = fieldTotal(map).total,
  /** Its ShapeSums where the device made them. */
  s: ShapeSums = shapeSums(cells, n),
): ShapeFeatures & { axis: [number, number]; mean_radius: number } {
  // Every shape number is a function of integers (ShapeSums, the masses and fieldTotal), so a kernel can
  // make the same bits on any adapter
  const c = cells.length
  const cx = s.sx / c
  const cy = s.sy / c
  const sxx = momentTimesCount(c, s.sxx, s.sx, s.sx) / c
  const syy = momentTimesCount(c, s.syy, s.sy, s.sy) / c
  const sxy = momentTimesCount(c, s.sxy, s.sx, s.sy) / c
  const meanR = s.radii / (c * ONE)
  // principal second moments: eigenvalues of [[sxx, sxy], [sxy, syy]]
  const tr = (sxx + syy) / c
  const det = (sxx * syy - sxy * sxy) / c ** 2
  const disc = Math.sqrt(Math.max(0, (tr * tr) / 4 - det))
  const l1 = tr / 2 + disc
  const l2 = Math.max(tr / 2 - disc, 1e-9)
  // the inner disc: the lattice cells within half the mean radius, in a box that holds them all (the
  // part's own among them counted in ShapeSums)
  const { within } = halfMeanRadius(s.radii, c)
  let innerCells = 0
  const rIn = 0.5 * meanR + 1
  const [x0, x1] = [Math.max(0, Math.floor(cx - rIn)), Math.min(n - 1, Math.ceil(cx + rIn))]
  const [y0, y1] = [Math.max(0, Math.floor(cy - rIn)), Math.min(n - 1, Math.ceil(cy + rIn))]
  for (let y = y0; y <= y1; y++) {
    const dy = y * ONE - s.fy
    for (let x = x0; x <= x1; x++) {
      const dx = x * ONE - s.fx
      if (dx * dx + dy * dy < within) innerCells++
    }
  }
  const innerEmpty = innerCells - s.inner
  return {
    area: cells.length / (n * n),
    elongation: Math.sqrt(l1 / l2),
    annularity: innerCells ? innerEmpty / innerCells : 0,
    angular_gaps: 1 - bitsSet(s.reached) / SECTORS,
    // a component that covers the whole field stands out of nothing; its mass is exact in any order
    stability_ratio: stabilityRatio(massOf(map, cells), c, total, map.length),
    centroid_x: (cx + 0.5) / n,
    centroid_y: (cy + 0.5) / n,
    // the principal axis (unit vector of the larger second moment), for halving the structure
    axis: Math.abs(sxy) > 1e-12 ? unit(l1 * c - syy, sxy) : sxx >= syy ? [1, 0] : [0, 1],
    mean_radius: meanR,
  }
}

function unit(x: number, y: number): [number, number] {
  const h = Math.hypot(x, y) || 1
  return [x / h, y / h]
}

const clamp01 = (v: number) => Math.min(1, Math.max(0, v))

/** The documented thresholds of the classes (docs/detection.md). */
export const CLASS_RULES = {
  /** Every class stands out of the noise: mean stability inside at least this many times the mean outside. */
  contrast: 1.5,
  /** Every class persists: it keeps at least this share of its stability from one window to the next (vacuum keeps about 0.4). */
  persists: 0.6,
  /** Every class stands above the material's noise: its cells' stability at least this many times theirs in the noise alone (aboveNoise). */
  above_noise: 1.5,
  /** Field-wide: at least this share of the field. */
  field_wide: 0.2,
  /** Compact: under this share of the field. */
  compact: 0.01,
  /** Standing: every cell in phase or anti-phase (|sum A^2| / sum |A|^2) at least this much. */
  standing: 0.8,
  /** Rotating: under this. */
  rotating: 0.5,
  /** Frequency ratios that lock two regions, and how near (relative) a ratio must come. */
  locked_ratios: [1.5, 2, 3],
  ratio_tolerance: 0.06,
  /** Ring shape: annularity, angular gaps, elongation. */
  ring: { annularity: 0.5, gaps: 0.25, elongation: 1.6 },
  /** A basin pulls at least this share of the way back after a kick; a seed regrows at least this share of its erased half. */
  basin: 0.25,
  regrowth: 0.5,
} as const

/** Every class's first rule: nothing that fades or that noise alone could make is a structure (an absorbing medium keeps none). */
export function holds(f: Pick<StructureFeatures, 'sustain' | 'stability_ratio'>): boolean {
  return f.sustain >= CLASS_RULES.persists && f.stability_ratio >= CLASS_RULES.contrast
}

/**
 * The first rule's other half where the noise alone can be run (evaluate.ts): the structure's cells
 * hold at least CLASS_RULES.above_noise times the stability that the same cells hold in `quiet`, the
 * window of the same steps driven by the same noise with nothing injected. The sponge's dim border
 * lets a field-wide pattern of noise alone stand out of its outside (contrast), not out of this.
 */
export function aboveNoise(cells: readonly number[], own: WindowSpectra, quiet: WindowSpectra): boolean {
  const sum = (a: Float32Array) => a.reduce((s, v) => s + v, 0)
  return sum(own.stabilityAt(cells)) >= CLASS_RULES.above_noise * sum(quiet.stabilityAt(cells))
}

/**
 * The six classes, first matching rule wins; a structure that meets none is not classed (and not a
 * primitive). Confidence is 0.5 plus half the smallest normalized margin by which the features
 * clear the rule's boundaries.
 */
export function classify(f: StructureFeatures, response: Response = {}): { class: ClassToken; confidence: number } | undefined {
  const R = CLASS_RULES
  const conf = (...margins: number[]) => 0.5 + 0.5 * clamp01(Math.min(...margins))
  if (!holds(f)) return undefined
  // a basin: a field-wide pattern that the medium draws back to after a kick (where the kick was not tried, persisting is all that is known)
  const basin = response.basin ?? 1
  if (f.area >= R.field_wide && basin >= R.basin)
    return {
      class: 'attractor_field',
      confidence: conf(
        (f.area - R.field_wide) / R.field_wide,
        (f.sustain - R.persists) / (1 - R.persists),
        response.basin === undefined ? 1 : (basin - R.basin) / (1 - R.basin),
      ),
    }
  // a phase singularity: the mode's phase turns round the centre, and the pattern rotates rather than stands
  if (f.winding !== 0 && f.standing < R.rotating) return { class: 'phase_knot', confidence: conf((R.rotating - f.standing) / R.rotating) }
  // two regions locked at a small-integer frequency ratio
  const lock = Math.min(...R.locked_ratios.map((r) => Math.abs(f.region_ratio - r) / r))
  if (lock <= R.ratio_tolerance) return { class: 'harmonic_bridge', confidence: conf((R.ratio_tolerance - lock) / R.ratio_tolerance) }
  // a ring that re-forms: round and closed with a hole, still there in the later window
  if (f.annularity >= R.ring.annularity && f.angular_gaps <= R.ring.gaps && f.elongation < R.ring.elongation) {
    return {
      class: 'echo_ring',
      confidence: conf(
        (f.annularity - R.ring.annularity) / R.ring.annularity,
        (R.ring.gaps - f.angular_gaps) / R.ring.gaps,
        (R.ring.elongation - f.elongation) / 0.6,
      ),
    }
  }
  // a compact seed that regrows after half of it is erased (where that was not tried, holding is all that is known)
  const regrowth = response.regrowth ?? 1
  if (f.area < R.compact && regrowth >= R.regrowth)
    return {
      class: 'memory_seed',
      confidence: conf((R.compact - f.area) / R.compact, response.regrowth === undefined ? 1 : (regrowth - R.regrowth) / (1 - R.regrowth)),
    }
  // one standing mode (cells in phase or anti-phase: nodes), holding
  if (f.standing >= R.standing) return { class: 'standing_echo', confidence: conf((f.standing - R.standing) / (1 - R.standing)) }
  return undefined
}

/**
 * The stability map around the component, centred on its centroid in a square window that holds it,
 * resampled bilinearly to SIGNATURE_SIDE^2 and scaled to unit length, then the modal map of the same
 * window (weighted by MODAL_WEIGHT): the same structure anywhere on the field, at any resolution,
 * gives the same signature.
 */
export function signature(spec: WindowSpectra, map: Float32Array, place: Placement, samples?: ModalSamples): number[] {
  const n = spec.n
  const window = signatureWindow(place)
  const [cx, cy] = centreOf(window)
  const half = window.hc / window.c
  // the whole map inside the window, not only the component: the component's edge moves with the noise
  const at = (x: number, y: number) => (x < 0 || y < 0 || x >= n || y >= n ? 0 : map[y * n + x])
  const out: number[] = []
  for (let j = 0; j < SIGNATURE_SIDE; j++) {
    for (let i = 0; i < SIGNATURE_SIDE; i++) {
      const x = cx - half + ((i + 0.5) / SIGNATURE_SIDE) * 2 * half
      const y = cy - half + ((j + 0.5) / SIGNATURE_SIDE) * 2 * half
      const x0 = Math.floor(x)
      const y0 = Math.floor(y)
      const tx = x - x0
      const ty = y - y0
      out.push((1 - ty) * ((1 - tx) * at(x0, y0) + tx * at(x0 + 1, y0)) + ty * ((1 - tx) * at(x0, y0 + 1) + tx * at(x0 + 1, y0 + 1)))
    }
  }
  const norm = Math.hypot(...out) || 1
  const [a, b] = [Math.sqrt(1 - MODAL_WEIGHT), Math.sqrt(MODAL_WEIGHT)]
  return [...out.map((v) => (a * v) / norm), ...modalMap(spec, window, samples).map((v) => b * v)]
}

/** blake3 of the signature quantized to int16 (little-endian), so float noise below 1/32767 does not change it. */
export function signatureHash(sig: readonly number[]): Promise<string> {
  const q = new Int16Array(sig.length)
  sig.forEach((v, i) => (q[i] = Math.round(Math.max(-1, Math.min(1, v)) * 32767)))
  return blake3Hex(new Uint8Array(q.buffer))
}

/** A window as detection reads it: a recording's frames are reduced on the host (engine/cpu/spectra.ts). */
export function spectraFor(window: Recording | WindowSpectra): WindowSpectra {
  return window instanceof WindowSpectra ? window : spectraOf(window)
}

/** Mean |u| over a window's frames: its stability map (the window's own; not to be modified). */
export function stabilityMap(window: Recording | WindowSpectra): Float32Array {
  return spectraFor(window).stability()
}

/**
 * Both halves of a component (its cells in index order), split across its principal axis at the
 * centroid, decided in integers (docs/detection.md item 3): with c its cells, dX = c x - Sx and
 * dY = c y - Sy (c times a cell's offset from the centroid), A = Mxx - Myy and B = Mxy (c times the
 * second moments about it), the principal axis is (A + sqrt(A^2 + 4 B^2), 2 B), or x where B = 0 and
 * A >= 0, y where B = 0 and A < 0 (measure's `axis`, scaled); a cell is on the first half where
 * dX A + 2 dY B + dX sqrt(A^2 + 4 B^2) < 0. That sign is float64's where it is clear of the terms'
 * rounding, else BigInt's, comparing squares: the same halves on any machine, and a kernel can
 * repeat it.
 */
export function halves(cells: number[], n: number): [number[], number[]] {
  const { x, y } = placed(cells, n)
  const c = cells.length
  let [sx, sy, sxx, syy, sxy] = [0, 0, 0, 0, 0]
  for (let k = 0; k < c; k++) {
    sx += x[k]
    sy += y[k]
    sxx += x[k] * x[k]
    syy += y[k] * y[k]
    sxy += x[k] * y[k]
  }
  const [C, SX, SY] = [BigInt(c), BigInt(sx), BigInt(sy)]
  const A = C * BigInt(sxx) - SX * SX - (C * BigInt(syy) - SY * SY)
  const B = C * BigInt(sxy) - SX * SY
  const axis = axisOf(A, B)
  // where B = 0 the axis is x or y: the side is dX's or dY's sign (decided once, not a BigInt test a cell)
  const along = B === 0n ? (A >= 0n ? 'x' : 'y') : undefined
  const first: number[] = []
  const second: number[] = []
  for (let k = 0; k < c; k++) {
    const dX = c * x[k] - sx
    const dY = c * y[k] - sy
    const side = along === 'x' ? dX : along === 'y' ? dY : sideOf(dX, dY, axis)
    ;(side < 0 ? first : second).push(cells[k])
  }
  return [first, second]
}

/** An axis (A, B) as sideOf takes it: exact, and as float64s. */
export interface Axis {
  A: bigint
  B: bigint
  R: bigint
  a: number
  b: number
  root: number
}

/** The axis (A, B) as sideOf takes it. */
export function axisOf(A: bigint, B: bigint): Axis {
  const R = A * A + 4n * B * B
  return { A, B, R, a: Number(A), b: Number(B), root: Math.sqrt(Number(R)) }
}

/** The sign of dX A + 2 dY B + dX sqrt(R) (halves), R = A^2 + 4 B^2: float64's where clear of its rounding, else exact. */
export function sideOf(dX: number, dY: number, axis: Axis): number {
  const p = dX * axis.a + 2 * dY * axis.b
  const q = dX * axis.root
  // each term within a few ulps of itself (A, B and R rounded once, the products and the root once more)
  if (Math.abs(p + q) > 2 ** -48 * (Math.abs(dX * axis.a) + Math.abs(2 * dY * axis.b) + Math.abs(q))) return p + q
  return exactSide(dX, dY, axis)
}

/** sideOf's sign where float64 cannot tell it: in BigInt, comparing squares. */
function exactSide(dX: number, dY: number, { A, B, R }: Axis): number {
  const P = BigInt(dX) * A + 2n * BigInt(dY) * B
  const Q = BigInt(dX)
  const sign = (v: bigint) => (v > 0n ? 1 : v < 0n ? -1 : 0)
  if (Q === 0n || sign(P) === sign(Q)) return sign(P) || sign(Q)
  // P and Q of opposite signs: P + Q sqrt(R) takes the sign of the larger of |P| and |Q| sqrt(R)
  const [pp, qqr] = [P * P, Q * Q * R]
  return pp === qqr ? 0 : pp > qqr ? sign(P) : sign(Q)
}

/** A second region counts when it holds at least this share of the first one's stability mass. */
export const SECOND_REGION_MASS = 0.3

/** A component of the stability map as detection measures it, before its dynamics. */
export interface Part {
  cells: number[]
  mass: number
  shape: ShapeFeatures
  /** What a perturbation's erase plan reads of it (engine/discovery/evaluate.ts erasePlan). */
  sums: PlanSums
  /** Where it is placed, from its ShapeSums: where its mode, winding circles and signature are read. */
  place: Placement
  /** Its regions (regionsOf), made when first asked for: only a part that holds is asked (some 8% of naming a window's cells made them for every part). */
  regions: () => [number[], number[]] | undefined
  /** Its sums over the later window and their unit, where the device made them (PlaneSource.top). */
  later: { sums: LaterSums; unit: number } | undefined
  /** What the device read of it over the window, where it did (ServedSpectra serves detection from it). */
  reads: PartReads | undefined
  /** The cells its mode is taken over (reachSample over reachBox), made when first asked for. */
  reach: () => readonly number[]
  /** Its modal map's samples (modalSamples over its signature's window), made when first asked for. */
  modal: () => ModalSamples
}

/** A part's lists made when first asked for (Part.reach, Part.modal): naming its cells, serving and detecting it ask for the same. */
function lazyReads(cells: readonly number[], n: number, place: Placement): Pick<Part, 'reach' | 'modal'> {
  return { reach: once(() => reachSample(cells, n, reachBox(place))), modal: once(() => modalSamples(n, signatureWindow(place))) }
}

/** f's answer, made on the first call only. */
function once<T>(f: () => T): () => T {
  let made: { value: T } | undefined
  return () => (made ??= { value: f() }).value
}

/**
 * A component as detection takes them: its mass, how many cells it has, and its cells in index order,
 * made when first asked for where the device listed the map's components (`listedFound`): then a part
 * that is outshone never has its cells made.
 */
interface Found {
  mass: number
  count: number
  readonly cells: number[]
  /** Whether its cells are made (what measuredOf sends on). */
  readonly made: boolean
}

const madeFound = ({ cells, mass }: { cells: number[]; mass: number }): Found => ({ cells, mass, count: cells.length, made: true })

/** The components the device listed (PlaneSource.listed: the threshold, then root, cells and mass each), each one's cells filled from its root when asked for. */
function listedFound(map: Float32Array, n: number, listed: Float64Array): Found[] {
  const threshold = listed[0]
  return Array.from({ length: (listed.length - 1) / 3 }, (_, k) => {
    const [root, count, mass] = listed.subarray(1 + 3 * k, 4 + 3 * k)
    let cells: number[] | undefined
    return {
      mass,
      count,
      get cells() {
        if (cells) return cells
        cells = componentFrom(map, n, root, threshold)
        // a list that is not this map's would make wrong parts
        if (cells.length !== count || cells[0] !== root)
          throw new CrystalError('internal', `the component listed at cell ${root} has ${count} cells, but ${cells.length} in this map`)
        return cells
      },
      get made() {
        return cells !== undefined
      },
    }
  })
}

/**
 * A stability map's components above the threshold, most mass first, and those of them measured so
 * far: null for one that cannot stand out of the map (`outshone`), which is not measured.
 */
interface Measured {
  found: Found[]
  parts: (Part | null)[]
  /** The map's total (fieldTotal), once a part asks (outshone, measure). */
  total?: number
}

/**
 * Whether a part of `count` cells holding `mass` cannot stand out of a map of `cells` cells whose total
 * is `total` (fieldTotal): holds' contrast rule fails for the stability ratio measure would give it, so
 * it need not be measured (some 9 in 10 of europium_crystal's parts), and detection drops it all the same.
 */
export function outshone(mass: number, count: number, total: number, cells: number): boolean {
  return stabilityRatio(mass, count, total, cells) < CLASS_RULES.contrast
}

/**
 * A part's mean stability over the mean of the rest of the map (`total` its fieldTotal); 1 where nothing
 * is outside it at the total's resolution (2^-38 of the peak's binade a cell), as for a part of the whole map.
 */
export function stabilityRatio(mass: number, count: number, total: number, cells: number): number {
  const meanOut = (total - mass) / Math.max(1, cells - count)
  return meanOut > 0 ? mass / count / meanOut : 1
}

/** Fractional bits of a map's total (fieldTotal) under its masked cells' units. */
export const TOTAL_BITS = 13
/** A cell in the peak's binade is its significand times 2^LIFT units of fieldTotal (2^(e - 25 - TOTAL_BITS), its significand's unit 2^(e - 23)). */
const LIFT = 25 + TOTAL_BITS - 23

/**
 * A stability map's sum, exact in any order, as the device adds it (shaders/components.wgsl `mask`):
 * each cell floored to a whole number of `unit`, 2^(e - 25 - TOTAL_BITS) with e the peak's binade (a
 * masked cell, at least a quarter of the peak, is a whole number of 2^(e - 25): massOf's sums are
 * exact, and so is a part's mass taken from this total). A cell is its units from its bits (a subnormal
 * one is 0: an adapter may flush it), under 2^39, so the sum is an integer under 2^63 at N = 4096 and
 * `units` is it as a float64 (one rounding past 2^53, as the device's two words give it). A stability
 * map is nonnegative (mean |u|): a cell below 0 counts 0. All 0 where the peak is 0 or a cell is NaN or
 * infinite.
 */
export function fieldTotal(map: Float32Array): { units: number; unit: number; total: number } {
  const bits = new Uint32Array(map.buffer, map.byteOffset, map.length)
  // one pass: the peak's bits (nonnegative floats order as their bits) and the significands summed by
  // binade (exact: under 2^48 at N = 4096)
  const byBinade = new Float64Array(256)
  let top = 0
  for (let i = 0; i < bits.length; i++) {
    const b = bits[i]
    if (b >= 0x7f800000) {
      // a NaN or an infinity; a cell below 0 (none in a stability map) counts 0
      if ((b & 0x7fffffff) >= 0x7f800000) return { units: 0, unit: 0, total: 0 }
      continue
    }
    if (b > top) top = b
    byBinade[b >>> 23] += (b & 0x7fffff) | 0x800000
  }
  const peak = top >>> 23
  if (!peak) return { units: 0, unit: 0, total: 0 }
  // a cell's units are its significand times 2^(LIFT - d), d its binades under the peak's: whole where
  // d <= LIFT (a binade's sum scaled), else floored cell by cell (a second pass, where any such cell is);
  // subnormal cells (binade 0) count 0
  let exact = 0n
  for (let d = 0; d <= LIFT && d < peak; d++) if (byBinade[peak - d]) exact += BigInt(byBinade[peak - d]) << BigInt(LIFT - d)
  if (byBinade.subarray(1, Math.max(1, peak - LIFT)).some((sum) => sum > 0)) {
    let floored = 0
    for (let i = 0; i < bits.length; i++) {
      const b = bits[i]
      const d = peak - (b >>> 23)
      if (d > LIFT && d < LIFT + 24 && b >>> 23 > 0 && b < 0x7f800000) floored += ((b & 0x7fffff) | 0x800000) >>> (d - LIFT)
    }
    exact += BigInt(floored)
  }
  const units = Number(exact)
  const unit = unitOfBinade(peak)
  return { units, unit, total: units * unit }
}

/** fieldTotal's unit for a map whose peak lies in binade `peak` (its biased exponent). */
const unitOfBinade = (peak: number) => 2 ** (peak - 127 - 25 - TOTAL_BITS)

/**
 * A later window as it was recorded: each cell's |u| summed over `taken` samples. Its stability map
 * is each sum's mean (laterAt); sustain reads the sums themselves, which a kernel can add exactly.
 */
export interface Later {
  sums: Float32Array
  taken: number
}

/** The later window's stability map at `cells`: each sum's mean, a float32 division (as meanOf makes a whole map). */
export function laterAt(later: Later, cells: readonly number[]): Float32Array {
  const out = new Float32Array(cells.length)
  for (let k = 0; k < cells.length; k++) out[k] = later.sums[cells[k]] / (later.taken || 1)
  return out
}

/**
 * fieldTotal's unit for sums whose peak has the bits `top` (2^-38 of its binade); 0 where there is
 * none: a peak of 0 or subnormal, or NO_PEAK (0xffffffff: a NaN or an infinity among them).
 */
export function unitOfPeak(top: number): number {
  const binade = top >>> 23
  return binade && top < 0x7f800000 ? unitOfBinade(binade) : 0
}

/** The bits of the largest of `values` (cells below 0 passed over), or NO_PEAK (0xffffffff) where one is NaN or infinite. */
function peakBits(values: Float32Array): number {
  const bits = new Uint32Array(values.buffer, values.byteOffset, values.length)
  let top = 0
  for (let i = 0; i < bits.length; i++) {
    const b = bits[i]
    if ((b & 0x7fffffff) >= 0x7f800000) return 0xffffffff
    if (b < 0x80000000 && b > top) top = b
  }
  return top
}

/** Per later window's sums, their unitOfPeak, found once: every part's sustain takes it. */
const laterUnits = new WeakMap<Float32Array, number>()

export function laterUnit(sums: Float32Array): number {
  let unit = laterUnits.get(sums)
  if (unit === undefined) laterUnits.set(sums, (unit = unitOfPeak(peakBits(sums))))
  return unit
}

/**
 * A part's later sums in `unit`s (its laterUnit): each cell floored to a whole number of them (a
 * subnormal cell or one below 0 counts 0), summed as an integer, as shaders/components.wgsl `moments`
 * adds them; split at 2^26 so that both float64 sums stay exact past 2^53 (under 2^63 at N = 4096), one
 * rounding at the end, as the device's two words give it.
 */
export function laterUnitsOf(cells: readonly number[], sums: Float32Array, unit: number): number {
  let high = 0
  let low = 0
  // indexed: a for-of slowed to some 4 times this where the cells came as arrays of more than one kind
  for (let k = 0; k < cells.length; k++) {
    const v = sums[cells[k]]
    if (!(v >= 2 ** -126)) continue
    const units = Math.floor(v / unit)
    const h = Math.floor(units / 2 ** 26)
    high += h
    low += units - h * 2 ** 26
  }
  return high * 2 ** 26 + low
}

/** The later sums' unit for persistence: 2^(eL - 25), eL their peak's binade (whole numbers under 2^26 a cell). */
const PERSISTENCE_UNIT = 2 ** TOTAL_BITS

/**
 * A part's persistence sums, with a its cells in the first window's map (`first[k]`, the part's k-th
 * cell) in units of `unitA`, and b its cells in the later sums (`sums` at `cells`) floored to `unitB`
 * (a subnormal cell or one below 0 counts 0): the sums of a b, a^2 and b^2, exact in any order as
 * shaders/components.wgsl `moments` adds them in three words. For a part's cells (at least a quarter of
 * the map's peak) in units of 2^(e - 25), e the map's peak's binade or the part's, a is whole and under
 * 2^26, and so is b: a product is under 2^52, split at 2^26 so that both float64 sums stay exact (to
 * 2^24 cells), one rounding at the end, as the device's three words give it.
 */
export function persistenceSums(
  first: ArrayLike<number>,
  unitA: number,
  cells: readonly number[],
  sums: Float32Array,
  unitB: number,
): PersistenceSums {
  const high = [0, 0, 0]
  const low = [0, 0, 0]
  const add = (k: number, p: number) => {
    const h = Math.floor(p / 2 ** 26)
    high[k] += h
    low[k] += p - h * 2 ** 26
  }
  for (let k = 0; k < cells.length; k++) {
    const qa = first[k] >= 2 ** -126 ? Math.floor(first[k] / unitA) : 0
    const v = sums[cells[k]]
    const qb = v >= 2 ** -126 ? Math.floor(v / unitB) : 0
    add(0, qa * qb)
    add(1, qa * qa)
    add(2, qb * qb)
  }
  const [ab, aa, bb] = high.map((h, k) => h * 2 ** 26 + low[k])
  return { ab, aa, bb }
}

/** The unit 2^(e - 25) of the binade e of a float32's bits `top` (a map's masses' unit, tally's); 0 for 0, a subnormal, NO_PEAK, a NaN or an infinity. */
export function massUnit(top: number): number {
  const binade = top >>> 23
  return binade && top < 0x7f800000 ? 2 ** (binade - 127 - 25) : 0
}

/**
 * Persistence of a structure found in the first window: how much of its shape (cosine over its cells,
 * from persistenceSums) and of its strength (its sustain, capped at 1) the later window still shows.
 * `first[k]` is the first window's map at cells[k] (WindowSpectra.stabilityAt: at population 1,000 the
 * main thread made every clean field's whole map for this, some 0.1 ms a window). Its cells are taken
 * in units of the part's own peak binade, the device's in the map's: a power of two apart, which the
 * cosine does not see, to the bit (each sum scales exactly, and the root of a square's scale is exact).
 */
export function persistenceOf(first: ArrayLike<number>, cells: readonly number[], later: Later, sustain: number): number {
  const unit = laterUnit(later.sums)
  let top = 0
  for (let k = 0; k < first.length; k++) if (first[k] > top) top = first[k]
  const unitA = massUnit(new Uint32Array(Float32Array.of(top).buffer)[0])
  if (!unit || !unitA) return 0
  return persistenceFrom(persistenceSums(first, unitA, cells, later.sums, unit * PERSISTENCE_UNIT), sustain)
}

/** Persistence from a part's persistenceSums (in any units of a and b) and its sustain (persistenceOf's). */
export function persistenceFrom({ ab, aa, bb }: PersistenceSums, sustain: number): number {
  const shape = aa && bb ? ab / Math.sqrt(aa * bb) : 0
  return Math.max(0, Math.min(1, shape * Math.min(1, sustain)))
}

/**
 * A part's sustain: its stability mass in the later window over its mass in the recorded one
 * (`first`, the window's map). The later mass is taken from the raw sums as a kernel can add them in
 * any order: each cell floored to fieldTotal's unit of the later sums (2^-38 of their peak's binade;
 * a subnormal cell counts 0), summed as an integer, then over the samples taken. 0 where the part
 * held nothing or the later sums are not finite.
 */
export function sustainOf(cells: readonly number[], first: Float32Array, later: Later): number {
  let mass = 0
  for (let k = 0; k < cells.length; k++) mass += first[cells[k]]
  const unit = laterUnit(later.sums)
  return sustainFrom(unit && laterUnitsOf(cells, later.sums, unit), unit, later.taken, mass)
}

/** A part's sustain from its later units (laterUnitsOf, in `unit`), the samples taken and its mass (sustainOf's). */
export function sustainFrom(units: number, unit: number, taken: number, mass: number): number {
  if (!(mass > 0) || unit === 0) return 0
  return (units * unit) / (taken || 1) / mass
}

/** Per stability map, its components and those measured so far, so that cellsRead and detect measure each once. */
const measured = new WeakMap<Float32Array, Measured>()

/**
 * The regions of component k for a frequency ratio: it and the next component where that one holds
 * enough mass, else its two halves across its principal axis (none for a component too small to halve).
 */
function regionsOf(found: Measured['found'], k: number, n: number): [number[], number[]] | undefined {
  const rule = regionRule(found, k)
  if (rule === 'paired') return [found[k].cells, found[k + 1].cells]
  return rule === 'halved' ? halves(found[k].cells, n) : undefined
}

/**
 * Which regions component k has: the next component's where that one holds SECOND_REGION_MASS of its
 * mass or more ('paired'; masses are whole units under 2^51, so this float64 rule is 10 next >= 3 mass
 * in units, as the device takes it), else its halves where it can be halved.
 */
function regionRule(found: Pick<Found, 'mass' | 'count'>[], k: number): 'paired' | 'halved' | undefined {
  const { mass, count } = found[k]
  const next = found[k + 1]
  if (next && next.mass >= SECOND_REGION_MASS * mass) return 'paired'
  return count >= 2 * MIN_AREA_CELLS ? 'halved' : undefined
}

/**
 * What is measured of a map, packed for another thread: every component's cells one after another
 * (`ends`: where each ends), their masses, and for each part measured so far its shape, axis and mean
 * radius (PART_FLOATS each; its regions follow from these and the components). Typed arrays cross
 * threads as a copy of their bytes, where the same as plain arrays and objects took the main thread
 * some 0.27 ms a window to pass on (docs/detection.md, "Where detection runs").
 */
export interface PackedMeasured {
  cells: Int32Array
  ends: Int32Array
  masses: Float64Array
  parts: Float64Array
}

const SHAPE_KEYS = ['area', 'elongation', 'annularity', 'angular_gaps', 'stability_ratio', 'centroid_x', 'centroid_y'] as const
/** A part packed: its shape, axis, mean radius and placement (sx, sy, rc and the edges; c is its cells' count). */
const PART_FLOATS = SHAPE_KEYS.length + 11

/**
 * What is measured of a map so far, packed: a worker thread that ran cellsRead sends it back, and the
 * one that detects on the same map later is handed it (`holdMeasured`) instead of measuring again.
 */
export function measuredOf(map: Float32Array): PackedMeasured | undefined {
  const m = measured.get(map)
  if (!m) return undefined
  const ends = new Int32Array(m.found.length)
  let end = 0
  // a component whose cells were never made (listed by the device, outshone) as none: it has 4 or more
  m.found.forEach((f, k) => (ends[k] = end += f.made ? f.count : 0))
  const cells = new Int32Array(end)
  m.found.forEach((f, k) => f.made && cells.set(f.cells, ends[k] - f.count))
  const parts = new Float64Array(m.parts.length * PART_FLOATS)
  // an outshone part (not measured) as NaNs
  m.parts.forEach((p, k) =>
    parts.set(
      p
        ? [
            ...SHAPE_KEYS.map((key) => p.shape[key]),
            p.sums.sxx,
            p.sums.syy,
            p.sums.sxy,
            p.sums.radii,
            p.place.sx,
            p.place.sy,
            p.place.rc,
            ...p.place.edges,
          ]
        : new Array(PART_FLOATS).fill(NaN),
      k * PART_FLOATS,
    ),
  )
  return { cells, ends, masses: Float64Array.from(m.found, (f) => f.mass), parts }
}

/** values[from, to) as an array of numbers: a loop, some 3 times faster than Array.from of a view (a fifth of a first job's time was it). */
export function numbers(values: ArrayLike<number>, from = 0, to = values.length): number[] {
  const out = new Array<number>(to - from)
  for (let i = from; i < to; i++) out[i - from] = values[i]
  return out
}

/**
 * Takes what was measured of a map of the same values elsewhere (`measuredOf`), in place of measuring it
 * here; the components whose cells it did not make, from the device's list (`listed`) where it listed them.
 */
export function holdMeasured(map: Float32Array, n: number, p: PackedMeasured, listed?: Float64Array, top?: FieldTop): void {
  const lazy = listed && listedFound(map, n, listed)
  const found = Array.from(p.ends, (end, k): Found => {
    const from = k ? p.ends[k - 1] : 0
    if (end > from) return madeFound({ cells: numbers(p.cells, from, end), mass: p.masses[k] })
    if (!lazy)
      throw new CrystalError('internal', `component ${k} was handed on without its cells, and the map has no list to fill them from`)
    return lazy[k]
  })
  const parts = Array.from({ length: p.parts.length / PART_FLOATS }, (_, k): Part | null => {
    const v = p.parts.subarray(k * PART_FLOATS, (k + 1) * PART_FLOATS)
    if (Number.isNaN(v[0])) return null
    // the keys in SHAPE_KEYS' order (measure's), so that features list them alike either way
    const shape = {} as ShapeFeatures
    SHAPE_KEYS.forEach((key, i) => (shape[key] = v[i]))
    const K = SHAPE_KEYS.length
    const { cells, mass, count } = found[k]
    const edges: Placement['edges'] = [v[K + 7], v[K + 8], v[K + 9], v[K + 10]]
    const place = { n, c: count, sx: v[K + 4], sy: v[K + 5], rc: v[K + 6], edges }
    const sums = { cells: count, sx: place.sx, sy: place.sy, sxx: v[K], syy: v[K + 1], sxy: v[K + 2], radii: v[K + 3] }
    const later = laterOf(top, devicePart(top, listed, k))
    const reads = readsOf(top, listed, found, k)
    const regions = once(() => regionsOf(found, k, n))
    return { cells, mass, shape, sums, place, regions, later, reads, ...lazyReads(cells, n, place) }
  })
  measured.set(map, { found, parts })
}

/**
 * The least value of a structure's cell in a map whose peak is `peak`: a float32 rule, as a kernel makes
 * it (WGSL's f32 product is correctly rounded; shaders/components.wgsl `mask`).
 */
export function thresholdOf(peak: number): number {
  return Math.fround(Math.fround(THRESHOLD_OF_PEAK) * peak)
}

/** The cells of a stability map at or above THRESHOLD_OF_PEAK of its peak (none where the peak is 0 or NaN). */
export function structureMask(map: Float32Array): Uint8Array {
  // Math.max's peak (a NaN anywhere makes it NaN) without a call a cell
  let peak = 0
  for (let i = 0; i < map.length; i++) {
    const v = map[i]
    if (v > peak) peak = v
    else if (Number.isNaN(v)) return new Uint8Array(map.length)
  }
  const mask = new Uint8Array(map.length)
  if (!(peak > 0)) return mask
  const threshold = thresholdOf(peak)
  for (let i = 0; i < map.length; i++) if (map[i] >= threshold) mask[i] = 1
  return mask
}

/**
 * A stability map's components of MIN_AREA_CELLS cells or more and their stability masses, the most
 * mass first, then the most cells, then the smallest cell (a stable sort of `components`' order): the
 * order detection takes them in, and what the device lists (engine/gpu/components.ts listOf).
 */
export function rankedComponents(map: Float32Array, n: number): { cells: number[]; mass: number }[] {
  return components(structureMask(map), n)
    .filter((cells) => cells.length >= MIN_AREA_CELLS)
    .map((cells) => ({ cells, mass: massOf(map, cells) }))
    .sort((a, b) => b.mass - a.mass)
}

/** Components a field's list holds where the device lists them: a field of europium_crystal has up to some 35. */
export const LISTED = 128
/**
 * The least binade (biased exponent) of a peak whose map the device lists: from 25 on, the threshold
 * and every cell over it are normal floats, which no adapter flushes to zero.
 */
export const LEAST_LISTED_BINADE = 25

/**
 * A map's components as the device lists them (engine/gpu/components.ts, PlaneSource.listed): the
 * threshold, then each one's smallest cell, cells and mass, in rankedComponents' order; undefined where
 * the device leaves the map to the host (a NaN or infinite cell, a peak under 2^-102 or of 0, more
 * than LISTED components). The kernels' twin, and how a window made on the host is held as the GPU
 * backend holds it (practice.ts heldOf).
 */
export function listedComponents(map: Float32Array, n: number): Float64Array | undefined {
  let peak = 0
  for (let i = 0; i < map.length; i++) {
    const v = map[i]
    if (!Number.isFinite(v)) return undefined
    if (v > peak) peak = v
  }
  if (((new Uint32Array(Float32Array.of(peak).buffer)[0] >>> 23) & 0xff) < LEAST_LISTED_BINADE) return undefined
  const ranked = rankedComponents(map, n)
  if (ranked.length > LISTED) return undefined
  const listed = new Float64Array(1 + 3 * ranked.length)
  listed[0] = thresholdOf(peak)
  ranked.forEach(({ cells, mass }, k) => listed.set([cells[0], cells.length, mass], 1 + 3 * k))
  return listed
}

/** The smallest cells of a map's listed components (ListedComponents), in the list's order. */
export function listedRoots(listed: Float64Array): number[] {
  return Array.from({ length: (listed.length - 1) / 3 }, (_, k) => listed[1 + 3 * k])
}

/**
 * A map's FieldShapes where the device lists the map, with a later window's sums (`later`) where
 * given (`listed`: its listedComponents, where already made): the twin of its shapes (engine/gpu/components.ts shapesOf).
 */
export function listedShapes(
  map: Float32Array,
  n: number,
  later?: Float32Array,
  listed = listedComponents(map, n),
): FieldShapes | undefined {
  if (!listed) return undefined
  const cells = listedRoots(listed).map((root) => [root, componentFrom(map, n, root, listed[0])] as const)
  const shaped = { units: fieldTotal(map).units, parts: new Map(cells.map(([root, part]) => [root, shapeSums(part, n)])) }
  if (!later) return shaped
  const unit = laterUnit(later)
  const unitA = massUnit(peakBits(map))
  const sumsOf = (part: number[]): LaterSums => {
    if (!unit) return { units: 0, ab: 0, aa: 0, bb: 0 }
    const first = part.map((c) => map[c])
    return { units: laterUnitsOf(part, later, unit), ...persistenceSums(first, unitA, part, later, unit * PERSISTENCE_UNIT) }
  }
  return { ...shaped, later: { unit, parts: new Map(cells.map(([root, part]) => [root, sumsOf(part)])) } }
}

/**
 * How many of a field's components, the first by rank (rankedComponents' order), the device copies
 * with their sums where a read can take them alone (shaders/components.wgsl `rank`; item 3's first K
 * parts by mass).
 */
export const TOP_PARTS = 4

/**
 * A map's first TOP_PARTS parts by rank where the device lists the map, with a later window's sums
 * where given (`listed`: its listedComponents, where already made), and then the field's candidates over
 * every part it lists (candidateTable): the twin of what the device copies (engine/gpu/components.ts topOf).
 */
export function listedTop(map: Float32Array, n: number, later?: Later, listed = listedComponents(map, n)): FieldTop | undefined {
  const shapes = listedShapes(map, n, later?.sums, listed)
  if (!listed || !shapes) return undefined
  const every = listedRoots(listed).map(
    (root, k): TopPart => ({
      root,
      cells: listed[2 + 3 * k],
      mass: listed[3 + 3 * k],
      shape: shapes.parts.get(root) as ShapeSums,
      ...(shapes.later && { later: shapes.later.parts.get(root) }),
    }),
  )
  const { units, unit, total } = fieldTotal(map)
  const top = { total, parts: every.slice(0, TOP_PARTS) }
  if (!later || !shapes.later) return top
  const scale = { n, taken: later.taken, total: units, totalUnit: unit, massUnit: unit * 2 ** TOTAL_BITS, laterUnit: shapes.later.unit }
  return { ...top, laterUnit: shapes.later.unit, candidates: candidateTable(every, scale) }
}

/**
 * The lists of a map's first parts (`top`'s): each one's cells' sample, the cells its mode is taken
 * over (sample and reachSample of its cells in index order) and its regions (regionRule: the next
 * part's, among the first parts or past them, or its halves' samples): the twin of what the device
 * makes (shaders/components.wgsl `lists` and `regions`, engine/gpu/components.ts partListsOf).
 */
export function topLists(map: Float32Array, n: number, top: FieldTop | undefined): PartLists[] | undefined {
  const found = rankedComponents(map, n).map(({ cells, mass }) => ({ cells, mass, count: cells.length }))
  return top?.parts.map(({ root, shape }, k) => {
    const { cells } = found[k]
    if (cells[0] !== root) throw new CrystalError('internal', `the first part ${k} is at cell ${root}, but the map's is at ${cells[0]}`)
    const rule = regionRule(found, k)
    const regions: PartLists['regions'] =
      rule === 'paired'
        ? k + 1 < TOP_PARTS
          ? 'next'
          : 'past'
        : rule === 'halved'
          ? (halves(cells, n).map((half) => [...sample(half)]) as [number[], number[]])
          : 'none'
    return { sample: [...sample(cells)], reach: [...reachSample(cells, n, reachBox(placementOf(n, shape)))], regions }
  })
}

/**
 * The power sums of a window's first parts' lists (`top`'s; `lists`: topLists'), per part its sample,
 * its mode's cells, its halves (none where it is not halved) and its modal map's blocks (modalSamples of
 * its signature's window), each powerSumsOf's bins: the twin of what the device makes where the planes
 * lie (shaders/components.wgsl `first_sums`, engine/gpu/components.ts firstSumsOf).
 */
export function topSums(spec: WindowSpectra, top: FieldTop, lists: PartLists[]): Float32Array[] {
  return top.parts.map(({ shape }, k) => {
    const { sample, reach, regions } = lists[k]
    const halves = Array.isArray(regions) ? regions : [[], []]
    const { cells, ends } = modalSamples(spec.n, signatureWindow(placementOf(spec.n, shape)))
    const blocks = Array.from(ends, (end, b) => cells.subarray(b ? ends[b - 1] : 0, end))
    const sums = [sample, reach, ...halves, ...blocks].map((list) => powerSumsOf(spec, list))
    const out = new Float32Array(sums.length * spec.bins)
    sums.forEach((one, l) => out.set(one, l * spec.bins))
    return out
  })
}

/**
 * What measureDynamics reads at a window's first parts' modes (`top`'s; `lists`: topLists'): per part its
 * mode's bin (strongestBin of its mode's cells' power sums), then planes 0, 2 bin and 2 bin + 1 of each of
 * its sample's MAX_SAMPLED_CELLS slots and its winding circles' 64 cells (0 where a slot holds none): the
 * twin of shaders/components.wgsl `first_modes`.
 */
export function topModes(spec: WindowSpectra, top: FieldTop, lists: PartLists[]): Float32Array[] {
  return top.parts.map(({ shape }, k) => {
    const { sample, reach } = lists[k]
    const { bin } = strongestBin(powerSumsOf(spec, reach), spec)
    const slots = Array.from({ length: MAX_SAMPLED_CELLS }, (_, s) => sample[s] ?? -1)
    const place = placementOf(spec.n, shape)
    const cells = [...slots, ...circleCells(place, 10), ...circleCells(place, 7)]
    const out = new Float32Array(1 + 3 * cells.length)
    out[0] = bin
    cells.forEach((cell, s) => {
      if (cell < 0) return
      const row = spec.planesOf(cell)
      out.set([row[0], row[2 * bin], row[2 * bin + 1]], 1 + 3 * s)
    })
    return out
  })
}

/** The device's sums of the k-th part, where it made them: its first parts are the list's first, its roots the list's. */
function devicePart(top: FieldTop | undefined, listed: Float64Array | undefined, k: number): TopPart | undefined {
  const part = top?.parts[k]
  return part && part.root === listed?.[1 + 3 * k] ? part : undefined
}

/** What the device read of part k over the window (Part.reads), where it read it (devicePart). */
function readsOf(top: FieldTop | undefined, listed: Float64Array | undefined, found: Found[], k: number): PartReads | undefined {
  const own = devicePart(top, listed, k)?.reads
  if (!own) return undefined
  const rule = regionRule(found, k)
  if (rule !== 'paired') return { own, halves: rule === 'halved' }
  // paired with a part past the first TOP_PARTS: none of it served, so that cellsRead measures it over zeros alone, or over what detect reads
  const next = devicePart(top, listed, k + 1)?.reads
  return next && { own, halves: false, next }
}

/** A part's later sums and their unit (Part.later), where the device made them (devicePart). */
function laterOf(top: FieldTop | undefined, part: TopPart | undefined): Part['later'] {
  return part?.later && top?.laterUnit !== undefined ? { sums: part.later, unit: top.laterUnit } : undefined
}

/**
 * The components of a stability map above the threshold, the one holding most stability mass first,
 * each measured only when first reached (a field's first structure is often its first component), and
 * those that cannot stand out of the map (outshone) neither measured nor given.
 * The regions of a component for a frequency ratio are it and the next component when that one is
 * strong enough, else its two halves along its principal axis.
 */
function* partsOf(map: Float32Array, n: number, listed: Float64Array | undefined, top?: FieldTop): Generator<Part> {
  let held = measured.get(map)
  if (!held) {
    held = { found: listed ? listedFound(map, n, listed) : rankedComponents(map, n).map(madeFound), parts: [] }
    measured.set(map, held)
  }
  const { found, parts } = held
  for (const [k, f] of found.entries()) {
    if (parts[k] === undefined) {
      held.total ??= top?.total ?? fieldTotal(map).total
      if (outshone(f.mass, f.count, held.total, map.length)) parts[k] = null
      else {
        const { cells, mass } = f
        const device = devicePart(top, listed, k)
        const sums = device?.shape ?? shapeSums(cells, n)
        const { axis, mean_radius, ...shape } = measure(map, n, cells, held.total, sums)
        const { sx, sy, sxx, syy, sxy, radii } = sums
        const place = placementOf(n, sums)
        parts[k] = {
          cells,
          mass,
          shape,
          sums: { cells: sums.cells, sx, sy, sxx, syy, sxy, radii },
          place,
          regions: once(() => regionsOf(found, k, n)),
          later: laterOf(top, device),
          reads: readsOf(top, listed, found, k),
          ...lazyReads(cells, n, place),
        }
      }
    }
    const part = parts[k]
    if (part) yield part
  }
}

/**
 * A part's features: its shape, and its dynamics over the window's spectra (`later`: the later
 * window's sums); none where the part fades or does not stand out, which no spectrum can
 * make a structure (`holds`), so that its spectra are not read.
 */
function featuresOf(spec: WindowSpectra, map: Float32Array, later: Later, p: Part, served?: ServedSpectra): StructureFeatures | undefined {
  const sustain = p.later ? sustainFrom(p.later.sums.units, p.later.unit, later.taken, p.mass) : sustainOf(p.cells, map, later)
  if (!holds({ sustain, stability_ratio: p.shape.stability_ratio })) return undefined
  served?.serve(p)
  return { ...p.shape, ...measureDynamics(served?.spec ?? spec, p.cells, sustain, p.place, p.regions(), p.reach()).features }
}

/** `spec` answering what the device read of the window's first parts (`top`) from that (ServedSpectra), where it read them. */
function servedOf(spec: WindowSpectra, top: FieldTop | undefined): ServedSpectra | undefined {
  return top?.parts.some((p) => p.reads) ? new ServedSpectra(spec) : undefined
}

/**
 * The classed structures of a recorded window (n x n frames, or their spectra as evolve keeps them), the one holding most stability mass
 * first, at most `limit` of them. `later` is a later window's sums (what the structure kept).
 */
export async function detect(window: Recording | WindowSpectra, later: Later, limit = Infinity): Promise<Structure[]> {
  const spec = spectraFor(window)
  const map = spec.stability()
  const found: Structure[] = []
  if (limit < 1) return found
  const top = spec.source.top?.()
  const served = servedOf(spec, top)
  for (const part of partsOf(map, spec.n, spec.source.listed?.(), top)) {
    const features = featuresOf(spec, map, later, part, served)
    if (!features) continue
    const classed = classify(features)
    if (!classed) continue
    const sig = signature(served?.spec ?? spec, map, part.place, part.modal())
    found.push({ ...classed, features, mass: part.mass, cells: part.cells, signature: sig, hash: await signatureHash(sig) })
    // before the next part is measured
    if (found.length >= limit) break
  }
  return found
}

/** What detection reads of a window beyond its stability map (cellsRead). */
export interface WindowReads {
  /** The lists of cells whose power sums it reads (WindowSpectra.powerSums): list l is lists[ends[l - 1] .. ends[l]]. */
  lists: Int32Array
  ends: Int32Array
  /** The cells it reads at their mode's bin (WindowSpectra.amplitudeAt), a pair each: the cell, and the index of its mode's list. */
  modes: Int32Array
  /** The part a perturbation would act on, as the stability maps tell; none where no part holds (then detection finds nothing). */
  planned?: PlannedPart
}

/**
 * The part a perturbation of the field acts on (the first structure detection finds), as far as the
 * stability maps alone tell: the first part, by mass, that holds, less those the device read whole
 * with the maps (Part.reads) that their spectra do not class. `decided`: its shape alone classes it
 * (field-wide, compact or a ring), or the spectra the device read do, so detection's first structure
 * is this part whatever the other planes say; else the spectra decide, and detection may find a later
 * part, or none.
 */
export interface PlannedPart {
  /** Its first cell: the structure detection finds is this part when it holds this cell. */
  cell: number
  decided: boolean
  area: number
  /** What its erase plan reads (engine/discovery/evaluate.ts erasePlan), where it is not field-wide. */
  sums: PlanSums
}

/**
 * What detect(spec, later, limit) reads beyond the stability map (plane 1): the lists of cells whose
 * power sums it reads (a structure's dominant modes, its modal map's blocks), and the cells it reads
 * at a mode's strongest bin (the standing sum's and the winding circles'), so that where the planes
 * live only those sums and those cells' planes at that bin come back. Which lists and cells follows
 * from the stability maps alone; the other planes only say whether a part is classed, and a part
 * classed with every other plane read as 0 is classed by its shape alone, so with the real planes
 * too. So a run over zeros that measures every part it reaches (and its signature's modal map, classed or not)
 * until `limit` are classed reaches every part detection reaches, and reads a superset of what it
 * reads. Detection reads no plane of a cell but these (the run fails where it would). A first part
 * the device read whole with the maps (Part.reads) is measured over those reads, as detect measures
 * it, and none of its lists is named.
 */
export function cellsRead(spec: WindowSpectra, later: Later, limit = Infinity): WindowReads {
  const zeroSums = new Float32Array(spec.bins)
  const zeroPlanes = [0, 0, 0]
  // each list once, numbered in the order first asked for; each cell read at a mode once (list l, cell c: l n^2 + c)
  const lists = new ListIndex()
  const listed: ArrayLike<number>[] = []
  const modes = new Set<number>()
  const cellCount = spec.n * spec.n
  const zeros = new WindowSpectra(spec.n, spec.dt, spec.frames, {
    plane: (p, cell) => {
      if (p === 1) return spec.source.plane(1, cell)
      throw new CrystalError('internal', `detection read plane ${p} of cell ${cell}, which is not taken where the fields live`)
    },
    powers: (cells) => {
      if (lists.add(cells) === listed.length) listed.push(cells)
      return zeroSums
    },
    modePlanes: (cell, mode) => {
      const l = lists.get(mode)
      if (l === undefined) throw new CrystalError('internal', `detection read cell ${cell} at a mode whose power sums it had not asked for`)
      modes.add(l * cellCount + cell)
      return zeroPlanes
    },
  })
  const map = spec.stability()
  let classed = 0
  let planned: PlannedPart | undefined
  // what the device read of the first parts is not named: those parts are measured as detect measures them
  const top = spec.source.top?.()
  const served = servedOf(zeros, top)
  if (limit >= 1)
    for (const part of partsOf(map, spec.n, spec.source.listed?.(), top)) {
      const features = featuresOf(zeros, map, later, part, served)
      if (!features) continue
      // classed by its shape alone over zeros, or, where the device read it whole, as detect classes it
      const classes = classify(features) !== undefined
      // a part the device read whole is measured here as detect measures it: one its features do not
      // class is not detection's structure, so it is neither planned nor read further
      if (part.reads && !classes) continue
      // what the signature reads beyond the map: its modal map's blocks (the map's samples need nothing)
      modalMap(served?.spec ?? zeros, signatureWindow(part.place), part.modal())
      planned ??= { cell: part.cells[0], decided: classes, area: part.shape.area, sums: part.sums }
      if (classes && ++classed >= limit) break
    }
  // as typed ints: they cross worker threads twice as a copy of their bytes
  const ends = new Int32Array(listed.length)
  listed.reduce((end, l, k) => (ends[k] = end + l.length), 0)
  const all = new Int32Array(ends.at(-1) ?? 0)
  listed.forEach((l, k) => all.set(l, k ? ends[k - 1] : 0))
  // the pairs, cell then list, in the order first read (an array of pairs spread and flattened was a
  // fifth of naming a window's cells)
  const pairs = new Int32Array(2 * modes.size)
  let k = 0
  for (const key of modes) {
    pairs[k++] = key % cellCount
    pairs[k++] = (key - (key % cellCount)) / cellCount
  }
  return { lists: all, ends, modes: pairs, planned }
}

/** The class a structure takes once its response to a perturbation is known. */
export function withResponse(s: Structure, response: Response): Structure | undefined {
  const classed = classify(s.features, response)
  return classed && { ...s, ...classed, response }
}
