// A field-wide structure's basin (docs/detection.md, "The perturbation experiment"): how far the field
// went back to its own pattern after a kick, from the stability sums before the kick, those some steps
// after it and the kick's pattern. Measured where the fields live: on the GPU by shaders/basin.wgsl,
// one workgroup a kicked field, whose float32 sums this twin makes in the same order (256 lanes, each
// summing every 256th cell, then the lanes halved in a tree; the means first, then the centred
// products), so both backends answer alike (equal bits on SwiftShader); basinFrom ends both in
// float64. Test: engine/gpu/basin.test.ts.

/** Lanes of the basin's workgroup: the kernel's workgroup size. */
export const BASIN_LANES = 256
/** The centred sums a basin is made from: before x |kick|, before^2, |kick|^2, before x after, after^2. */
export const BASIN_SUMS = 5

const f32 = Math.fround

/** `count` sums of every lane, at 0. */
export function emptyLanes(count: number): Float32Array[] {
  return Array.from({ length: count }, () => new Float32Array(BASIN_LANES))
}

/** Each lane's sums halved in a tree into lane 0, as the kernels' workgroups do (shaders/lanes.wgsl). */
export function halveLanes(lanes: Float32Array[]): number[] {
  for (let stride = BASIN_LANES / 2; stride > 0; stride >>= 1) for (const l of lanes) for (let i = 0; i < stride; i++) l[i] += l[i + stride]
  return lanes.map((l) => l[0])
}

/**
 * The five centred sums (BASIN_SUMS) of one field: `before` and `after` its stability sums (or means:
 * the correlations do not see the scale), `kick` the pattern added. Float32 throughout, in
 * shaders/basin.wgsl's order: cell c goes to lane c mod 256, each lane's cells in order (a float32
 * array rounds every sum stored in it, as the kernel's float32 adds do).
 */
export function basinSums(before: ArrayLike<number>, kick: ArrayLike<number>, after: ArrayLike<number>): Float32Array {
  const cells = before.length
  const [sb, sk, sa] = emptyLanes(3)
  for (let c = 0; c < cells; c++) {
    const i = c % BASIN_LANES
    sb[i] += before[c]
    sk[i] += Math.abs(kick[c])
    sa[i] += after[c]
  }
  const inverse = f32(1 / cells)
  const [mb, mk, ma] = halveLanes([sb, sk, sa]).map((t) => f32(t * inverse))
  const [bk, bb, kk, ba, aa] = emptyLanes(BASIN_SUMS)
  for (let c = 0; c < cells; c++) {
    const i = c % BASIN_LANES
    const x = f32(before[c] - mb)
    const k = f32(Math.abs(kick[c]) - mk)
    const y = f32(after[c] - ma)
    bk[i] += f32(x * k)
    bb[i] += f32(x * x)
    kk[i] += f32(k * k)
    ba[i] += f32(x * y)
    aa[i] += f32(y * y)
  }
  return Float32Array.from(halveLanes([bk, bb, kk, ba, aa]))
}

/**
 * The basin from its five sums (at `at` of `sums`): the share of the way from the kick's own likeness
 * to the pattern (correlation of |kick| with before) back to the pattern itself (correlation of after
 * with before) that the field went; 0 where the kick was already the pattern.
 */
export function basinFrom(sums: ArrayLike<number>, at = 0): number {
  const [bk, bb, kk, ba, aa] = Array.from({ length: BASIN_SUMS }, (_, q) => sums[at + q])
  const base = Math.max(0, bb && kk ? bk / Math.sqrt(bb * kk) : 0)
  const back = bb && aa ? ba / Math.sqrt(bb * aa) : 0
  return base >= 1 ? 0 : Math.min(1, Math.max(0, (back - base) / (1 - base)))
}

/** A field-wide structure's basin: basinFrom(basinSums(before, kick, after)). */
export function basinOf(before: ArrayLike<number>, kick: ArrayLike<number>, after: ArrayLike<number>): number {
  return basinFrom(basinSums(before, kick, after))
}
