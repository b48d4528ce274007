// Inputs shared by the kernel tests: a material with every term switched on, and random fields.
import type { Material } from '../engine/contracts/material.js'
import { stepParams, type StepParams } from '../engine/field/params.js'

/** Noise, saturation, viscosity and a leaky boundary all at once. */
export const EVERYTHING_ON: Material = {
  name: 'everything_on',
  description: 'test material with every term of the step switched on',
  wave_speed: 0.5,
  damping: 0.002,
  boundary_reflectivity: 0.4,
  nonlinearity: 0.3,
  viscosity: 0.02,
  temperature_k: 300,
  noise_coupling: 0.001,
}

export function paramsFor(n: number, fields = 1, material = EVERYTHING_ON): StepParams {
  return stepParams({ n, fields, material, temperature_k: material.temperature_k, noise: 0 })
}

/** Deterministic smooth-ish random field (sum of a few bumps), amplitude about 1. */
export function randomField(n: number, fields: number, seed: number): Float32Array {
  const out = new Float32Array(n * n * fields)
  let s = seed >>> 0
  const rand = () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32
  for (let f = 0; f < fields; f++) {
    for (let k = 0; k < 6; k++) {
      const cx = rand() * n,
        cy = rand() * n,
        r = (0.04 + 0.08 * rand()) * n,
        a = rand() * 2 - 1
      for (let y = 0; y < n; y++)
        for (let x = 0; x < n; x++) {
          const d2 = (x - cx) ** 2 + (y - cy) ** 2
          out[f * n * n + y * n + x] += a * Math.exp(-d2 / (2 * r * r))
        }
    }
  }
  return out
}

export { candidate } from '../bench/harness.js'

/** Twelve texts written at one step, as REST, the Observatory's Write and .crystal write, and a word of each that no other shares. */
export const TWELVE = [
  'the river remembers the mountain',
  'copper bells at dawn',
  'a lantern in the fog',
  'granite steps of the old tower',
  'salt on the harbour wind',
  'a violin left in the rain',
  'orchards heavy with plums',
  'the clock stopped at noon',
  'moss over the broken wall',
  'a kettle singing softly',
  'snow on the cedar branches',
  'lighthouse beam across the bay',
]
export const WORDS = [
  'mountain',
  'bells',
  'lantern',
  'granite',
  'harbour',
  'violin',
  'plums',
  'clock',
  'moss',
  'kettle',
  'cedar',
  'lighthouse',
]

/**
 * A part of ten cells (their offsets from its cell (0, 0), in index order) whose half mean radius is not
 * whole: 139,010 / 20 = 6,950.5 of 2^-13 of a cell. Its cell at (1, -1), on the diagonal below the
 * centroid, lies at r = 6,950 (the floor): inside the inner disc, and not out as far as the sectors' cut,
 * though the only cell of its sector past the floor (found by a search over random parts). Were the cut
 * floored, or the inner bound not the floor plus one, its shape would differ.
 */
export const AT_THE_FLOOR: readonly (readonly [number, number])[] = [
  [0, -3],
  [1, -3],
  [0, -2],
  [0, -1],
  [1, -1],
  [0, 0],
  [0, 1],
  [1, 1],
  [0, 2],
  [1, 2],
]

/** A blob round a random centre of a field of side n, on or off its edge, some of its cells left out, in index order (as detection gives a part). */
export function randomPart(rand: () => number, n: number, largest = 8): number[] {
  const [px, py, r] = [rand() * n, rand() * n, 1 + rand() * Math.min(largest, n / 3)]
  const stretch = 0.4 + rand() * 1.6
  const part: number[] = []
  for (let y = 0; y < n; y++)
    for (let x = 0; x < n; x++) if (Math.hypot((x - px) * stretch, y - py) <= r && rand() < 0.9) part.push(y * n + x)
  return part
}
