// Phases read off a field whose phases are known, and clusters on the circle.
import { describe, expect, test } from 'vitest'
import { fieldMotion } from '../field/motion.js'
import { GRID_SIDE, gridCells, motionPhases, phaseClusters } from './field_phases.js'

/** The phases of a field given whole, on the host (the CPU backend's motion). */
const fieldPhases = (u: Float32Array, prev: Float32Array, n: number) => motionPhases(fieldMotion(u, prev, gridCells(n)))

describe('field phases', () => {
  test('recovers the phase of every grid point of a field oscillating at a known phase and frequency', () => {
    const n = 64
    const w = 0.05 // radians per step
    const phaseAt = (x: number, y: number) => (2 * Math.PI * (x + 0.5)) / n + (Math.PI * (y + 0.5)) / n
    const u = new Float32Array(n * n)
    const prev = new Float32Array(n * n)
    for (let y = 0; y < n; y++) {
      for (let x = 0; x < n; x++) {
        u[y * n + x] = Math.cos(phaseAt(x, y))
        prev[y * n + x] = Math.cos(phaseAt(x, y) - w) // one step earlier
      }
    }
    const f = fieldPhases(u, prev, n)
    expect(f.frequency).toBeCloseTo(w, 2)
    expect(f.phases).toHaveLength(GRID_SIDE * GRID_SIDE)
    for (let j = 0; j < GRID_SIDE; j++) {
      for (let i = 0; i < GRID_SIDE; i++) {
        const x = Math.floor(((i + 0.5) * n) / GRID_SIDE)
        const y = Math.floor(((j + 0.5) * n) / GRID_SIDE)
        const d = Math.atan2(Math.sin(f.phases[j * GRID_SIDE + i] - phaseAt(x, y)), Math.cos(f.phases[j * GRID_SIDE + i] - phaseAt(x, y)))
        expect(Math.abs(d)).toBeLessThan(0.05)
      }
    }
    // phases spread over the whole circle: little order
    expect(f.order.r).toBeLessThan(0.3)
  })

  test('a field at rest has no motion to read: the frequency is tiny and the phases are 0 or pi', () => {
    const f = fieldPhases(new Float32Array(256).fill(0.5), new Float32Array(256).fill(0.5), 16)
    expect(f.frequency).toBeLessThan(1e-3)
    expect(f.order.r).toBeCloseTo(1, 9)
  })
})

describe('phase clusters', () => {
  test('two groups are two clusters; a group across the 2 pi wrap stays one', () => {
    const a = [0.5, 0.55, 0.6, 0.52]
    const b = [3.0, 3.05, 2.98]
    const lone = [4.6]
    const clusters = phaseClusters([...a, ...b, ...lone])
    expect(clusters.map((c) => c.cluster.size)).toEqual([4, 3])
    expect(clusters[0].members.sort()).toEqual([0, 1, 2, 3])
    expect(clusters[0].cluster.r).toBeGreaterThan(0.99)
    const wrapped = phaseClusters([6.2, 6.25, 0.02, 0.05, 2 * Math.PI + 0.1])
    expect(wrapped.map((c) => c.cluster.size)).toEqual([5])
    expect(phaseClusters([])).toEqual([])
  })
})
