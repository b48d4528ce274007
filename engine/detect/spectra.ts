// A recorded window reduced to what detection reads of it (docs/detection.md): per cell, the sum of
// u, the sum of |u| (the stability map) and the Hann-windowed DFT sums at every bin 1..T/2, each
// accumulated frame by frame where the fields live (shaders/spectra.wgsl, CPU twin
// engine/cpu/spectra.ts), so that the frames themselves never reach the host. The mean is taken
// out here, only for the cells detection reads: sum_t (u_t - m) c_t = sum_t u_t c_t - m sum_t c_t.
import type { FieldTop } from './sums.js'
import { CrystalError } from '../errors.js'
import { FreeList, withSlack } from '../util/free_list.js'

/** Planes of a window of T frames: sum u, sum |u|, then cos and sin sums of bins 1..T/2. */
export function windowPlanes(frames: number): number {
  return 2 + 2 * Math.floor(frames / 2)
}

const coefficients = new Map<number, Float32Array>()
const totals = new Map<number, { exact: Float64Array; float32: Float32Array }>()

/**
 * Per frame t of a window of T, per plane: the float32 factor u_t is multiplied by (1 for the sum,
 * unused for |u|, Hann(t) cos(2 pi k t / T) and Hann(t) sin(2 pi k t / T) for bin k), [t][plane].
 */
export function windowCoefficients(frames: number): Float32Array {
  let c = coefficients.get(frames)
  if (!c) {
    const planes = windowPlanes(frames)
    c = new Float32Array(frames * planes)
    for (let t = 0; t < frames; t++) {
      const w = 0.5 - 0.5 * Math.cos((2 * Math.PI * (t + 0.5)) / frames)
      c[t * planes] = 1
      c[t * planes + 1] = 1
      for (let k = 1; 2 * k < planes; k++) {
        c[t * planes + 2 * k] = w * Math.cos((2 * Math.PI * k * t) / frames)
        c[t * planes + 2 * k + 1] = w * Math.sin((2 * Math.PI * k * t) / frames)
      }
    }
    coefficients.set(frames, c)
  }
  return c
}

/**
 * Per plane of a window of T frames, the sum over the window of its factor: what the mean contributes
 * to each sum. `exact` (float64) is what the host takes the mean out with (WindowSpectra.amplitude);
 * `float32` what shaders/power_sums.wgsl and its twin powerSumsOf take it out with.
 */
export function windowTotals(frames: number): { exact: Float64Array; float32: Float32Array } {
  let t = totals.get(frames)
  if (!t) {
    const planes = windowPlanes(frames)
    const c = windowCoefficients(frames)
    const exact = new Float64Array(planes)
    for (let f = 0; f < frames; f++) for (let p = 2; p < planes; p++) exact[p] += c[f * planes + p]
    totals.set(frames, (t = { exact, float32: Float32Array.from(exact) }))
  }
  return t
}

/**
 * A window's planes as plain data that a worker thread can be sent (engine/discovery/detector.ts) and
 * rebuild its source from: the frames themselves (engine/cpu/spectra.ts FramePlanes), or the
 * stability plane with what detection reads beyond it, taken where the fields live (HeldPlanes).
 */
export type PlaneData =
  | { kind: 'frames'; frames: Float32Array[] }
  | ({ kind: 'held'; field: number; stability: Float32Array; listed?: Float64Array; top?: FieldTop } & HeldReads)

/**
 * What a window holds of what detection reads beyond its stability map, made where its planes live
 * (engine/gpu/record.ts): the power sums of lists of cells, and cells' planes at their mode's bin.
 */
