// The CPU twin of shaders/field_step.wgsl: the oracle every other kernel is tested against.
// Same arithmetic in the same order, rounded to float32 after every operation (Math.fround), on
// unpadded N x N fields with zero outside (a Dirichlet mirror; the sponge does the absorbing).
import { lowbias32, xi } from '../field/noise.js'
import { drawTable, RESTING, type StepParams } from '../field/params.js'

const f = Math.fround

/** Ledger columns, one row of four per field: energy taken by each term during the steps so far. */
export const LEDGER = { bulk: 0, boundary: 1, saturation: 2, noise: 3 } as const

function at(a: Float32Array, base: number, n: number, x: number, y: number): number {
  return x < 0 || y < 0 || x >= n || y >= n ? 0 : a[base + y * n + x]
}

/** Sponge strength at a cell: sponge_max * t^2 with t the depth into the sponge layer. */
export function sponge(p: StepParams, x: number, y: number): number {
  const d = Math.min(x, y, p.n - 1 - x, p.n - 1 - y)
  const t = f(Math.max(f(p.sponge_width - d), 0) * p.sponge_inv_width)
  return f(p.sponge_max * f(t * t))
}

/**
 * One leapfrog step for every field: next = 2u - prev + c^2 L(u) - g (u - prev) - b u^3/(1+u^2)
 * + v (L(u) - L(prev)) - sponge (u - prev) + s xi. Each term's work on (next - prev) is added to
 * `ledger` (float64), which is what makes the energy books balance exactly (docs/physics.md).
 */
export function stepReference(
  prev: Float32Array,
  cur: Float32Array,
  next: Float32Array,
  p: StepParams,
  ledger: Float64Array,
  /**
   * The step's table (params.ts stepTable): the field whose random numbers each field draws, RESTING
   * set where it rests, then the steps each rested (its noise keyed by its own steps: p.step less those,
   * with p.seed_key); its own, or a rerun's first run's, none rested, where not given.
   */
  draws: ArrayLike<number> = drawTable(p.fields, p.rerun_from),
): void {
  const n = p.n
  for (let field = 0; field < p.fields; field++) {
    const base = field * n * n
    // a field at rest (params.ts RESTING) is held at 0, with no ledger term
    if (draws[field] >= RESTING) {
      next.fill(0, base, base + n * n)
      continue
    }
    // a rerun's field has a louder noise (params.ts Rerun); each draws the numbers of the field its table names
    const noiseAmp = field >= p.rerun_from ? p.rerun_noise : p.noise
    const drawn = (field - draws[field]) * n * n
    const rested = draws[p.fields + field] ?? 0
    const key = rested ? lowbias32(((p.step - rested) ^ p.seed_key) >>> 0) : p.noise_key
    for (let y = 0; y < n; y++) {
      for (let x = 0; x < n; x++) {
        const i = base + y * n + x
        const uc = cur[i]
        const pc = prev[i]
        const lapU = f(
          f(f(at(cur, base, n, x - 1, y) + at(cur, base, n, x + 1, y)) + f(at(cur, base, n, x, y - 1) + at(cur, base, n, x, y + 1))) -
            f(4 * uc),
        )
        const lapP = f(
          f(f(at(prev, base, n, x - 1, y) + at(prev, base, n, x + 1, y)) + f(at(prev, base, n, x, y - 1) + at(prev, base, n, x, y + 1))) -
            f(4 * pc),
        )
        const vel = f(uc - pc)
        const fBulk = f(f(p.viscosity * f(lapU - lapP)) - f(p.damping * vel))
        const fSponge = f(-f(sponge(p, x, y) * vel))
        const u2 = f(uc * uc)
        const sat = f(f(p.nonlinearity * f(u2 * uc)) / f(1 + u2))
        const noise = f(noiseAmp * xi(i - drawn, key))
        const out = f(f(f(f(f(f(uc + vel) + f(p.c2 * lapU)) + fBulk) + fSponge) - sat) + noise)
        next[i] = out
        const dw = f(out - pc)
        const row = field * 4
        ledger[row + LEDGER.bulk] -= fBulk * dw
        ledger[row + LEDGER.boundary] -= fSponge * dw
        ledger[row + LEDGER.saturation] += sat * dw
        ledger[row + LEDGER.noise] += noise * dw
      }
    }
  }
}

/**
 * Staggered leapfrog energy of each field: sum (u - prev)^2 + c^2 grad(u).grad(prev), summed over
 * every edge including those to the zero border. The undamped linear step conserves it exactly.
 */
export function energyReference(prev: Float32Array, cur: Float32Array, p: StepParams): Float64Array {
  const n = p.n
  const out = new Float64Array(p.fields)
  for (let field = 0; field < p.fields; field++) {
    const base = field * n * n
    let e = 0
    for (let y = 0; y < n; y++) {
      for (let x = 0; x < n; x++) {
        const i = base + y * n + x
        const uc = cur[i]
        const pc = prev[i]
        let grad =
          (uc - at(cur, base, n, x + 1, y)) * (pc - at(prev, base, n, x + 1, y)) +
          (uc - at(cur, base, n, x, y + 1)) * (pc - at(prev, base, n, x, y + 1))
        if (x === 0) grad += uc * pc
        if (y === 0) grad += uc * pc
        e += (uc - pc) ** 2 + p.c2 * grad
      }
    }
    out[field] = e
  }
  return out
}

/**
 * Potential of the soft saturation held by each field: sum V(u) + V(u_prev) with
 * V(u) = b/2 (u^2 - ln(1 + u^2)), whose derivative is the step's b u^3 / (1 + u^2). The ledger's
 * saturation account telescopes to the change of this sum (docs/physics.md), so what a write or a
 * dream edit puts into it directly is counted here.
 */
export function saturationPotential(prev: Float32Array, cur: Float32Array, b: number, fields: number): Float64Array {
  const cells = cur.length / fields
  const out = new Float64Array(fields)
  if (!b) return out
  for (let i = 0; i < cur.length; i++) {
    const u2 = cur[i] * cur[i]
    const p2 = prev[i] * prev[i]
    out[Math.floor(i / cells)] += (b / 2) * (u2 - Math.log1p(u2) + p2 - Math.log1p(p2))
  }
  return out
}
