// Box-averaging a square pattern onto a coarser grid: how the server's feed, a tab's published state
// and the Observatory show a large field at a small size.

/** Box average of an n x n pattern onto side x side. */
export function downsample(u: Float32Array, n: number, side: number): Float32Array {
  if (n === side) return Float32Array.from(u)
  const out = new Float32Array(side * side)
  const counts = new Float32Array(side * side)
  for (let y = 0; y < n; y++) {
    for (let x = 0; x < n; x++) {
      const k = Math.floor((y * side) / n) * side + Math.floor((x * side) / n)
      out[k] += u[y * n + x]
      counts[k]++
    }
  }
  return out.map((v, k) => v / (counts[k] || 1))
}
