// Structure detection (docs/detection.md): threshold a stability map, find connected components,
// measure each one, classify it into the six classes by documented rules, and give it a signature
// (translation-normalized, L2-normalized) with a blake3 hash of its quantized form.
import type { ClassToken } from '../contracts/registry.js'
import { blake3Hex } from '../util/hash.js'

/** Side of the square signature patch: SIGNATURE_SIDE^2 floats. */
export const SIGNATURE_SIDE = 16
/** Cells at or above this fraction of the map's peak stability belong to structures. */
export const THRESHOLD_OF_PEAK = 0.45
/** Components smaller than this many cells are noise, not structures. */
export const MIN_AREA_CELLS = 4
const SECTORS = 16

export interface StructureFeatures {
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

export interface Structure {
  class: ClassToken
  confidence: number
  features: StructureFeatures
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

/** 4-connected components of the cells where mask is set, largest first. */
export function components(mask: Uint8Array, n: number): number[][] {
  const seen = new Uint8Array(mask.length)
  const out: number[][] = []
  const stack: number[] = []
  for (let start = 0; start < mask.length; start++) {
    if (!mask[start] || seen[start]) continue
    const cells: number[] = []
    seen[start] = 1
    stack.push(start)
    while (stack.length) {
      const i = stack.pop()!
      cells.push(i)
      const x = i % n
      const y = (i - x) / n
      for (const j of [x > 0 ? i - 1 : -1, x < n - 1 ? i + 1 : -1, y > 0 ? i - n : -1, y < n - 1 ? i + n : -1]) {
        if (j >= 0 && mask[j] && !seen[j]) {
          seen[j] = 1
          stack.push(j)
        }
      }
    }
    out.push(cells)
  }
  return out.sort((a, b) => b.length - a.length)
}

export function measure(map: Float32Array, n: number, cells: number[]): StructureFeatures {
  const inside = new Uint8Array(map.length)
  let cx = 0
  let cy = 0
  for (const i of cells) {
    inside[i] = 1
    cx += i % n
    cy += Math.floor(i / n)
  }
  cx /= cells.length
  cy /= cells.length
  let sxx = 0
  let syy = 0
  let sxy = 0
  let meanR = 0
  const reached = new Set<number>()
  for (const i of cells) {
    const dx = (i % n) - cx
    const dy = Math.floor(i / n) - cy
    sxx += dx * dx
    syy += dy * dy
    sxy += dx * dy
    meanR += Math.hypot(dx, dy)
  }
  meanR /= cells.length
  for (const i of cells) {
    const dx = (i % n) - cx
    const dy = Math.floor(i / n) - cy
    if (Math.hypot(dx, dy) >= 0.5 * meanR) reached.add(Math.floor(((Math.atan2(dy, dx) + Math.PI) / (2 * Math.PI)) * SECTORS) % SECTORS)
  }
  // principal second moments: eigenvalues of [[sxx, sxy], [sxy, syy]]
  const tr = (sxx + syy) / cells.length
  const det = (sxx * syy - sxy * sxy) / cells.length ** 2
  const disc = Math.sqrt(Math.max(0, (tr * tr) / 4 - det))
  const l1 = tr / 2 + disc
  const l2 = Math.max(tr / 2 - disc, 1e-9)
  // the inner disc: cells within half the mean radius of the centroid
  const rIn = 0.5 * meanR
  let innerCells = 0
  let innerEmpty = 0
  for (let y = Math.max(0, Math.floor(cy - rIn)); y <= Math.min(n - 1, Math.ceil(cy + rIn)); y++) {
    for (let x = Math.max(0, Math.floor(cx - rIn)); x <= Math.min(n - 1, Math.ceil(cx + rIn)); x++) {
      if (Math.hypot(x - cx, y - cy) > rIn) continue
      innerCells++
      if (!inside[y * n + x]) innerEmpty++
    }
  }
  let massIn = 0
  let massOut = 0
  for (let i = 0; i < map.length; i++) (inside[i] ? (massIn += map[i]) : (massOut += map[i]))
  const meanIn = massIn / cells.length
  const meanOut = massOut / Math.max(1, map.length - cells.length)
  return {
    area: cells.length / (n * n),
    elongation: Math.sqrt(l1 / l2),
    annularity: innerCells ? innerEmpty / innerCells : 0,
    angular_gaps: 1 - reached.size / SECTORS,
    stability_ratio: meanOut > 0 ? meanIn / meanOut : meanIn > 0 ? 1e6 : 1,
    centroid_x: (cx + 0.5) / n,
    centroid_y: (cy + 0.5) / n,
  }
}

const clamp01 = (v: number) => Math.min(1, Math.max(0, v))

/**
 * The six classes, first matching rule wins (docs/detection.md). Confidence is 0.5 plus half the
 * smallest normalized margin by which the features clear the rule's boundaries.
 */
export function classify(f: StructureFeatures): { class: ClassToken; confidence: number } {
  const conf = (...margins: number[]) => 0.5 + 0.5 * clamp01(Math.min(...margins))
  if (f.area < 0.01) return { class: 'memory_seed', confidence: conf((0.01 - f.area) / 0.01) }
  if (f.area >= 0.2) return { class: 'attractor_field', confidence: conf((f.area - 0.2) / 0.2) }
  if (f.annularity >= 0.5) {
    // a hole in the middle: a round, closed ring echoes; a pinched or open one is a knot of phase
    if (f.angular_gaps <= 0.25 && f.elongation < 1.6) {
      return { class: 'echo_ring', confidence: conf((f.annularity - 0.5) / 0.5, (0.25 - f.angular_gaps) / 0.25, (1.6 - f.elongation) / 0.6) }
    }
    return { class: 'phase_knot', confidence: conf((f.annularity - 0.5) / 0.5, Math.max((f.angular_gaps - 0.25) / 0.75, (f.elongation - 1.6) / 1.4)) }
  }
  if (f.elongation >= 2.5) return { class: 'harmonic_bridge', confidence: conf((f.elongation - 2.5) / 2.5) }
  return { class: 'standing_echo', confidence: conf((2.5 - f.elongation) / 1.5, (0.5 - f.annularity) / 0.5, (f.area - 0.01) / 0.19, (0.2 - f.area) / 0.19) }
}

/**
 * The component's stability, centred on its centroid in a square window that holds it, resampled
 * bilinearly to SIGNATURE_SIDE^2 and scaled to unit length: the same shape anywhere on the field,
 * at any resolution, gives the same signature.
 */
export function signature(map: Float32Array, n: number, cells: number[], f: StructureFeatures): number[] {
  const inside = new Uint8Array(map.length)
  for (const i of cells) inside[i] = 1
  const cx = f.centroid_x * n - 0.5
  const cy = f.centroid_y * n - 0.5
  let half = 1
  for (const i of cells) half = Math.max(half, Math.abs((i % n) - cx) + 1, Math.abs(Math.floor(i / n) - cy) + 1)
  const at = (x: number, y: number) => {
    if (x < 0 || y < 0 || x >= n || y >= n) return 0
    const i = y * n + x
    return inside[i] ? map[i] : 0
  }
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
  return out.map((v) => v / norm)
}

/** blake3 of the signature quantized to int16 (little-endian), so float noise below 1/32767 does not change it. */
export function signatureHash(sig: readonly number[]): Promise<string> {
  const q = new Int16Array(sig.length)
  sig.forEach((v, i) => (q[i] = Math.round(Math.max(-1, Math.min(1, v)) * 32767)))
  return blake3Hex(new Uint8Array(q.buffer))
}

/** Every structure in a stability map (n x n), the one holding most stability mass first. */
export async function detect(map: Float32Array, n: number): Promise<Structure[]> {
  let peak = 0
  for (const v of map) peak = Math.max(peak, v)
  if (!(peak > 0)) return []
  const mask = new Uint8Array(map.length)
  for (let i = 0; i < map.length; i++) mask[i] = map[i] >= THRESHOLD_OF_PEAK * peak ? 1 : 0
  const found: Structure[] = []
  for (const cells of components(mask, n)) {
    if (cells.length < MIN_AREA_CELLS) continue
    const features = measure(map, n, cells)
    const sig = signature(map, n, cells, features)
    found.push({ ...classify(features), features, mass: massOf(map, cells), cells, signature: sig, hash: await signatureHash(sig) })
  }
  return found.sort((a, b) => b.mass - a.mass)
}
