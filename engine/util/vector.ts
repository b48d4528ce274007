// Small vector arithmetic shared by the registry (novelty), discovery, detection and the language.

/** Cosine similarity of two equal-length vectors; 0 when either is zero or their lengths differ. */
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
  return aa && bb ? ab / Math.sqrt(aa * bb) : 0
}

/** Root mean square (float64 sums, in order). */
export function rms(v: ArrayLike<number>): number {
  let sum = 0
  for (let i = 0; i < v.length; i++) sum += v[i] * v[i]
  return Math.sqrt(sum / v.length)
}
