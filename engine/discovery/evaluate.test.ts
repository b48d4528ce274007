// The perturbation experiment of evaluate.ts: it reads the window after the perturbation (its plan:
// engine/detect/erase_plan.test.ts).
import { expect, test } from 'vitest'
import type { EngineOptions } from '../field/engine.js'
import { MaterialCatalog } from '../field/materials.js'
import { createNodeEngine } from '../node.js'
import { rng } from '../util/rng.js'
import { evaluate } from './evaluate.js'
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
