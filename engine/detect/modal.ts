// The modal map of a structure's signature (docs/detection.md, "Signature"): a square window round the
// structure cut into MODAL_BLOCKS^2 blocks, and in each the root mean power of every DFT bin over the
// block's sampled cells. It reads some 1,000 cells a structure at N = 96, each block's as one list of
// power sums (WindowSpectra.powerSums), which are made on the GPU where the planes live there.
import { blockOffsets, MODAL_BLOCKS, MODAL_SAMPLES, roundedCentre, type SquareWindow } from './placement.js'
import type { WindowSpectra } from './spectra.js'

/** Blocks of the modal map. */
const MODAL_CELLS = MODAL_BLOCKS * MODAL_BLOCKS

/** The cells a modal map samples. */
export interface ModalSamples {
  /** The sampled cells inside the field, block by block (rows of blocks, then blocks), each block's in scan order. */
  cells: Int32Array
  /** Per block, where its cells end in `cells`. */
  ends: Int32Array
  /** Per block, its samples, those outside the field included (they count as still). */
  counts: Int32Array
}

/** The cells sampled over a square window (placement.ts signatureWindow) of a field of side n. */
export function modalSamples(n: number, w: SquareWindow): ModalSamples {
  const B = MODAL_BLOCKS
  // whole-cell offsets from the rounded centre (halves up), so that a structure moved by whole cells samples the same cells
  const [ox, oy] = roundedCentre(w)
  const offsets = Array.from({ length: B }, (_, b) => blockOffsets(w, b, B, MODAL_SAMPLES))
  const cells: number[] = []
  const ends = new Int32Array(MODAL_CELLS)
  const counts = new Int32Array(MODAL_CELLS)
  for (let by = 0; by < B; by++) {
    for (let bx = 0; bx < B; bx++) {
      const b = by * B + bx
      counts[b] = offsets[by].length * offsets[bx].length
      for (const y of offsets[by]) {
        for (const x of offsets[bx]) {
          const [i, j] = [ox + x, oy + y]
          if (i >= 0 && j >= 0 && i < n && j < n) cells.push(j * n + i)
        }
      }
      ends[b] = cells.length
    }
  }
  return { cells: Int32Array.from(cells), ends, counts }
}

/**
 * Which modes a structure holds where: over a square window (its signature's), the
 * root mean power of every DFT bin 1..T/2 in each of MODAL_CELLS blocks, bin-major, unit length.
 * Two genomes that settle in the same box mostly share the box's frequencies and the shape of their
 * mean |u|, but not how their power divides among the modes and places: this tells them apart, and
 * a change of noise seed barely moves it (docs/detection.md has the figures).
 */
export function modalMap(spec: WindowSpectra, w: SquareWindow, samples: ModalSamples = modalSamples(spec.n, w)): number[] {
  const { cells, ends, counts } = samples
  const out = new Array<number>(spec.bins * MODAL_CELLS)
  for (let b = 0; b < MODAL_CELLS; b++) {
    const sums = spec.powerSums(cells.subarray(b ? ends[b - 1] : 0, ends[b]))
    for (let k = 1; k <= spec.bins; k++) out[(k - 1) * MODAL_CELLS + b] = Math.sqrt(sums[k - 1] / Math.max(1, counts[b]))
  }
  const norm = Math.hypot(...out) || 1
  return out.map((v) => v / norm)
}
