// The CPU twin of shaders/spectra.wgsl `accumulate`: one frame of every field added into a window's
// planes (engine/detect/spectra.ts), the same float32 operations in the same order. Test:
// engine/detect/spectra.test.ts.
import type { Recording } from '../detect/dynamics.js'
import { windowCoefficients, windowPlanes, WindowSpectra } from '../detect/spectra.js'

/** Adds frame `slot` (u, `size` cells of every field) of a window `frames` long into `planes`; slot 0 starts it. */
export function accumulateWindow(planes: Float32Array, u: Float32Array, slot: number, frames: number): void {
  const count = windowPlanes(frames)
  const size = u.length
  const c = windowCoefficients(frames)
  const first = slot === 0
  for (let p = 0; p < count; p++) {
    const at = p * size
    const k = c[slot * count + p]
    for (let i = 0; i < size; i++) {
      const term = p === 1 ? Math.abs(u[i]) : p === 0 ? u[i] : Math.fround(u[i] * k)
      planes[at + i] = first ? term : planes[at + i] + term
    }
  }
}

/** A recording's window as detection reads it (a synthetic recording, or frames read back one by one). */
export function spectraOf(rec: Recording): WindowSpectra {
  const cells = rec.n * rec.n
  const planes = new Float32Array(windowPlanes(rec.frames.length) * cells)
  rec.frames.forEach((u, t) => accumulateWindow(planes, u, t, rec.frames.length))
  return new WindowSpectra(rec.n, rec.dt, rec.frames.length, planes)
}
