// A smaller structure's regrowth after half of it was erased (docs/detection.md, "The perturbation
// experiment"): how well the stability map over its window (the disc erasePlan plans: both halves and
// a margin) correlates (Pearson) with the one before. A seed that re-forms in place gives 1; a half
// that spreads away or drifts gives little. Measured where the fields live: on the GPU by
// shaders/erase.wgsl `regrowth`, one workgroup an erased field, whose float32 sums this twin makes in the same
// order (as basin.ts: 256 lanes, cell c to lane c mod 256, then the lanes halved in a tree; the means
// first, then the centred products), so both backends answer alike (equal bits on SwiftShader);
// regrowthFrom ends both in float64. Test: engine/gpu/basin.test.ts.
import { BASIN_LANES, emptyLanes, halveLanes } from './basin.js'

/** The centred sums a regrowth is made from: before x after, before^2, after^2. */
export const REGROWTH_SUMS = 3

const f32 = Math.fround

/**
 * The three centred sums (REGROWTH_SUMS) of one field over `window` (its cells, in index order, at
 * least one): `before` and `after` its stability sums before the erasure and after it (or their
 * means: the correlation does not see the scale). Float32 throughout, in shaders/erase.wgsl `regrowth`'s order.
 */
export function regrowthSums(before: ArrayLike<number>, after: ArrayLike<number>, window: readonly number[]): Float32Array {
  const [sb, sa] = emptyLanes(2)
  for (const c of window) {
    sb[c % BASIN_LANES] += before[c]
    sa[c % BASIN_LANES] += after[c]
  }
  const inverse = f32(1 / window.length)
  const [mb, ma] = halveLanes([sb, sa]).map((t) => f32(t * inverse))
  const [ba, bb, aa] = emptyLanes(REGROWTH_SUMS)
  for (const c of window) {
    const x = f32(before[c] - mb)
    const y = f32(after[c] - ma)
    ba[c % BASIN_LANES] += f32(x * y)
    bb[c % BASIN_LANES] += f32(x * x)
    aa[c % BASIN_LANES] += f32(y * y)
  }
  return Float32Array.from(halveLanes([ba, bb, aa]))
}

/** The regrowth from its three sums (at `at` of `sums`): their correlation, clamped to [0, 1] (0 where either map is flat). */
export function regrowthFrom(sums: ArrayLike<number>, at = 0): number {
  const [ba, bb, aa] = [sums[at], sums[at + 1], sums[at + 2]]
  return Math.min(1, Math.max(0, bb && aa ? ba / Math.sqrt(bb * aa) : 0))
}
