// The modal map of a structure's signature (docs/detection.md, "Signature"): a square window round the
// structure cut into MODAL_BLOCKS^2 blocks, and in each the root mean power of every DFT bin over the
// block's sampled cells. Its power sums are what reads the window's planes, some 1,000 cells a
// structure at N = 96: where the planes live on the GPU they are summed there by shaders/modal.wgsl
// over the cells `modalSamples` lists, and only the sums come back (engine/gpu/record.ts). `modalSums`
// is the kernel's CPU twin (the same float32 operations in the same order), and what the CPU backend
// uses. Test: engine/discovery/record.test.ts.
import { type WindowSpectra, windowTotals } from './spectra.js'

/** Blocks per side of the modal map, and cells per side sampled in a block at most. */
export const MODAL_BLOCKS = 4
const MODAL_SAMPLES = 8
/** Blocks of the modal map. */
export const MODAL_CELLS = MODAL_BLOCKS * MODAL_BLOCKS

/** The cells a modal map samples. */
export interface ModalSamples {
  /** The sampled cells inside the field, block by block (rows of blocks, then blocks), each block's in scan order. */
  cells: Int32Array
  /** Per block, where its cells end in `cells`. */
  ends: Int32Array
  /** Per block, its samples, those outside the field included (they count as still). */
  counts: Int32Array
}

/** The cells sampled over a square window (centre and half side in cells) of a field of side n. */
export function modalSamples(n: number, cx: number, cy: number, half: number): ModalSamples {
  const B = MODAL_BLOCKS
  const block = (2 * half) / B
  const stride = Math.max(1, block / MODAL_SAMPLES)
  // whole-cell offsets from the rounded centre, so that a structure moved by whole cells samples the same cells
  const [ox, oy] = [Math.round(cx), Math.round(cy)]
  const cells: number[] = []
  const ends = new Int32Array(MODAL_CELLS)
  const counts = new Int32Array(MODAL_CELLS)
  for (let by = 0; by < B; by++) {
    for (let bx = 0; bx < B; bx++) {
      const b = by * B + bx
      for (let y = -half + by * block + stride / 2; y < -half + (by + 1) * block; y += stride) {
        for (let x = -half + bx * block + stride / 2; x < -half + (bx + 1) * block; x += stride) {
          counts[b]++
          const [i, j] = [ox + Math.round(x), oy + Math.round(y)]
          if (i >= 0 && j >= 0 && i < n && j < n) cells.push(j * n + i)
        }
      }
      ends[b] = cells.length
    }
  }
  return { cells: Int32Array.from(cells), ends, counts }
}

/**
 * Per bin k = 1..bins and block b, at (k - 1) MODAL_CELLS + b, the sum over the block's sampled cells
 * of the cell's power at k (mean removed, windowed): float32, each cell added in the order listed,
 * as shaders/modal.wgsl adds them.
 */
export function modalSums(spec: WindowSpectra, s: ModalSamples): Float32Array {
  const { bins } = spec
  const out = new Float32Array(bins * MODAL_CELLS)
  const totals = windowTotals(spec.frames)
  const inverse = Math.fround(1 / spec.frames)
  const f = Math.fround
  for (let b = 0, start = 0; b < MODAL_CELLS; start = s.ends[b++]) {
    for (let c = start; c < s.ends[b]; c++) {
      const row = spec.planesOf(s.cells[c])
      const mean = f(row[0] * inverse)
      for (let k = 1; k <= bins; k++) {
        const re = f(row[2 * k] - f(mean * totals[2 * k]))
        const im = f(row[2 * k + 1] - f(mean * totals[2 * k + 1]))
        const at = (k - 1) * MODAL_CELLS + b
        out[at] = f(out[at] + f(f(re * re) + f(im * im)))
      }
    }
  }
  return out
}

/**
 * Which modes a structure holds where: over a square window (centre and half side in cells), the
 * root mean power of every DFT bin 1..T/2 in each of MODAL_CELLS blocks, bin-major, unit length.
 * Two genomes that settle in the same box mostly share the box's frequencies and the shape of their
 * mean |u|, but not how their power divides among the modes and places: this tells them apart, and
 * a change of noise seed barely moves it (docs/detection.md has the figures). The sums are the
 * window's own where it holds them (made where the planes live), else modalSums over its planes.
 */
export function modalMap(spec: WindowSpectra, cx: number, cy: number, half: number): number[] {
  const samples = modalSamples(spec.n, cx, cy, half)
  const sums = spec.source.modal?.(cx, cy, half) ?? modalSums(spec, samples)
  const out = Array.from(sums, (v, i) => Math.sqrt(v / Math.max(1, samples.counts[i % MODAL_CELLS])))
  const norm = Math.hypot(...out) || 1
  return out.map((v) => v / norm)
}