export interface HeldReads {
  gathered: Float32Array
  bins: number
  /** Lists of cells (list l is lists[ends[l - 1] .. ends[l]]) whose power sums are in `gathered` from `powersFrom`, a float a bin and list. */
  lists: Int32Array
  ends: Int32Array
  powersFrom: number
  /**
   * Cells read at their mode's bin, a pair each: the cell and its mode's list (the list whose power
   * sums' strongest bin is the bin); in `gathered` from `modesFrom`, 4 floats a pair: the bin, then
   * planes 0, 2 bin and 2 bin + 1 of the cell.
   */
  modes: Int32Array
  modesFrom: number
}

/** Plane p of a cell of one field's window (the planes of windowPlanes). */
export interface PlaneSource {
  plane(p: number, cell: number): number
  /**
   * Every plane of a cell at once where the source holds them so (plane p at index p; index 1, the
   * stability, is not read from it): the power of every bin of a cell takes one call, not three a bin.
   */
  row?(cell: number): Float32Array
  /** Plane 1 (the sum of |u|) of every cell, where the source holds it so: the stability map without a call a cell. */
  stabilitySums?(): Float32Array
  /**
   * The power sums of these cells (WindowSpectra.powerSums) where they were made where the planes live;
   * undefined where they are made from the planes.
   */
  powers?(cells: ArrayLike<number>): Float32Array | undefined
  /**
   * Planes 0, 2 bin and 2 bin + 1 of a cell, where they were taken where the planes live at the
   * strongest bin of the power sums of `mode` (dominantMode's sample), which is `bin`; undefined
   * where they are read from the planes.
   */
  modePlanes?(cell: number, mode: ArrayLike<number>, bin: number): ArrayLike<number> | undefined
  /** The source as data (absent where it cannot be sent: detection then stays on the thread that holds it). */
  data?(): PlaneData
  /**
   * The stability map's components as the device listed them (engine/gpu/components.ts ListedComponents:
   * the threshold, then each one's smallest cell, cells and mass, ranked as rankedComponents ranks
   * them), where it did: detection then labels no map.
   */
  listed?(): Float64Array | undefined
  /**
   * The map's first parts by rank with their exact sums, as the device made them (engine/gpu/components.ts
   * topOf; where it listed the map): detection takes their shapes, sustain and persistence from them.
   */
  top?(): FieldTop | undefined
}

/**
 * Floats on memory that worker threads share without a copy where the platform has it (Node, a
 * cross-origin isolated page), else on memory of their own.
 */
export function sharedFloats(length: number): Float32Array {
  return typeof SharedArrayBuffer === 'function' ? new Float32Array(new SharedArrayBuffer(length * 4)) : new Float32Array(length)
}

/** Memory given back (giveBack) for reusedFloats: at most 8 buffers (an evolve generation gives back 5). */
const returned = new FreeList<ArrayBufferLike>(
  (b) => b.byteLength,
  () => {},
  { count: 8, bytes: Number.POSITIVE_INFINITY },
)

/**
 * Floats as sharedFloats gives, but on memory that may have been used before, so their values are
 * whatever was there: for a caller that writes every one. Evolve reads its windows back into these
 * (some 300 MB a batch at population 1,000, N = 96), and the first touch of fresh memory costs several
 * times the copy (110 MB: 56 to 81 ms into fresh memory, 10 to 15 ms into memory touched before).
 * Memory given back that holds `length` floats and at most twice that is taken (engine/util/free_list.ts).
 */
export function reusedFloats(length: number): Float32Array {
  const kept = returned.take(length * 4)
  return kept ? new Float32Array(kept, 0, length) : sharedFloats(withSlack(length * 4) / 4).subarray(0, length)
}

/** The memory under `floats` (from reusedFloats), for a later reusedFloats: nothing may read it after. */
export function giveBack(floats: Float32Array): void {
  returned.give(floats.buffer)
}

/**
 * One field's window as the host holds it where the planes live elsewhere (engine/gpu/record.ts): the
 * stability plane of every cell, and what detection reads beyond it (HeldReads), taken there.
 */
