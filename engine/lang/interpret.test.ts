// STABILIZE registers what crystallized: through the same detection and novelty as discovery, with
// the ids in its line, "nothing crystallized" when nothing did, and nothing twice.
// MERGE and SPLIT say what became of each child, a child with no structure too.
import { describe, expect, test } from 'vitest'
import type { Engine } from '../field/engine.js'
import { MaterialCatalog } from '../field/materials.js'
import { createNodeEngine } from '../node.js'
import { MemoryRegistryStore, Registry } from '../registry/registry.js'
import { candidate } from '../../testing/fixtures.js'
import { interpret } from './interpret.js'
import { parse } from './parse.js'

const catalog = new MaterialCatalog()
const run = (source: string, registry: Registry) =>
  interpret(parse(source).commands, { open: (o) => createNodeEngine({ ...o, backend: 'cpu' }), catalog, registry, size: 32 })
const program = (material: string) => `MATERIAL ${material}\nPULSE 0.5 0.5 0.12 1 2 0\nRESONATE 200\nSTABILIZE\n`

describe('STABILIZE', () => {
  test('registers the structure that crystallized in europium at 4 K, and the same program again adds nothing', async () => {
    const registry = new Registry(new MemoryRegistryStore())
    const first = (await run(program('europium_crystal'), registry)).at(-1)!
    const ids = first.result.registered as string[]
    expect(ids.length).toBeGreaterThanOrEqual(1)
    expect(first.text).toMatch(/crystallized CRY-\d{6} \([A-Z][a-z]+ [A-Z][a-z]+, persistence \d+%\)/)
    const held = await registry.list()
    expect(held.map((p) => p.id)).toEqual(ids)
    expect(held[0].genome.pulses).toEqual([{ x: 0.5, y: 0.5, radius: 0.12, amplitude: 1, frequency: 2, phase: 0 }])
    const again = (await run(program('europium_crystal'), registry)).at(-1)!
    expect(again.result.registered).toEqual([])
    expect(again.text).toContain('nothing crystallized')
    expect(again.text).toContain(`a duplicate of ${ids[0]}`)
    expect(await registry.list()).toHaveLength(ids.length)
  })

  test("on the GPU the same lines and registry as the CPU, in a few reads: a window's map is one, the timeline samples ride", {
    timeout: 300_000,
  }, async () => {
    const source = `SEED 3\n${program('europium_crystal')}`
    const traces: string[][] = []
    const ids: string[][] = []
    let reads = 0
    for (const backend of ['cpu', 'gpu'] as const) {
      const registry = new Registry(new MemoryRegistryStore())
      let engine: Engine | undefined
      const lines = await interpret(parse(source).commands, {
        open: async (o) => (engine = await createNodeEngine({ ...o, backend })),
        catalog,
        registry,
        size: 32,
      })
      if (backend === 'gpu') reads = engine!.transfers()!.reads
      engine!.destroy()
      traces.push(lines.map((l) => l.text))
      ids.push((await registry.list()).map((p) => `${p.id} ${p.class} ${p.hash}`))
    }
    expect(traces[1]).toEqual(traces[0])
    expect(ids[1]).toEqual(ids[0])
    expect(traces[0].at(-1)).toMatch(/^stabilized after \d+ steps/)
    // 2 to 10 windows (a read each), two recorded windows (2 reads each), the perturbation's twin and
    // the books; each of the run's timeline samples and each window's 20 samples were a read of its own
    expect(reads).toBeLessThanOrEqual(20)
  })

  test('an absorbing vacuum crystallizes nothing', async () => {
    const registry = new Registry(new MemoryRegistryStore())
    const last = (await run(program('vacuum'), registry)).at(-1)!
    expect(last.text).toContain('nothing crystallized')
    expect(last.result.registered).toEqual([])
    expect(await registry.list()).toEqual([])
  })
})

