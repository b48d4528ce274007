// Where a part's reads fall, from its sums (docs/detection.md, item 3): the box its mode is taken over,
// the circles its winding is followed along and the square window its signature samples, each a
// function of integers (the part's ShapeSums), decided exactly: float64 where clear of its rounding,
// BigInt where not. So the cells are the same on any machine, and a kernel can name them alike from
// the sums the device makes.

import type { ShapeSums } from './sums.js'

/** Fractional bits of a cell's offset from its part's centroid (docs/detection.md, item 2's exact forms). */
export const OFFSET_BITS = 13
export const ONE = 2 ** OFFSET_BITS

/**
 * A part's place on a field of side n, as integers: its centroid is (sx / c, sy / c) in cells, its
 * radius, max(1, its mean radius), is rc / (c ONE) (rc = max(c ONE, ShapeSums' radii)), and its least
 * and greatest column and row are `edges`.
 */
export interface Placement {
  n: number
  c: number
  sx: number
  sy: number
  rc: number
  edges: ShapeSums['edges']
}

export function placementOf(n: number, s: Pick<ShapeSums, 'cells' | 'sx' | 'sy' | 'radii' | 'edges'>): Placement {
  return { n, c: s.cells, sx: s.sx, sy: s.sy, rc: Math.max(s.cells * ONE, s.radii), edges: s.edges }
}

/** The centroid in cells, x and y, as float64 (for what samples the map between cells: the signature's shape). */
export function centreOf({ c, sx, sy }: Pick<Placement, 'c' | 'sx' | 'sy'>): [number, number] {
  return [sx / c, sy / c]
}

/**
 * floor(a / b) of integers, |a| < 2^53 and b > 0, exactly: a quotient that is not whole lies at least
 * 1 / b from one, more than float64's rounding of it (under |a / b| 2^-53).
 */
function floorDiv(a: number, b: number): number {
  return Math.floor(a / b)
}

/** floor(a / b) of BigInts, b > 0 (BigInt's division truncates toward 0). */
function floorBig(a: bigint, b: bigint): bigint {
  return a >= 0n ? a / b : -((-a + b - 1n) / b)
}

/** The box round a part its mode is taken over: its cells within 1.5 radii of its centroid, in the field ([x0, x1, y0, y1]). */
export function reachBox({ n, c, sx, sy, rc }: Placement): [number, number, number, number] {
  // x0 = floor(sx / c - 1.5 rc / (c ONE)), x1 = ceil(sx / c + 1.5 rc / (c ONE)): one denominator
  const d = 2 * c * ONE
  const span = (s: number): [number, number] => [
    Math.max(0, floorDiv(2 * s * ONE - 3 * rc, d)),
    Math.min(n - 1, -floorDiv(-(2 * s * ONE + 3 * rc), d)),
  ]
  return [...span(sx), ...span(sy)]
}

/** Points on a winding circle. */
export const CIRCLE_POINTS = 32
/** Fractional bits of COS_16THS. */
const COS_BITS = 30
/** cos(j pi / 16) for j = 0 to 8, rounded to 2^-30: the circles' angles, one table on any machine. */
const COS_16THS = [1073741824, 1053110176, 992008094, 892783698, 759250125, 596538995, 410903207, 209476638, 0]

/** cos(2 pi j / CIRCLE_POINTS) in 2^-COS_BITS, any integer j. */
function cosOf(j: number): number {
  const k = ((j % CIRCLE_POINTS) + CIRCLE_POINTS) % CIRCLE_POINTS
  const m = k <= 16 ? k : 32 - k
  return m <= 8 ? COS_16THS[m] : -COS_16THS[16 - m]
}

const SCALE = ONE * 2 ** COS_BITS

/**
 * round(s / c + (tenths / 10) (rc / (c ONE)) (C 2^-COS_BITS)), rounding halves up as Math.round does:
 * floor((20 SCALE s + 2 tenths rc C + 10 SCALE c) / (20 SCALE c)), whose numerator passes 2^53.
 */
function roundedAlong(s: number, c: number, rc: number, tenths: number, C: number): number {
  const v = s / c + (tenths * rc * C) / (10 * c * SCALE) + 0.5
  const f = Math.floor(v)
  // each term within some 2^-50 of its magnitude (under the field's side): far from a whole number, floor is exact
  if (v - f > 1e-9 && f + 1 - v > 1e-9) return f
  const scale = BigInt(SCALE)
  const num = 20n * scale * BigInt(s) + 2n * BigInt(tenths) * BigInt(rc) * BigInt(C) + 10n * scale * BigInt(c)
  return Number(floorBig(num, 20n * scale * BigInt(c)))
}

