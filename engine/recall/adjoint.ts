// The adjoint of the field step's linear part, for recall and probe (docs/recall.md). Forward, the
// state (u, u_prev) -> (A u + C u_prev, u) with A = (2 - g - sponge) + (c^2 + v) L and
// C = (g + sponge - 1) - v L; both are symmetric (L with the zero border is), so the adjoint is
// (a, b) -> (A a + b, C a). Saturation enters as its secant along the field's own path (step(k));
// noise adds and is left out. The constants may change on the way back (setParams), as the
// material or temperature did on the way forward.
import { sponge } from '../cpu/field_step.js'
import type { StepParams } from '../field/params.js'

/** Q = -L, the 5-point Laplacian with the zero border, negated (positive semi-definite). */
export function negLaplacian(w: Float32Array, n: number): Float32Array {
  const out = new Float32Array(n * n)
  for (let y = 0; y < n; y++) {
    for (let x = 0; x < n; x++) {
      const i = y * n + x
      out[i] = 4 * w[i] - (x > 0 ? w[i - 1] : 0) - (x < n - 1 ? w[i + 1] : 0) - (y > 0 ? w[i - n] : 0) - (y < n - 1 ? w[i + n] : 0)
    }
  }
  return out
}

/** Energy of a pattern written at rest (u = u_prev = w): c^2 <w, Q w>, the engine's staggered energy. */
export function restEnergy(w: Float32Array, n: number, c2: number): number {
  const q = negLaplacian(w, n)
  let s = 0
  for (let i = 0; i < w.length; i++) s += w[i] * q[i]
  return c2 * s
}

export class AdjointField {
  private readonly nextA: Float32Array
  private readonly spongeAt: Float32Array

  /** Starts from the covector (a, b) on (u, u_prev). */
  constructor(
    private p: StepParams,
    public a: Float32Array,
    public b: Float32Array,
  ) {
    this.nextA = new Float32Array(p.n * p.n)
    this.spongeAt = new Float32Array(p.n * p.n)
    this.setParams(p)
  }

  /** The constants of the steps run back from here on (the same n). */
  setParams(p: StepParams): void {
    const n = p.n
    this.p = p
    for (let y = 0; y < n; y++) for (let x = 0; x < n; x++) this.spongeAt[y * n + x] = sponge(p, x, y)
  }

  /** Reads out u's plain correlation with anything: the covector (u, 0). */
  static ofDisplacement(p: StepParams, u: Float32Array): AdjointField {
    return new AdjointField(p, Float32Array.from(u), new Float32Array(u.length))
  }

  /**
   * Reads out the energy inner product with the state (u, u_prev): the symmetric form of the
   * staggered energy, B(X, Y) = <d_x, d_y> + c^2/2 (<u_x, Q p_y> + <p_x, Q u_y>) with d = u - u_prev,
   * so B(X, X) is the engine's energy and the undamped linear step preserves B exactly.
   */
  static ofEnergy(p: StepParams, u: Float32Array, prev: Float32Array): AdjointField {
    const half = p.c2 / 2
    const qu = negLaplacian(u, p.n)
    const qp = negLaplacian(prev, p.n)
    const a = new Float32Array(u.length)
    const b = new Float32Array(u.length)
    for (let i = 0; i < u.length; i++) {
      const d = u[i] - prev[i]
      a[i] = d + half * qp[i]
      b[i] = -d + half * qu[i]
    }
    return new AdjointField(p, a, b)
  }

  /**
   * One step back. `k`, where the material saturates: the secant b u^2 / (1 + u^2) on the field's
   * path at that step (path.ts), so the step is u_next = ... - k u, linear and diagonal in u.
   */
  step(k?: Float32Array): void {
    const { n, c2, damping: g, viscosity: v } = this.p
    const { a, b, nextA, spongeAt } = this
    for (let y = 0; y < n; y++) {
      for (let x = 0; x < n; x++) {
        const i = y * n + x
        const lap = (x > 0 ? a[i - 1] : 0) + (x < n - 1 ? a[i + 1] : 0) + (y > 0 ? a[i - n] : 0) + (y < n - 1 ? a[i + n] : 0) - 4 * a[i]
        const loss = g + spongeAt[i]
        nextA[i] = (2 - loss - (k ? k[i] : 0)) * a[i] + (c2 + v) * lap + b[i]
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
