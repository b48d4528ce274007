// A 3 x 3 box blur of an n x n pattern, clamped at the edges (the mean over the neighbours that
// exist). Used to smooth dream masks, to take energy envelopes, and as the memory benchmark's
// diffusion baseline.

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
            sum += cur[yy * n + xx]
            count++
          }
        }
        next[y * n + x] = sum / count
      }
    }
    cur = next
  }
  return passes > 0 ? cur : Float32Array.from(pattern)
}
