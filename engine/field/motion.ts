// What the consciousness publisher reads of a field (docs/consciousness.md): its motion each period
// (engine/consciousness/field_phases.ts), two sums over the whole field and u and u_prev at a few
// cells, and its energy by patches around a dream. On the GPU they are taken where the field lives
// (shaders/motion.wgsl, engine/gpu/motion.ts), in float32; these are their CPU twins, in float64.
// Test: engine/gpu/motion.test.ts.

export interface FieldMotion {
  /** sum of u^2 over the field's cells */
  uu: number
  /** sum of (u - u_prev)^2 over the field's cells */
  vv: number
  /** u at the cells listed, in their order */
  u: Float32Array
  /** u_prev at the cells listed */
  prev: Float32Array
}

/** The motion of one field given whole (`u`, `prev`: its n*n cells), at the cells listed (row-major). */
export function fieldMotion(u: Float32Array, prev: Float32Array, cells: readonly number[]): FieldMotion {
  let uu = 0
  let vv = 0
  for (let i = 0; i < u.length; i++) {
    uu += u[i] * u[i]
    vv += (u[i] - prev[i]) ** 2
  }
  return { uu, vv, u: Float32Array.from(cells, (c) => u[c]), prev: Float32Array.from(cells, (c) => prev[c]) }
}

/** Sum of u^2 over each of side x side patches (row-major) of one field given whole (`u`: its n*n cells). */
export function patchEnergy(u: Float32Array, n: number, side: number): Float64Array {
  const e = new Float64Array(side * side)
  for (let y = 0; y < n; y++) {
    const py = Math.floor((y * side) / n)
    for (let x = 0; x < n; x++) e[py * side + Math.floor((x * side) / n)] += u[y * n + x] ** 2
  }
  return e
}
