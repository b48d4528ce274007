// The perturbation's kick (docs/detection.md, "The perturbation experiment"): a pattern added to a
// field's u and u_prev, scaled to that field's root mean square of u, so that the kick is as strong as
// the field. The scale is taken where the fields live: on the GPU by shaders/kick.wgsl `scale`, one
// workgroup a field, whose float32 sums this twin does in the same order (256 lanes, each summing every
// 256th cell's square, then the lanes halved in a tree), so both backends kick alike (equal bits on
// SwiftShader). Test: engine/gpu/kick.test.ts.

/** Lanes of the scale's workgroup: the kernel's workgroup size. */
export const KICK_LANES = 256

/**
 * A field's rms of u (`u`, its cells) times `inverseRms` (1 / the pattern's rms, float32): the factor
 * its kick's pattern is multiplied by. Float32 throughout, in shaders/kick.wgsl's order.
 */
export function kickScale(u: ArrayLike<number>, inverseRms: number): number {
  const f = Math.fround
  const lanes = new Float32Array(KICK_LANES)
  for (let i = 0; i < KICK_LANES; i++) {
    let s = 0
    for (let c = i; c < u.length; c += KICK_LANES) s = f(s + f(u[c] * u[c]))
    lanes[i] = s
  }
  for (let stride = KICK_LANES / 2; stride > 0; stride >>= 1) for (let i = 0; i < stride; i++) lanes[i] = f(lanes[i] + lanes[i + stride])
  return f(f(Math.sqrt(f(lanes[0] * f(1 / u.length)))) * inverseRms)
}
