// The CPU twin of shaders/spectra.wgsl `accumulate`: a window's planes (engine/detect/spectra.ts) from
// its frames, the same float32 operations in the same order as the kernel's frame-by-frame sums, but
// taken cell by cell when detection first reads a cell, so that the host sums only the cells it
// reads (a few hundred of a field's thousands). Test: engine/discovery/record.test.ts (against the
// kernel), engine/detect/spectra.test.ts (against the float64 DFT).
import type { Recording } from '../detect/dynamics.js'
import { type PlaneSource, windowCoefficients, windowPlanes, WindowSpectra } from '../detect/spectra.js'

/** One field's frames as the planes of their window. */
export class FramePlanes implements PlaneSource {
  private readonly count: number
  private readonly coef: Float32Array
  /** [cell][plane], filled when the cell is first read (plane 1, sum |u|, is summed apart: the stability map reads every cell). */
  private readonly sums: Float32Array
  private readonly filled: Uint8Array

  constructor(private readonly frames: readonly Float32Array[]) {
    this.count = windowPlanes(frames.length)
    this.coef = windowCoefficients(frames.length)
    const cells = frames[0]?.length ?? 0
    this.sums = new Float32Array(cells * this.count)
    this.filled = new Uint8Array(cells)
  }

  plane(p: number, cell: number): number {
    if (p === 1) return this.absSum(cell)
    if (!this.filled[cell]) this.fill(cell)
    return this.sums[cell * this.count + p]
  }

  private absSum(cell: number): number {
    let acc = 0
    for (let t = 0; t < this.frames.length; t++) acc = t === 0 ? Math.abs(this.frames[t][cell]) : Math.fround(acc + Math.abs(this.frames[t][cell]))
    return acc
  }

  /** The kernel's sums for one cell: frame 0 sets each, every later frame adds its term (float32 each). */
  private fill(cell: number): void {
    const { count, coef, frames, sums } = this
    const at = cell * count
    for (let t = 0; t < frames.length; t++) {
      const v = frames[t][cell]
      sums[at] = t === 0 ? v : sums[at] + v
      for (let p = 2; p < count; p++) {
        const term = Math.fround(v * coef[t * count + p])
        sums[at + p] = t === 0 ? term : sums[at + p] + term
      }
    }
    this.filled[cell] = 1
  }
}

/** A recording's window as detection reads it (a synthetic recording, or frames read back one by one). */
export function spectraOf(rec: Recording): WindowSpectra {
  return new WindowSpectra(rec.n, rec.dt, rec.frames.length, new FramePlanes(rec.frames))
}
