// The path a saturating field took, recomputed for the recall sweep (docs/recall.md). The saturation
// b u^3 / (1 + u^2) equals k u with k = b u^2 / (1 + u^2) read off the field's own path, so with k
// frozen along that path the step is linear and the live field is exactly the sum of its memories.
import { stepReference } from '../cpu/field_step.js'
import type { PathPlan, SavedState } from '../field/backend.js'
import type { Engine } from '../field/engine_api.js'
import { noiseKey } from '../field/noise.js'
import { stepParams, type StepParams } from '../field/params.js'

/** Bytes of k kept for one sweep: 4 n^2 a step (about 4,000 steps at N = 64, 1,000 at N = 128). */
export const PATH_BYTES = 64 * 2 ** 20

export interface SaturationPath {
  /** The step of k[0]: k[j] multiplies u on the step from from + j to from + j + 1 (undefined where b = 0). */
  from: number
  k: (Float32Array | undefined)[]
}

/** A path to follow: its plan (a backend that follows it on the device needs only that) and the path on the host, recomputed once. */
export interface PathRequest {
  plan: PathPlan
  onHost(): Promise<SaturationPath>
}

/**
 * The plan of one field's path from the oldest state the history keeps (after `oldest`, within
 * PATH_BYTES of now), resetting to each later state kept (so each stretch runs only from an
 * injection or edit to the next) and switching constants as they changed. Undefined when the
 * history keeps no state there (a linear material keeps none).
 */
export function pathPlan(e: Engine, field: number, oldest: number): PathPlan | undefined {
  const n = e.size
  const start = Math.max(oldest, e.step_count - Math.floor(PATH_BYTES / (4 * n * n)))
  const first = e.history.findIndex((ev) => ev.kind === 'state' && ev.field === field && ev.step >= start)
  if (first < 0) return undefined
  // the constants in force after each event: the `before` of the next change, or those of now
  const now: StepParams = stepParams({ n, fields: 1, material: e.material, temperature_k: e.temperature_k, noise: e.noise })
  const after: StepParams[] = []
  let next = now
  for (let i = e.history.length - 1; i >= first; i--) {
    after[i] = next
    const ev = e.history[i]
    if (ev.kind === 'conditions') next = { ...ev.before, fields: 1 }
  }
  const plan: PathPlan = { from: e.history[first].step, seed: e.seed, ops: [] }
  let p = next
  for (let i = first; i < e.history.length; i++) {
    const ev = e.history[i]
    plan.ops.push({ kind: 'run', to: ev.step, params: p })
    if (ev.kind === 'state' && ev.field === field) plan.ops.push({ kind: 'reset', saved: ev.saved })
    p = after[i]
  }
  plan.ops.push({ kind: 'run', to: e.step_count, params: p })
  return plan
}

/** Follows a plan on the float32 CPU reference step. `host` brings a state kept on the device to the host. */
export async function followPath(
  plan: PathPlan,
  n: number,
  host: (s: SavedState) => Promise<{ u: Float32Array; prev: Float32Array }>,
): Promise<SaturationPath> {
  const path: SaturationPath = { from: plan.from, k: [] }
  let t = plan.from
  let prev = new Float32Array(n * n)
  let u = new Float32Array(n * n)
  let out = new Float32Array(n * n)
  const ledger = new Float64Array(4)
  for (const op of plan.ops) {
    if (op.kind === 'reset') {
      const saved = await host(op.saved)
      u.set(saved.u)
      prev.set(saved.prev)
      continue
    }
    const p = op.params
    for (; t < op.to; t++) {
      path.k.push(p.nonlinearity ? u.map((x) => (p.nonlinearity * x * x) / (1 + x * x)) : undefined)
      stepReference(prev, u, out, { ...p, noise_key: noiseKey(plan.seed, t) }, ledger)
      ;[prev, u, out] = [u, out, prev]
    }
  }
  return path
}