export class HeldPlanes implements PlaneSource {
  private reads: HeldReads | undefined
  /** Per list of cells, its index; per cell read at a mode (list l, cell c: l n^2 + c), where its floats begin: made at the first read. */
  private index: { lists: ListIndex; modes: Map<number, number> } | undefined

  constructor(
    private readonly field: number,
    private readonly stability: Float32Array,
    /** Its map's components as the device listed them (PlaneSource.listed), where it did. */
    private readonly components?: Float64Array,
    /** Its map's first parts as the device summed them (PlaneSource.top), where it did. */
    private readonly first?: FieldTop,
  ) {}

  listed(): Float64Array | undefined {
    return this.components
  }

  top(): FieldTop | undefined {
    return this.first
  }

  hold(reads: HeldReads): void {
    this.reads = reads
    this.index = undefined
  }

  plane(p: number, cell: number): number {
    if (p === 1) return this.stability[cell]
    throw this.missing(`plane ${p} of cell ${cell} was not gathered`)
  }

  stabilitySums(): Float32Array {
    return this.stability
  }

  powers(cells: ArrayLike<number>): Float32Array {
    const { gathered, bins, powersFrom } = this.reads ?? this.missing('nothing was gathered')
    const l = this.indexed().lists.get(cells)
    if (l === undefined) throw this.missing(`the power sums of ${cells.length} cells from cell ${cells[0]} were not made`)
    return gathered.subarray(powersFrom + l * bins, powersFrom + (l + 1) * bins)
  }

  modePlanes(cell: number, mode: ArrayLike<number>, bin: number): Float32Array {
    const { gathered } = this.reads ?? this.missing('nothing was gathered')
    const { lists, modes } = this.indexed()
    const l = lists.get(mode)
    const at = l === undefined ? undefined : modes.get(l * this.stability.length + cell)
    if (at === undefined) throw this.missing(`cell ${cell} was not read at its mode's bin`)
    if (gathered[at] !== bin)
      throw this.missing(`cell ${cell} was read at bin ${gathered[at]} where the fields live, not at bin ${bin} (its mode's strongest)`)
    return gathered.subarray(at + 1, at + 4)
  }

  private indexed(): NonNullable<HeldPlanes['index']> {
    if (this.index) return this.index
    const { lists, ends, modes, modesFrom } = this.reads ?? this.missing('nothing was gathered')
    const index = { lists: new ListIndex(), modes: new Map<number, number>() }
    // the lists were named once each (cellsRead), so list l is numbered l
    for (let l = 0; l < ends.length; l++)
      if (index.lists.add(lists.subarray(l ? ends[l - 1] : 0, ends[l])) !== l) throw this.missing(`list ${l} was gathered twice`)
    for (let k = 0; k < modes.length; k += 2) index.modes.set(modes[k + 1] * this.stability.length + modes[k], modesFrom + 2 * k)
    return (this.index = index)
  }

  private missing(what: string): never {
    throw new CrystalError(
      'internal',
      `recorded window of field ${this.field}: ${what} where the fields live (gather what detection reads first)`,
    )
  }

  data(): PlaneData {
    const { field, stability } = this
    const none = {
      gathered: new Float32Array(0),
      bins: 0,
      lists: new Int32Array(0),
      ends: new Int32Array(0),
      powersFrom: 0,
      modes: new Int32Array(0),
      modesFrom: 0,
    }
    return { kind: 'held', field, stability, listed: this.components, top: this.first, ...(this.reads ?? none) }
  }

  /** A window held as `data` describes it. */
  static of(d: Extract<PlaneData, { kind: 'held' }>): HeldPlanes {
    const held = new HeldPlanes(d.field, d.stability, d.listed, d.top)
    if (d.gathered.length) held.hold(d)
    return held
  }
}

/** The cells a list's hash reads: at most this many, spread over it. */
const HASHED_CELLS = 8