describe('RECALL', () => {
  test('three WRITEs at one step, RESONATE 300: each one-word RECALL prints its own memory first, with match and strength', async () => {
    const texts = ['the river remembers the mountain', 'copper bells at dawn', 'a lantern in the fog']
    const source = `MATERIAL ideal_resonator\n${texts.map((t) => `WRITE "${t}"`).join('\n')}\nRESONATE 300\nRECALL "mountain" 3\nRECALL "bells" 3\nRECALL "lantern" 3\nRECALL "quartz" 3\n`
    const lines = await interpret(parse(source).commands, {
      open: (o) => createNodeEngine({ ...o, backend: 'cpu' }),
      catalog,
      registry: new Registry(new MemoryRegistryStore()),
      size: 64,
    })
    const recalls = lines.slice(-4).map((l) => l.text)
    ;['mountain', 'bells', 'lantern'].forEach((word, i) =>
      expect(recalls[i]).toMatch(
        new RegExp(`^recall "${word}": 1\\. "${texts[i]}" \\(match 0\\.\\d{3}, strength (0\\.9|1\\.0)\\d\\d, floor 0\\.\\d{3}\\)`),
      ),
    )
    expect(recalls[3]).toBe('recall "quartz": nothing resonates above the noise floor')
  })
})

describe('MERGE and SPLIT', () => {
  const pulse = (x: number, amplitude: number) => ({ x, y: 0.5, radius: 0.1, amplitude, frequency: 2, phase: 0 })

  test('SPLIT says what became of each half: one registered, the other with no structure (not dropped unsaid)', async () => {
    const registry = new Registry(new MemoryRegistryStore())
    // in diamond_nv at N = 32 a pulse of amplitude 1.2 resonating 60 steps leaves a structure, one of 0.01
    // none (resonating 200 steps and then the dream's 300, which a genome that does not dream spends
    // undreamed, even 0.01 leaves one)
    const genome = { pulses: [pulse(0.3, 1.2), pulse(0.7, 0.01)], resonate_steps: 60, dream: 'none' as const }
    const [parent] = (await registry.register([candidate(1, { material: 'diamond_nv', genome })])).registered
    const [line] = await run(`MATERIAL diamond_nv\nSEED 11\nSPLIT ${parent.id}\n`, registry).then((t) => t.slice(-1))
    const [child] = (await registry.list()).filter((p) => p.id !== parent.id)
    expect(child.genome.pulses).toEqual([genome.pulses[0]])
    expect(line.result).toMatchObject({
      parent: parent.id,
      registered: [child.id],
      rejected: [],
      children: [
        { index: 0, outcome: 'registered', id: child.id },
        { index: 1, outcome: 'no_structure' },
      ],
    })
    expect(line.text).toMatch(
      new RegExp(
        `^split ${parent.id} -> first half: ${child.id} \\(\\w+, persistence \\d+%\\); second half: no structure found, not registered$`,
      ),
    )
    // again: the first half is now a duplicate, named as such, and its index is the half's
    const [again] = await run(`MATERIAL diamond_nv\nSEED 11\nSPLIT ${parent.id}\n`, registry).then((t) => t.slice(-1))
    expect(again.result).toMatchObject({
      registered: [],
      rejected: [{ index: 0, duplicate_of: child.id }],
      children: [
        { index: 0, outcome: 'duplicate', duplicate_of: child.id },
        { index: 1, outcome: 'no_structure' },
      ],
    })
    expect(again.text).toBe(
      `split ${parent.id} -> first half: a duplicate of ${child.id}, not registered; second half: no structure found, not registered`,
    )
  })

  test('MERGE says so when its child has no structure', async () => {
    const registry = new Registry(new MemoryRegistryStore())
    const weak = (x: number) =>
      candidate(x, { material: 'diamond_nv', genome: { pulses: [pulse(x / 10, 0.01)], resonate_steps: 60, dream: 'none' } })
    const [a, b] = (await registry.register([weak(3), weak(7)])).registered
    const [line] = await run(`MATERIAL diamond_nv\nSEED 11\nMERGE ${a.id} ${b.id}\n`, registry).then((t) => t.slice(-1))
    expect(line.result).toMatchObject({ registered: [], rejected: [], children: [{ index: 0, outcome: 'no_structure' }] })
    expect(line.text).toBe(`merged ${a.id} + ${b.id} -> no structure found, not registered`)
    expect(await registry.list()).toHaveLength(2)
  })
})
