// Thermal noise from a counter-based hash: xi(seed, step, cell) is a pure function, so the CPU,
// the WASM kernel and the WGSL kernel draw the same numbers with no generator state to carry.
// lowbias32 (Chris Wellons, "Prospecting for Hash Functions") uses fixed shifts only, which SIMD needs.

export function lowbias32(x: number): number {
  x >>>= 0
  x ^= x >>> 16
  x = Math.imul(x, 0x7feb352d)
  x ^= x >>> 15
  x = Math.imul(x, 0x846ca68b)
  x ^= x >>> 16
  return x >>> 0
}

/** Per-step key; the kernels draw xi for a cell as lowbias32(cell ^ key). */
export function noiseKey(seed: number, step: number): number {
  return lowbias32((step >>> 0) ^ lowbias32(seed >>> 0))
}

/** Uniform in [-1, 1): the top 24 bits as an exact float32 (cell is the index across all fields). */
export function xi(cell: number, key: number): number {
  return (lowbias32((cell ^ key) >>> 0) >>> 8) * 2 ** -23 - 1
}
