// Small vector arithmetic shared by the registry (novelty), discovery, detection and the language.

/**
 * Cosine similarity of two equal-length vectors; 0 when their lengths differ or either has no
 * direction (all zeros, or a NaN or infinite entry). Always a finite number in [-1, 1] (up to
 * rounding), so a ranking by it never meets NaN. Where a product of norms leaves float64's range
 * (entries beyond about 1e77, or all below about 1e-73), both vectors are scaled by their largest
 * entry first: cosine does not depend on length, and the usual case keeps its exact arithmetic.
 */
export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length || a.length === 0) return 0
  let ab = 0
  let aa = 0
  let bb = 0
  for (let i = 0; i < a.length; i++) {
    ab += a[i] * b[i]
    aa += a[i] * a[i]
    bb += b[i] * b[i]
  }
  if (inRange(ab, aa * bb)) return ab / Math.sqrt(aa * bb)
  const sa = maxAbs(a)
  const sb = maxAbs(b)
  // NaN compares false: a NaN or infinite entry, like a zero vector, has no direction
  if (!(sa > 0 && sa < Infinity && sb > 0 && sb < Infinity)) return 0
  ab = aa = bb = 0
  for (let i = 0; i < a.length; i++) {
    const x = a[i] / sa
    const y = b[i] / sb
    ab += x * y
    aa += x * x
    bb += y * y
  }
  // now 1 <= aa * bb <= length^2: always in range
  return inRange(ab, aa * bb) ? ab / Math.sqrt(aa * bb) : 0
}

/** Whether ab / sqrt(d) is an honest quotient: finite, and d well above the subnormals (1e-290), where digits are lost. */
function inRange(ab: number, d: number): boolean {
  return Number.isFinite(ab) && d < Infinity && d > 1e-290
}

function maxAbs(v: ArrayLike<number>): number {
  let m = 0
  for (let i = 0; i < v.length; i++) {
    if (!Number.isFinite(v[i])) return Number.NaN
    m = Math.max(m, Math.abs(v[i]))
  }
  return m
}

/**
 * Why `v` cannot serve as a direction to compare by cosine, or undefined when it can: empty, a NaN
 * or infinite entry, all zeros (or so small its norm is 0), or a norm beyond float64 (entries past
 * about 1e154). Signatures are unit length by construction (engine/detect), so any of these is
 * damage or a forgery, and the registry refuses it.
 */
export function directionProblem(v: ArrayLike<number>): string | undefined {
  if (v.length === 0) return 'is empty'
  let squares = 0
  for (let i = 0; i < v.length; i++) {
    if (!Number.isFinite(v[i])) return `has a non-finite value (${v[i]}) at [${i}]`
    squares += v[i] * v[i]
  }
  if (squares === Infinity) return 'has a norm beyond float64 (entries past about 1e154); signatures are unit length'
  if (squares === 0) return 'is all zeros, so it has no direction to compare by'
  return undefined
}

/** Root mean square (float64 sums, in order). */
export function rms(v: ArrayLike<number>): number {
  let sum = 0
  for (let i = 0; i < v.length; i++) sum += v[i] * v[i]
  return Math.sqrt(sum / v.length)
}
