// Reading a field as a superposition of known patterns: the least-squares weights w minimizing
// |field - sum_k w_k p_k|^2 (ridge-regularized normal equations, Cholesky). Where a matched filter
// (one correlation per pattern) sees every other pattern as noise, this separates overlapping
// patterns from one another: how M writes to one medium come apart (docs/recall.md).

/** Weights of `patterns` (each the field's length) that best rebuild `field`. */
export function superpositionWeights(patterns: readonly Float32Array[], field: Float32Array, ridge = 1e-6): Float64Array {
  const k = patterns.length
  const gram = new Float64Array(k * k)
  const rhs = new Float64Array(k)
  let trace = 0
  for (let i = 0; i < k; i++) {
    const a = patterns[i]
    let r = 0
    for (let t = 0; t < a.length; t++) r += a[t] * field[t]
    rhs[i] = r
    for (let j = 0; j <= i; j++) {
      const b = patterns[j]
      let g = 0
      for (let t = 0; t < a.length; t++) g += a[t] * b[t]
      gram[i * k + j] = gram[j * k + i] = g
    }
    trace += gram[i * k + i]
  }
  const lambda = (ridge * trace) / Math.max(1, k)
  for (let i = 0; i < k; i++) gram[i * k + i] += lambda
  // Cholesky: gram = L L^T, then two triangular solves
  const L = new Float64Array(k * k)
  for (let i = 0; i < k; i++) {
    for (let j = 0; j <= i; j++) {
      let sum = gram[i * k + j]
      for (let m = 0; m < j; m++) sum -= L[i * k + m] * L[j * k + m]
      L[i * k + j] = i === j ? Math.sqrt(Math.max(sum, 1e-300)) : sum / L[j * k + j]
    }
  }
  const y = new Float64Array(k)
  for (let i = 0; i < k; i++) {
    let sum = rhs[i]
    for (let m = 0; m < i; m++) sum -= L[i * k + m] * y[m]
    y[i] = sum / L[i * k + i]
  }
  const w = new Float64Array(k)
  for (let i = k - 1; i >= 0; i--) {
    let sum = y[i]
    for (let m = i + 1; m < k; m++) sum -= L[m * k + i] * w[m]
    w[i] = sum / L[i * k + i]
  }
  return w
}