/**
 * FNV-1a (32-bit) over a list's length and at most HASHED_CELLS of its cells, spread from its first to
 * its last: a bucket key, each bucket's lists told apart by all their cells (sameCells), which a list
 * found compares anyway. Hashing every cell (cached per array) was the largest part of detection on
 * the GPU path: 0.6 of 4.4 s over 3,000 windows at N = 96, naming their cells and detecting.
 */
export function hashOf(cells: ArrayLike<number>): number {
  const length = cells.length
  let h = Math.imul(0x811c9dc5 ^ length, 0x01000193)
  if (length <= HASHED_CELLS) {
    for (let k = 0; k < length; k++) h = Math.imul(h ^ cells[k], 0x01000193)
    return h
  }
  for (let k = 0; k < HASHED_CELLS; k++) h = Math.imul(h ^ cells[Math.floor((k * (length - 1)) / (HASHED_CELLS - 1))], 0x01000193)
  return h
}

function sameCells(a: ArrayLike<number>, b: ArrayLike<number>): boolean {
  if (a === b) return true
  if (a.length !== b.length) return false
  for (let k = 0; k < a.length; k++) if (a[k] !== b[k]) return false
  return true
}

/**
 * Lists of cells numbered by their contents, 0, 1, ... in the order first added: the same cells in the
 * same order, the same number (HeldPlanes and cellsRead find the lists asked for again by their cells).
 * Keyed by a hash and compared cell by cell, where a join of each list into a string key had been the
 * largest part of naming a window's cells (0.19 ms of some 1.6 a window here).
 */
export class ListIndex {
  private readonly buckets = new Map<number, { cells: ArrayLike<number>; id: number }[]>()
  /** By the array itself, once found: a mode's list is asked for once for each cell read at it, as the same array. */
  private readonly known = new WeakMap<ArrayLike<number>, number>()
  private count = 0

  get size(): number {
    return this.count
  }

  /** The list's number, or undefined where it was not added. */
  get(cells: ArrayLike<number>): number | undefined {
    let id = this.known.get(cells)
    if (id === undefined) {
      id = this.buckets.get(hashOf(cells))?.find((e) => sameCells(e.cells, cells))?.id
      if (id !== undefined) this.known.set(cells, id)
    }
    return id
  }

  /** The list's number, a new one where it is new. */
  add(cells: ArrayLike<number>): number {
    const held = this.get(cells)
    if (held !== undefined) return held
    const id = this.count++
    const h = hashOf(cells)
    const bucket = this.buckets.get(h)
    if (bucket) bucket.push({ cells, id })
    else this.buckets.set(h, [{ cells, id }])
    this.known.set(cells, id)
    return id
  }
}

/**
 * The CPU twin of shaders/power_sums.wgsl: per bin k = 1..bins, at k - 1, the sum over `cells` of each
 * cell's power at k, mean removed, in float32, each cell added in the order listed, with the kernel's
 * operations (the mean as the sum times the float32 1 / T, the window's totals rounded to float32).
 */
export function powerSumsOf(spec: WindowSpectra, cells: ArrayLike<number>): Float32Array {
  const f = Math.fround
  const out = new Float32Array(spec.bins)
  const totals = windowTotals(spec.frames).float32
  const inverse = f(1 / spec.frames)
  for (let c = 0; c < cells.length; c++) {
    const row = spec.planesOf(cells[c])
    const mean = f(row[0] * inverse)
    for (let k = 1; k <= spec.bins; k++) {
      const re = f(row[2 * k] - f(mean * totals[2 * k]))
      const im = f(row[2 * k + 1] - f(mean * totals[2 * k + 1]))
      out[k - 1] = f(out[k - 1] + f(f(re * re) + f(im * im)))
    }
  }
  return out
}

/** One field's window as detection reads it. */
export class WindowSpectra {
  readonly bins: number
  private readonly totals: Float64Array
  private map: Float32Array | undefined
  private readonly scratch: Float64Array

