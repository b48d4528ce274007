// The perturbation experiment of evaluate.ts: it reads the window after the perturbation (its plan:
// engine/detect/erase_plan.test.ts).
import { describe, expect, test } from 'vitest'
import type { Genome } from '../contracts/registry.js'
import { aboveNoise } from '../detect/detect.js'
import type { EngineOptions } from '../field/engine.js'
import { MaterialCatalog } from '../field/materials.js'
import { createNodeEngine } from '../node.js'
import { rng } from '../util/rng.js'
import { IN_THREAD } from './detector.js'
import { evaluate, recordWindows, resonate } from './evaluate.js'
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

describe("a genome's evaluation is its own: the same alone as in any batch, bit for bit", () => {
  test.each([
    ['cpu', 32],
    ['gpu', 24],
  ] as const)(
    "%s backend, N = %i: beside a longer genome (its field rests until injected, its noise keyed by its own steps), at another place in the batch (every field draws the same numbers), beside genomes that dream where it does not (it spends the dream's steps undreamed); one that dreams alike (its mutations keyed by its own steps)",
    async (backend, size) => {
      const rand = rng(5)
      const open = (o: EngineOptions) => createNodeEngine({ ...o, backend })
      const c = { size, material: new MaterialCatalog().get('metamaterial'), seed: 1, open }
      const genome = { ...randomGenome(rand, { min_steps: 100, max_steps: 200 }), dream: 'none' as const }
      const other = (resonate_steps: number, dream: 'none' | 'light' | 'deep') => ({
        ...randomGenome(rand, { min_steps: 100, max_steps: 200 }),
        resonate_steps,
        dream,
      })
      // and one that dreams deep, its mutations keyed by its own steps too
      const dreamer = other(150, 'deep')
      const [alone, dreamt] = [(await evaluate([genome], c))[0], (await evaluate([dreamer], c))[0]]
      const batch = await evaluate([other(400, 'deep'), genome, other(genome.resonate_steps, 'light'), dreamer], c)
      expect(alone.structure).toBeDefined()
      expect(batch[1]).toEqual(alone)
      expect(batch[3]).toEqual(dreamt)
      // the control: the same genome resonating 10 steps longer evaluates otherwise, so the equality is
      // not of evaluations blind to the genome
      const [longer] = await evaluate([{ ...genome, resonate_steps: genome.resonate_steps + 10 }], c)
      expect(longer).not.toEqual(alone)
    },
    300_000,
  )
})

test("a structure stands above its noise alone: genomes whose pulses are a hundredth as loud find none, where the noise's own field-wide pattern stands out of the sponge's dim border", async () => {
  const material = new MaterialCatalog().get('graphene_model')
  const [size, seed] = [32, 1]
  const open = (o: EngineOptions) => createNodeEngine({ ...o, backend: 'cpu' })
  const rand = rng(6)
  const genomes = Array.from({ length: 12 }, () => randomGenome(rand, { min_steps: 100, max_steps: 300 }))
  const whispers = genomes.map((g) => ({ ...g, pulses: g.pulses.map((p) => ({ ...p, amplitude: p.amplitude / 100 })) }))
  // each whisper and its noise alone (nothing injected) in one engine, as evaluate runs them
  const windowsOf = async (gs: Genome[]) => {
    const engine = await open({
      size,
      fields: gs.length,
      material,
      seed,
      timeline_interval: 0,
      rest_until_injected: true,
      draws: gs.map(() => 0),
    })
    await resonate(engine, gs, await IN_THREAD.waves(gs, size))
    const { windows } = await recordWindows(engine)
    engine.destroy()
    return windows
  }
  const windows = await windowsOf([...whispers, ...whispers.map((g) => ({ ...g, pulses: [] }))])
  const held = (await IN_THREAD.first(windows.slice(0, 12), 1)).flatMap((s, f) => (s ? [{ s, f }] : []))
  // the control: by the rules of its window alone (persisting, standing out of its outside) the whispers hold structures
  expect(held.length).toBeGreaterThanOrEqual(3)
  for (const { s, f } of held) expect(aboveNoise(s.cells, windows[f].spectra, windows[12 + f].spectra)).toBe(false)
  const c = { size, material, seed, open }
  expect((await evaluate(whispers, c)).filter((e) => e.structure)).toEqual([])
  // and the rule refuses only the noise's: the same genomes at their own loudness find structures
  expect((await evaluate(genomes, c)).filter((e) => e.structure).length).toBeGreaterThanOrEqual(3)
}, 120_000)
