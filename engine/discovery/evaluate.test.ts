// The perturbation experiment of evaluate.ts: it reads the window after the perturbation, and its plan
// (erasePlan) against a scan of every cell, the way it was made before.
import { describe, expect, test } from 'vitest'
import type { EngineOptions } from '../field/engine.js'
import { MaterialCatalog } from '../field/materials.js'
import { createNodeEngine } from '../node.js'
import { rng } from '../util/rng.js'
import { erasePlan, evaluate } from './evaluate.js'
import { randomGenome } from './genome.js'

test('the perturbation is answered from the window after it: field-wide structures come back part of the way, compact ones regrow part of the way', async () => {
  const responses = async (material: string, size: number) => {
    const rand = rng(4)
    const genomes = Array.from({ length: 12 }, () => randomGenome(rand, { min_steps: 60, max_steps: 200 }))
    const open = (o: EngineOptions) => createNodeEngine({ ...o, backend: 'cpu' })
    const evaluations = await evaluate(genomes, { size, material: new MaterialCatalog().get(material), seed: 1, open })
    return evaluations.flatMap((e) => (e.structure?.response ? [e.structure.response] : []))
  }
  // Read from the window before the kick or erasure (as evolve did from 2026-11-25 to 11-27: the sums
  // collected before the later window was observed), each map is compared with itself: every basin and
  // every regrowth is 1.
  const basins = (await responses('europium_crystal', 24)).flatMap((r) => (r.basin === undefined ? [] : [r.basin]))
  expect(basins.length).toBeGreaterThanOrEqual(6)
  for (const b of basins) expect(b).toBeLessThan(0.99)
  expect(Math.min(...basins)).toBeGreaterThan(0)
  // the erasure's path (the mask, the scaling in place, the regrowth over the disc): compact structures here
  const regrowths = (await responses('metamaterial', 32)).flatMap((r) => (r.regrowth === undefined ? [] : [r.regrowth]))
  expect(regrowths.length).toBeGreaterThanOrEqual(1)
  for (const g of regrowths) expect(g).toBeLessThan(0.99)
}, 60_000)

/** Every cell visited: the cells within reach, and those on the negative side of the axis. */
function scanned(n: number, [cx, cy]: [number, number], reach: number, axis: [number, number]) {
  const window: number[] = []
  const erased: number[] = []
  for (let y = 0; y < n; y++)
    for (let x = 0; x < n; x++) {
      if (Math.hypot(x - cx, y - cy) > reach) continue
      window.push(y * n + x)
      if ((x - cx) * axis[0] + (y - cy) * axis[1] < 0) erased.push(y * n + x)
    }
  return { window, erased }
}

describe('erasePlan', () => {
  test('the same cells in the same order as a scan of the whole field, near edges and on whole-cell reaches', () => {
    const rand = rng(5)
    let cells = 0
    for (let k = 0; k < 400; k++) {
      const n = 8 + Math.floor(rand() * 90)
      // centres off the field too, and reaches that land on whole cells (where rounding decides)
      const whole = k % 4 === 0
      const centre: [number, number] = whole ? [Math.floor(rand() * n), Math.floor(rand() * n)] : [rand() * (n + 8) - 4.5, rand() * n - 0.5]
      const reach = k % 3 === 0 ? 1 + Math.floor(rand() * 12) : 1 + rand() * n
      const a = rand() * 2 * Math.PI
      const axis: [number, number] = [Math.cos(a), Math.sin(a)]
      const plan = erasePlan(n, centre, reach, axis)
      expect(plan).toEqual(scanned(n, centre, reach, axis))
      cells += plan.window.length
    }
    // the control: the plans were not all empty
    expect(cells).toBeGreaterThan(10_000)
  })
})