  constructor(
    readonly n: number,
    /** Steps between frames. */
    readonly dt: number,
    /** Frames in the window. */
    readonly frames: number,
    /** Where its planes are read (a zero-filled stand-in reads every other plane as 0: detect.ts cellsRead). */
    readonly source: PlaneSource,
  ) {
    this.bins = Math.floor(frames / 2)
    this.totals = windowTotals(frames).exact
    this.scratch = new Float64Array(windowPlanes(frames))
  }

  private plane(p: number, cell: number): number {
    return this.source.plane(p, cell)
  }
  /** Complex amplitude of the cell's series, mean removed and windowed, at DFT bin k (1..bins). */
  amplitude(cell: number, k: number): [number, number] {
    return this.amplitudeOf(this.plane(0, cell), this.plane(2 * k, cell), this.plane(2 * k + 1, cell), k)
  }

  /**
   * The cell's amplitude at its mode's bin (dominantMode: `mode` the cells whose power sums chose the
   * bin): from the planes the source took at that bin where it took them there, else as `amplitude`.
   */
  amplitudeAt(cell: number, mode: { cells: ArrayLike<number>; bin: number }): [number, number] {
    const held = this.source.modePlanes?.(cell, mode.cells, mode.bin)
    return held ? this.amplitudeOf(held[0], held[1], held[2], mode.bin) : this.amplitude(cell, mode.bin)
  }

  /** The amplitude at bin k from a cell's planes 0 (sum u), 2 k and 2 k + 1. */
  private amplitudeOf(sum: number, cos: number, sin: number, k: number): [number, number] {
    const mean = sum / this.frames
    return [cos - mean * this.totals[2 * k], -(sin - mean * this.totals[2 * k + 1])]
  }

  /**
   * Per bin k = 1..bins, at k - 1, the sum over `cells` of each cell's power at k (|amplitude|^2):
   * the source's where it made them where the planes live, else powerSumsOf over the planes.
   */
  powerSums(cells: ArrayLike<number>): Float32Array {
    if (!cells.length) return new Float32Array(this.bins)
    return this.source.powers?.(cells) ?? powerSumsOf(this, cells)
  }

  /** Every plane of a cell (plane 1, the stability, not among them): the source's row, else read one by one into a scratch row. */
  planesOf(cell: number): ArrayLike<number> {
    const row = this.source.row?.(cell)
    if (row) return row
    for (let p = 0; p < this.scratch.length; p++) if (p !== 1) this.scratch[p] = this.plane(p, cell)
    return this.scratch
  }

  /** The stability map at `cells` (stability()[c] for each, the same bits), without making the whole map where it is not made. */
  stabilityAt(cells: ArrayLike<number>): Float32Array {
    const out = new Float32Array(cells.length)
    const map = this.map
    const sums = map ? undefined : this.source.stabilitySums?.()
    const frames = this.frames || 1
    for (let k = 0; k < cells.length; k++) {
      const c = cells[k]
      if (map) out[k] = map[c]
      else if (sums) out[k] = sums[c] / frames
      else {
        // as stability() makes it: the plane rounded to float32, then divided
        out[k] = this.plane(1, c)
        out[k] /= frames
      }
    }
    return out
  }

  /** Mean |u| over the window (float32, as a sum of the frames divided by their count). */
  stability(): Float32Array {
    if (!this.map) {
      const cells = this.n * this.n
      this.map = new Float32Array(cells)
      const sums = this.source.stabilitySums?.()
      // each rounded to float32 once as a sum, once as the mean: the same as dividing the stored sums
      if (sums) for (let c = 0; c < cells; c++) this.map[c] = sums[c] / (this.frames || 1)
      else {
        for (let c = 0; c < cells; c++) this.map[c] = this.plane(1, c)
        for (let c = 0; c < cells; c++) this.map[c] /= this.frames || 1
      }
    }
    return this.map
  }
}
