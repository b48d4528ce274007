// The CPU twin of shaders/spectra.wgsl `accumulate`: a window's planes (engine/detect/spectra.ts) from
// its frames, the same float32 operations in the same order as the kernel's frame-by-frame sums, but
// taken cell by cell when detection first reads a cell, so that the host sums only the cells it
// reads (a few hundred of a field's thousands). Test: engine/discovery/record.test.ts (against the
// kernel), engine/detect/spectra.test.ts (against the float64 DFT).
import type { Recording } from '../detect/dynamics.js'
import { type PlaneData, type PlaneSource, windowCoefficients, windowPlanes, WindowSpectra } from '../detect/spectra.js'

/** One field's frames as the planes of their window. */
export class FramePlanes implements PlaneSource {
  private readonly count: number
  private readonly coef: Float32Array
  /** Per cell, its planes once it is first read (plane 1, sum |u|, is summed apart: the stability map reads every cell). */
  private readonly sums: (Float32Array | undefined)[]
  /** One cell's series (scratch). */
  private readonly series: Float32Array

  constructor(private readonly frames: readonly Float32Array[]) {
    this.count = windowPlanes(frames.length)
    this.coef = windowCoefficients(frames.length)
    const cells = frames[0]?.length ?? 0
    this.sums = new Array(cells)
    this.series = new Float32Array(frames.length)
  }

  plane(p: number, cell: number): number {
    return p === 1 ? this.absSum(cell) : this.row(cell)[p]
  }

  /** The cell's planes (its sum |u| at index 1 is not among them: `plane(1, cell)` sums it). */
  row(cell: number): Float32Array {
    let sums = this.sums[cell]
    if (!sums) this.sums[cell] = sums = this.fill(cell)
    return sums
  }

  data(): PlaneData {
    return { kind: 'frames', frames: [...this.frames] }
  }

  private absSum(cell: number): number {
    let acc = 0
    for (let t = 0; t < this.frames.length; t++)
      acc = t === 0 ? Math.abs(this.frames[t][cell]) : Math.fround(acc + Math.abs(this.frames[t][cell]))
    return acc
  }

  /** The kernel's sums for one cell: frame 0 sets each, every later frame adds its term (float32 each). */
  private fill(cell: number): Float32Array {
    const { count, coef, frames, series } = this
    const sums = new Float32Array(count)
    const T = frames.length
    for (let t = 0; t < T; t++) series[t] = frames[t][cell]
    let sum = series[0]
    for (let t = 1; t < T; t++) sum = Math.fround(sum + series[t])
    sums[0] = sum
    // two bins' four planes at a time: independent chains of float32 roundings, not one
    let p = 2
    for (; p + 4 <= count; p += 4) {
      let a = Math.fround(series[0] * coef[p])
      let b = Math.fround(series[0] * coef[p + 1])
      let c = Math.fround(series[0] * coef[p + 2])
      let d = Math.fround(series[0] * coef[p + 3])
      for (let t = 1; t < T; t++) {
        const v = series[t]
        const at = t * count + p
        a = Math.fround(a + Math.fround(v * coef[at]))
        b = Math.fround(b + Math.fround(v * coef[at + 1]))
        c = Math.fround(c + Math.fround(v * coef[at + 2]))
        d = Math.fround(d + Math.fround(v * coef[at + 3]))
      }
      sums[p] = a
      sums[p + 1] = b
      sums[p + 2] = c
      sums[p + 3] = d
    }
    // an odd bin left over
    for (; p < count; p++) {
      let a = Math.fround(series[0] * coef[p])
      for (let t = 1; t < T; t++) a = Math.fround(a + Math.fround(series[t] * coef[t * count + p]))
      sums[p] = a
    }
    return sums
  }
}

/** A recording's window as detection reads it (a synthetic recording, or frames read back one by one). */
export function spectraOf(rec: Recording): WindowSpectra {
  return new WindowSpectra(rec.n, rec.dt, rec.frames.length, new FramePlanes(rec.frames))
}
