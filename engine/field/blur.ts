// A 3 x 3 box blur of an n x n pattern, clamped at the edges (the mean over the neighbours that
// exist), in float32: the CPU twin of shaders/dream.wgsl's `blur`, which smooths dream masks.
const f = Math.fround

/** Float32 reciprocals of the neighbour counts (4, 6 or 9), multiplied rather than divided: WGSL's division is not exactly rounded. */
export const BLUR_INV = Float32Array.from({ length: 10 }, (_, k) => (k ? 1 / k : 0))

export function boxBlur(pattern: Float32Array, n: number, passes = 1): Float32Array {
  let cur = pattern
  for (let pass = 0; pass < passes; pass++) {
    const next = new Float32Array(cur.length)
    for (let y = 0; y < n; y++) {
      for (let x = 0; x < n; x++) {
        let sum = 0
        let count = 0
        for (let yy = Math.max(0, y - 1); yy <= Math.min(n - 1, y + 1); yy++) {
          for (let xx = Math.max(0, x - 1); xx <= Math.min(n - 1, x + 1); xx++) {
            sum = f(sum + cur[yy * n + xx])
            count++
          }
        }
        next[y * n + x] = f(sum * BLUR_INV[count])
      }
    }
    cur = next
  }
  return passes > 0 ? cur : Float32Array.from(pattern)
}
