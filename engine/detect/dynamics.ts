// Classes from dynamics (docs/detection.md): a structure found on a stability map is measured over a
// recorded window of the field itself (how it oscillates, whether it stands or rotates, what it keeps),
// as its per-cell spectra (engine/detect/spectra.ts): the frames themselves stay where they were made.
import { CrystalError } from '../errors.js'
import { circleCells, type Placement, reachBox } from './placement.js'
import type { WindowSpectra } from './spectra.js'

/** A recorded window of one field: `frames` snapshots of u (n x n each), `dt` steps apart. */
export interface Recording {
  n: number
  dt: number
  frames: readonly Float32Array[]
}

export interface Dynamics {
  features: DynamicsFeatures
}

export interface DynamicsFeatures {
  /** Stability mass of the structure's cells in the later window over the earlier one: 1 holds, 0 gone. */
  sustain: number
  /** Dominant frequency of the structure, cycles per step. */
  frequency: number
  /** |sum A^2| / sum |A|^2 of the dominant mode's complex amplitudes A: 1 = every cell in phase or anti-phase (standing), 0 = phases all round (rotating). */
  standing: number
  /** Turns of the dominant mode's phase around the structure's centroid (a signed integer). */
  winding: number
  /** Dominant frequency of the stronger region over the weaker one's, when the structure has two regions; 0 otherwise. */
  region_ratio: number
}

/** Lowest DFT bin whose ratio to another is trusted (a 2:1 of bins 2 and 1 is resolution, not locking). */
export const MIN_RATIO_BIN = 3

/**
 * At most this many cells enter a spectrum or a sum over the structure: an evenly strided sample of
 * a larger set (a field-wide structure's spectrum is the same from a fraction of its cells, at a
 * fraction of the cost).
 */
export const MAX_SAMPLED_CELLS = 256

/** Where the i-th of a sample of a list of `length` entries is taken (all of them where it is short). */
function sampledAt(i: number, length: number): number {
  return length <= MAX_SAMPLED_CELLS ? i : Math.floor((i * length) / MAX_SAMPLED_CELLS)
}

/** A list's sample: every entry where it is short, else MAX_SAMPLED_CELLS evenly strided (sampledAt). */
export function sample(cells: readonly number[]): readonly number[] {
  if (cells.length <= MAX_SAMPLED_CELLS) return cells
  // a loop, not Array.from with a function a cell (a fifth of dominantMode's time)
  const out: number[] = []
  for (let i = 0; i < MAX_SAMPLED_CELLS; i++) out.push(cells[sampledAt(i, cells.length)])
  return out
}

type Mode = { bin: number; frequency: number; cells: readonly number[] }

/** The strongest bin of the powers summed over cells already sampled, its frequency, and those cells. */
function modeOver(spec: WindowSpectra, sampled: readonly number[]): Mode {
  return { ...strongestBin(spec.powerSums(sampled), spec), cells: sampled }
}

/** The strongest DFT bin (1..T/2; DC removed) of the powers summed over a sample of `cells` (WindowSpectra.powerSums), and its frequency. */
export function dominantMode(spec: WindowSpectra, cells: readonly number[]): Mode {
  return modeOver(spec, sample(cells))
}

/**
 * The strongest bin of power sums (1..bins; the lowest of equal ones) and its frequency: the rule
 * shaders/mode_planes.wgsl takes a mode's bin by, over the same sums.
 */
export function strongestBin(power: Float32Array, spec: Pick<WindowSpectra, 'bins' | 'frames' | 'dt'>): { bin: number; frequency: number } {
  let bin = 1
  for (let k = 2; k <= spec.bins; k++) if (power[k - 1] > power[bin - 1]) bin = k
  return { bin, frequency: bin / (spec.frames * spec.dt) }
}

/**
 * sample() of a structure's cells (in index order) followed by the cells of a box round it (x0..x1,
 * y0..y1) that are not among them, in scan order, each once: made without the whole list, which is
 * thousands of cells where a field-wide structure's box is the field (the list, a flag a cell and the
 * ring's pushes were a tenth of naming a window's cells).
 */
