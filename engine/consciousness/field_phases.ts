// Phases read off the live field (docs/consciousness.md): at each point of a grid the field
// oscillates as u = A cos(phase); with v = u - u_prev ~ -A w sin(phase) per step, the phase is
// atan2(-v / w, u). The frequency w is the field's own, from the balance of its kinetic and
// displacement content: w^2 = sum v^2 / sum u^2.
import type { FieldMotion } from '../field/motion.js'
import { orderParameter, type OrderParameter, type PhaseCluster } from './kuramoto.js'

export const GRID_SIDE = 8

export interface FieldPhases {
  phases: Float64Array
  /** Radians per step. */
  frequency: number
  order: OrderParameter
}

/** The grid's points: the cells (row-major) at the centres of side x side equal blocks of an n x n field. */
export function gridCells(n: number, side = GRID_SIDE): number[] {
  return Array.from({ length: side * side }, (_, k) => {
    const [j, i] = [Math.floor(k / side), k % side]
    return Math.floor(((j + 0.5) * n) / side) * n + Math.floor(((i + 0.5) * n) / side)
  })
}

/** The phases of a field's motion (engine/field/motion.ts) taken at its gridCells, in their order. */
export function motionPhases(m: FieldMotion): FieldPhases {
  const w = m.uu > 0 ? Math.sqrt(m.vv / m.uu) || 1e-6 : 1e-6
  const phases = Float64Array.from(m.u, (u, k) => Math.atan2(-(u - m.prev[k]) / w, u))
  return { phases, frequency: w, order: orderParameter(phases) }
}

/** Groups of points whose phases lie within `gap` of a neighbour on the circle (groups of one are left out). */
export function phaseClusters(phases: ArrayLike<number>, gap = Math.PI / 8): { members: number[]; cluster: PhaseCluster }[] {
  const n = phases.length
  const wrapped = Array.from({ length: n }, (_, i) => [((phases[i] % (2 * Math.PI)) + 2 * Math.PI) % (2 * Math.PI), i] as const).sort(
    (a, b) => a[0] - b[0],
  )
  if (!n) return []
  // start after the widest gap so that no cluster straddles the cut at 2 pi
  let widest = 0
  let at = 0
  for (let k = 0; k < n; k++) {
    const next = k + 1 < n ? wrapped[k + 1][0] : wrapped[0][0] + 2 * Math.PI
    if (next - wrapped[k][0] > widest) [widest, at] = [next - wrapped[k][0], (k + 1) % n]
  }
  const order = [...wrapped.slice(at), ...wrapped.slice(0, at)]
  const groups: number[][] = [[order[0][1]]]
  for (let k = 1; k < n; k++) {
    const d = (order[k][0] - order[k - 1][0] + 2 * Math.PI) % (2 * Math.PI)
    if (d <= gap) groups.at(-1)!.push(order[k][1])
    else groups.push([order[k][1]])
  }
  return groups
    .filter((g) => g.length > 1)
    .map((members) => ({ members, cluster: { size: members.length, frequency: 0, r: orderParameter(phases, members).r } }))
    .sort((a, b) => b.cluster.size - a.cluster.size)
}