/**
 * The cells of a winding circle of (tenths / 10) radii round the part's centroid, CIRCLE_POINTS of them
 * counterclockwise from +x (the point j at angle 2 pi j / CIRCLE_POINTS, rounded to the nearest cell),
 * -1 where a point falls outside the field.
 */
export function circleCells({ n, c, sx, sy, rc }: Placement, tenths: number): Int32Array {
  const out = new Int32Array(CIRCLE_POINTS)
  for (let j = 0; j < CIRCLE_POINTS; j++) {
    const x = roundedAlong(sx, c, rc, tenths, cosOf(j))
    const y = roundedAlong(sy, c, rc, tenths, cosOf(j - CIRCLE_POINTS / 4))
    out[j] = x >= 0 && y >= 0 && x < n && y < n ? y * n + x : -1
  }
  return out
}

/**
 * The square window a signature samples, as integers: centred on the centroid (sx / c, sy / c), its half
 * side hc / c holding every cell of the part (the farthest one's distance plus one, at least 1).
 */
export interface SquareWindow {
  c: number
  sx: number
  sy: number
  hc: number
}

/** A part's signature window: its farthest cells are at its extreme columns and rows. */
export function signatureWindow({ c, sx, sy, edges: [x0, x1, y0, y1] }: Omit<Placement, 'n' | 'rc'>): SquareWindow {
  const hc = Math.max(c, Math.abs(x0 * c - sx) + c, Math.abs(x1 * c - sx) + c, Math.abs(y0 * c - sy) + c, Math.abs(y1 * c - sy) + c)
  return { c, sx, sy, hc }
}

/**
 * Along one side, the offsets from the window's rounded centre of block b's samples (of `blocks` a
 * side, `samples` at most a side of each): at the centres of `samples` equal steps where a step is
 * over a cell, else of steps of one cell from half a cell in while they fall within the block, each
 * rounded to the nearest cell (halves up).
 */
export function blockOffsets({ c, hc }: SquareWindow, b: number, blocks: number, samples: number): number[] {
  const out: number[] = []
  // the window's side is 2 hc / c, a block's 1 / blocks of it; where a step (of samples a block) is at least a cell,
  // the block starts `start` steps from the centre and sample m is at (start + m + 1/2) steps
  const [D, start] = [blocks * samples, (b - blocks / 2) * samples]
  if (2 * hc >= D * c) for (let m = 0; m < samples; m++) out.push(floorDiv(2 * hc * (2 * (start + m) + 1) + D * c, 2 * D * c))
  else
    for (let m = 0; (2 * m + 1) * c * blocks < 4 * hc; m++) out.push(floorDiv(2 * hc * (b - blocks / 2) + c * blocks * (m + 1), c * blocks))
  return out
}

/** Blocks per side of a modal map, and samples per side of a block at most (modal.ts). */
export const MODAL_BLOCKS = 4
export const MODAL_SAMPLES = 8

/** The window's centre rounded to a cell, halves up: floor((2 s + c) / (2 c)) of each axis. */
export function roundedCentre({ c, sx, sy }: SquareWindow): [number, number] {
  return [floorDiv(2 * sx + c, 2 * c), floorDiv(2 * sy + c, 2 * c)]
}

/** Where a part's reads fall, all of it (what shaders/components.wgsl `places` makes for a field's first parts). */
export interface PartPlaces {
  box: [number, number, number, number]
  /** c times its signature window's half side. */
  hc: number
  centre: [number, number]
  /** Per block of a side, its samples' offsets from the centre. */
  offsets: number[][]
  /** The circles' cells, 32 at the radius then 32 at 0.7 of it, -1 outside the field. */
  circles: number[]
}

/** A first part's lists: its cells' sample (`sample`), the cells its mode is taken over (`reachSample`) and its regions. */
export interface PartLists {
  sample: number[]
  reach: number[]
  /**
   * What its frequency ratio reads (regionsOf): the next part's sample, the next part being among the
   * first parts ('next') or past them ('past'); its halves' samples; or nothing ('none').
   */
  regions: 'none' | 'next' | 'past' | [number[], number[]]
}

/** A part's places from its ShapeSums: the twin of shaders/components.wgsl `places`. */
export function partPlaces(n: number, sums: ShapeSums): PartPlaces {
  const place = placementOf(n, sums)
  const w = signatureWindow(place)
  return {
    box: reachBox(place),
    hc: w.hc,
    centre: roundedCentre(w),
    offsets: Array.from({ length: MODAL_BLOCKS }, (_, b) => blockOffsets(w, b, MODAL_BLOCKS, MODAL_SAMPLES)),
    circles: [...circleCells(place, 10), ...circleCells(place, 7)],
  }
}
