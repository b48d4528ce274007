// Kuramoto phase oscillators (docs/consciousness.md). Source: Y. Kuramoto, "Chemical Oscillations,
// Waves, and Turbulence" (1984); S. H. Strogatz, "From Kuramoto to Crawford", Physica D 143 (2000).
//
//   dtheta_i/dt = omega_i + (K / N) sum_j w_ij sin(theta_j - theta_i)
//
// integrated with classical fourth-order Runge-Kutta. With all-to-all coupling (w_ij = 1) the sum
// is K r sin(psi - theta_i), where r e^{i psi} = (1/N) sum_j e^{i theta_j} is the order parameter:
// O(N) per step instead of O(N^2). Phases are kept unwrapped, so effective frequencies can be read
// off as (theta(t + T) - theta(t)) / T.

export interface Oscillator {
  omega: number
  theta: number
}

export interface OrderParameter {
  /** Coherence, 0 (incoherent) to 1 (all in phase). */
  r: number
  /** Mean phase, in (-pi, pi]. */
  psi: number
}

export interface PhaseCluster {
  size: number
  /** Common effective frequency (rad per unit time). */
  frequency: number
  /** Coherence within the cluster. */
  r: number
}

export interface SyncReport {
  order: OrderParameter
  /** r at or above SYNC_THRESHOLD. */
  synchronized: boolean
  /** Groups of oscillators locked to one effective frequency, largest first. */
  clusters: PhaseCluster[]
  num_clusters: number
}

/** r at or above this counts as synchronized. */
export const SYNC_THRESHOLD = 0.8

export function orderParameter(theta: ArrayLike<number>, indices?: ArrayLike<number>): OrderParameter {
  let c = 0
  let s = 0
  const count = indices ? indices.length : theta.length
  for (let k = 0; k < count; k++) {
    const t = theta[indices ? indices[k] : k]
    c += Math.cos(t)
    s += Math.sin(t)
  }
  return { r: count ? Math.hypot(c, s) / count : 0, psi: Math.atan2(s, c) }
}

export interface KuramotoSnapshot {
  coupling: number
  omega: number[]
  theta: number[]
  /** Row-major N x N weights, or null for all-to-all. */
  weights: number[] | null
  time: number
}

export class KuramotoModel {
  readonly n: number
  readonly omega: Float64Array
  theta: Float64Array
  time = 0
  private readonly k1: Float64Array
  private readonly k2: Float64Array
  private readonly k3: Float64Array
  private readonly k4: Float64Array
  private readonly tmp: Float64Array

  /** `weights` (row-major N x N) selects the pairwise path; without it, the O(N) mean-field path. */
  constructor(
    omega: ArrayLike<number>,
    theta: ArrayLike<number>,
    public coupling: number,
    readonly weights?: Float64Array,
  ) {
    if (omega.length !== theta.length) throw new Error(`omega has ${omega.length} oscillators, theta ${theta.length}`)
    this.n = omega.length
    if (weights && weights.length !== this.n * this.n) throw new Error(`weights must be ${this.n} x ${this.n}`)
    this.omega = Float64Array.from(omega)
    this.theta = Float64Array.from(theta)
    ;[this.k1, this.k2, this.k3, this.k4, this.tmp] = [0, 1, 2, 3, 4].map(() => new Float64Array(this.n))
  }

  get oscillators(): Oscillator[] {
    return Array.from(this.omega, (omega, i) => ({ omega, theta: this.theta[i] }))
  }

  /** dtheta/dt at phases `th`, into `out`. */
  private derivative(th: Float64Array, out: Float64Array): void {
    const { n, omega, coupling: K } = this
    if (!this.weights) {
      const { r, psi } = orderParameter(th)
      for (let i = 0; i < n; i++) out[i] = omega[i] + K * r * Math.sin(psi - th[i])
      return
    }
    const w = this.weights
    // sin(theta_j - theta_i) = sin_j cos_i - cos_j sin_i: the trigonometry once per oscillator
    const sin = th.map(Math.sin)
    const cos = th.map(Math.cos)
    for (let i = 0; i < n; i++) {
      let a = 0
      let b = 0
      const row = i * n
      for (let j = 0; j < n; j++) {
        a += w[row + j] * sin[j]
        b += w[row + j] * cos[j]
      }
      out[i] = omega[i] + (K / n) * (a * cos[i] - b * sin[i])
    }
  }

  /** One RK4 step of length dt. */
  step(dt: number): void {
    const { n, theta, k1, k2, k3, k4, tmp } = this
    this.derivative(theta, k1)
    for (let i = 0; i < n; i++) tmp[i] = theta[i] + 0.5 * dt * k1[i]
    this.derivative(tmp, k2)
    for (let i = 0; i < n; i++) tmp[i] = theta[i] + 0.5 * dt * k2[i]
    this.derivative(tmp, k3)
    for (let i = 0; i < n; i++) tmp[i] = theta[i] + dt * k3[i]
    this.derivative(tmp, k4)
    for (let i = 0; i < n; i++) theta[i] += (dt / 6) * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i])
    this.time += dt
  }

  run(steps: number, dt: number): void {
    for (let s = 0; s < steps; s++) this.step(dt)
  }

  order(): OrderParameter {
    return orderParameter(this.theta)
  }

  /**
   * Runs `steps` more steps (calling `onStep` after each) and groups the oscillators by effective
   * frequency over that window: sorted frequencies split wherever two neighbours differ by more than
   * `tolerance`.
   */
  syncReport(steps: number, dt: number, tolerance = 0.01, onStep?: () => void): SyncReport {
    const start = Float64Array.from(this.theta)
    for (let s = 0; s < steps; s++) {
      this.step(dt)
      onStep?.()
    }
    const span = steps * dt
    const freq = Array.from(this.theta, (t, i) => (t - start[i]) / span)
    const order = Array.from(freq.keys()).sort((a, b) => freq[a] - freq[b])
    const groups: number[][] = []
    for (const i of order) {
      const last = groups.at(-1)
      if (last && freq[i] - freq[last.at(-1)!] <= tolerance) last.push(i)
      else groups.push([i])
    }
    const clusters = groups
      .filter((g) => g.length > 1)
      .map((g) => ({ size: g.length, frequency: g.reduce((s, i) => s + freq[i], 0) / g.length, r: orderParameter(this.theta, g).r }))
      .sort((a, b) => b.size - a.size)
    const o = this.order()
    return { order: o, synchronized: o.r >= SYNC_THRESHOLD, clusters, num_clusters: clusters.length }
  }

  toJSON(): KuramotoSnapshot {
    return {
      coupling: this.coupling,
      omega: Array.from(this.omega),
      theta: Array.from(this.theta),
      weights: this.weights ? Array.from(this.weights) : null,
      time: this.time,
    }
  }

  static fromJSON(s: KuramotoSnapshot): KuramotoModel {
    const m = new KuramotoModel(s.omega, s.theta, s.coupling, s.weights ? Float64Array.from(s.weights) : undefined)
    m.time = s.time
    return m
  }
}

/** Natural frequencies from a Lorentzian (Cauchy) of centre `centre` and half-width gamma. */
export function lorentzianFrequencies(n: number, gamma: number, centre = 0, rand?: () => number): Float64Array {
  // evenly spaced quantiles by default; with `rand`, independent draws (the inverse of the CDF)
  return Float64Array.from({ length: n }, (_, i) => centre + gamma * Math.tan(Math.PI * ((rand ? rand() : (i + 0.5) / n) - 0.5)))
}
