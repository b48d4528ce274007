// The adjoint of the field step's linear part, for recall (docs/recall.md). Forward, the state
// (u, u_prev) -> (A u + C u_prev, u) with A = (2 - g - sponge) + (c^2 + v) L and
// C = (g + sponge - 1) - v L; both are symmetric (L with the zero border is), so the adjoint is
// (a, b) -> (A a + b, C a). Saturation and noise are not linear and are left out. CPU only: it runs
// on one field read back from whichever backend holds it.
import { sponge } from '../cpu/field_step.js'
import type { StepParams } from '../field/params.js'

export class AdjointField {
  a: Float32Array
  b: Float32Array
  private readonly nextA: Float32Array
  private readonly spongeAt: Float32Array

  /** Starts from the live field u: the adjoint state (u, 0) reads out u's correlation with anything. */
  constructor(
    readonly p: StepParams,
    u: Float32Array,
  ) {
    const n = p.n
    this.a = Float32Array.from(u)
    this.b = new Float32Array(n * n)
    this.nextA = new Float32Array(n * n)
    this.spongeAt = new Float32Array(n * n)
    for (let y = 0; y < n; y++) for (let x = 0; x < n; x++) this.spongeAt[y * n + x] = sponge(p, x, y)
  }

  /** One step back. */
  step(): void {
    const { n, c2, damping: g, viscosity: v } = this.p
    const { a, b, nextA, spongeAt } = this
    for (let y = 0; y < n; y++) {
      for (let x = 0; x < n; x++) {
        const i = y * n + x
        const lap = (x > 0 ? a[i - 1] : 0) + (x < n - 1 ? a[i + 1] : 0) + (y > 0 ? a[i - n] : 0) + (y < n - 1 ? a[i + n] : 0) - 4 * a[i]
        const loss = g + spongeAt[i]
        nextA[i] = (2 - loss) * a[i] + (c2 + v) * lap + b[i]
        b[i] = (loss - 1) * a[i] - v * lap
      }
    }
    a.set(nextA)
  }

  /** The adjoint of multiplying u and u_prev by a mask is the same multiplication. */
  scale(mask: Float32Array): void {
    for (let i = 0; i < mask.length; i++) {
      this.a[i] *= mask[i]
      this.b[i] *= mask[i]
    }
  }

  /** What a pattern written (at rest) at this point of the history is correlated with: a + b. */
  readout(): Float32Array {
    return this.a.map((v, i) => v + this.b[i])
  }
}