export function reachSample(cells: readonly number[], n: number, [x0, x1, y0, y1]: readonly number[]): readonly number[] {
  for (let k = 1; k < cells.length; k++)
    if (cells[k] <= cells[k - 1])
      throw new CrystalError('internal', `a structure's cells must be listed in index order: cell ${cells[k]} after ${cells[k - 1]}`)
  // the structure's cells in the box: row by row, those from the row's x0 to its x1 (sorted: a walk)
  let inBox = 0
  let k = 0
  for (let y = y0; y <= y1; y++) {
    while (k < cells.length && cells[k] < y * n + x0) k++
    const from = k
    while (k < cells.length && cells[k] <= y * n + x1) k++
    inBox += k - from
  }
  const length = cells.length + (x1 - x0 + 1) * (y1 - y0 + 1) - inBox
  const taken = Math.min(length, MAX_SAMPLED_CELLS)
  // the list's entry for each of sample()'s picks, ascending: the cells', then the ring's, whose cells
  // come from one walk through the box beside the structure's
  const at = (s: number) => sampledAt(s, length)
  const out: number[] = []
  let s = 0
  for (; s < taken && at(s) < cells.length; s++) out.push(cells[at(s)])
  // the ring's cells come a gap at a time: each row's run between two of the structure's cells, whose
  // entries are counted, not visited (a field-wide structure's box is the field)
  let [ring, next, wanted] = [cells.length, 0, at(s)]
  for (let y = y0; y <= y1 && s < taken; y++) {
    const [start, end] = [y * n + x0, y * n + x1 + 1]
    while (next < cells.length && cells[next] < start) next++
    for (let from = start; from < end && s < taken; ) {
      const to = next < cells.length && cells[next] < end ? cells[next] : end
      // the gap [from, to) holds ring entries ring .. ring + (to - from)
      for (; s < taken && wanted < ring + (to - from); wanted = at(++s)) out.push(from + wanted - ring)
      ring += to - from
      from = to + 1
      if (to < end) next++
    }
  }
  return out
}

/** Turns of the mode's phase along a circle (its cells: circleCells), skipping weak cells; 0 when too little of the circle is strong. */
function windingOf(amp: (cell: number) => [number, number], circle: Int32Array): number {
  const phases: number[] = []
  let peak = 0
  const samples: [number, number][] = []
  for (const cell of circle) {
    const v = cell >= 0 ? amp(cell) : undefined
    samples.push(v ?? [0, 0])
    if (v) peak = Math.max(peak, Math.hypot(v[0], v[1]))
  }
  for (const [re, im] of samples) if (peak > 0 && Math.hypot(re, im) >= 0.2 * peak) phases.push(Math.atan2(im, re))
  // a winding needs the phase followed most of the way round
  if (phases.length < 0.75 * circle.length) return 0
  let turn = 0
  for (let i = 0; i < phases.length; i++) {
    let d = phases[(i + 1) % phases.length] - phases[i]
    d -= 2 * Math.PI * Math.round(d / (2 * Math.PI))
    turn += d
  }
  return Math.round(turn / (2 * Math.PI))
}

/**
 * Measures the structure (its `cells`, and where it is placed) over the recording; `sustain` is what it
 * kept in a later window (engine/detect/detect.ts sustainOf), `regions` the structure's two halves (or
 * its two regions) when it has them.
 */
export function measureDynamics(
  spec: WindowSpectra,
  cells: readonly number[],
  sustain: number,
  place: Placement,
  regions?: [readonly number[], readonly number[]],
  /** reachSample of its cells over reachBox(place), where made already. */
  reach: readonly number[] = reachSample(cells, spec.n, reachBox(place)),
): Dynamics {
  // the mode over the structure and a ring of cells around it, so that the winding circle sees it all
  const mode = modeOver(spec, reach)
  const amp = (cell: number) => spec.amplitudeAt(cell, mode)
  let sr = 0
  let si = 0
  let total = 0
  for (const c of sample(cells)) {
    const [re, im] = amp(c)
    sr += re * re - im * im
    si += 2 * re * im
    total += re * re + im * im
  }
  // a ratio of two bins means something only when both are resolved: at least MIN_RATIO_BIN cycles in the window
  let region_ratio = 0
  if (regions) {
    const [a, b] = regions.map((cs) => dominantMode(spec, cs).bin)
    if (Math.min(a, b) >= MIN_RATIO_BIN) region_ratio = Math.max(a, b) / Math.min(a, b)
  }
  // a winding counts when the circles at the mean radius and at 0.7 of it both see it
  const turns = [10, 7].map((tenths) => windingOf(amp, circleCells(place, tenths)))
  const features = {
    sustain,
    frequency: mode.frequency,
    standing: total > 0 ? Math.hypot(sr, si) / total : 0,
    winding: turns[0] === turns[1] ? turns[0] : 0,
    region_ratio,
  }
  return { features }
}
