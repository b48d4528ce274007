// Discovery end to end on real engines: MAP-Elites fills an archive and registers its elites, it is
// reproducible, a rerun adds nothing, lineage is recorded, MERGE and SPLIT derive primitives, and
// the two backends agree.
import { describe, expect, test } from 'vitest'
import type { Primitive } from '../contracts/registry.js'
import { MaterialCatalog } from '../field/materials.js'
import { createNodeEngine } from '../node.js'
import { MemoryRegistryStore, Registry } from '../registry/registry.js'
import { candidate } from '../../testing/fixtures.js'
import { ARCHIVE_CELLS, registeredArchive } from './archive.js'
import { discover, merge, split, type DiscoveryOptions, type DiscoveryProgress } from './discovery.js'

const materials = new MaterialCatalog()
const onCpu: DiscoveryOptions['open'] = (o) => createNodeEngine({ ...o, backend: 'cpu' })

function smallRun(registry: Registry, extra: Partial<DiscoveryOptions> = {}): DiscoveryOptions {
  return {
    material: materials.get('europium_crystal'),
    generations: 3,
    population: 8,
    size: 32,
    seed: 11,
    registry,
    open: onCpu,
    bounds: { min_steps: 100, max_steps: 300 },
    ...extra,
  }
}

const shape = (ps: Primitive[]) => ps.map((p) => [p.class, p.hash, p.persistence.toFixed(6), p.noise_tolerance.toFixed(6)])

describe('discovery', () => {
  test('a small run (3 generations of 8 at N = 32) registers its archive elites, the same ones for the same seed, and reports each generation', async () => {
    const progress: DiscoveryProgress[] = []
    const a = await discover(smallRun(new Registry(new MemoryRegistryStore()), { onProgress: (p) => progress.push(p) }))
    const b = await discover(smallRun(new Registry(new MemoryRegistryStore())))
    expect(a.registered.length).toBeGreaterThanOrEqual(1)
    expect(shape(a.registered)).toEqual(shape(b.registered))
    expect(a.evaluated).toBe(24)
    expect(progress.map((p) => p.generation)).toEqual([1, 2, 3])
    expect(progress.at(-1)!.registered_total).toBe(a.registered.length)
    // per generation: that generation's best and mean, and an archive that only grows in QD-score and coverage
    for (const [i, p] of progress.entries()) {
      expect(p.mean_fitness).toBeLessThanOrEqual(p.best_fitness)
      expect(p.best_fitness).toBeLessThanOrEqual(1)
      expect(p.coverage).toBeCloseTo(p.elites / ARCHIVE_CELLS, 12)
      if (i > 0) {
        expect(p.qd_score).toBeGreaterThanOrEqual(progress[i - 1].qd_score)
        expect(p.elites).toBeGreaterThanOrEqual(progress[i - 1].elites)
      }
    }
    expect(a.elites).toBe(progress.at(-1)!.elites)
    expect(a.registered.length + a.rejected_duplicates).toBe(a.elites)
    for (const p of a.registered) {
      expect(p.material).toBe('europium_crystal')
      expect(p.persistence).toBeGreaterThanOrEqual(0.2)
      expect(p.metrics.fitness).toBeGreaterThan(0)
      expect(p.genome.pulses.length).toBeGreaterThanOrEqual(1)
    }
    // lineage names only ancestors registered before it in this run
    const ids = a.registered.map((p) => p.id)
    for (const [i, p] of a.registered.entries()) for (const parent of p.lineage) expect(ids.slice(0, i)).toContain(parent)
  })

  test('a second identical run registers nothing new: novelty rejects every duplicate', async () => {
    const registry = new Registry(new MemoryRegistryStore())
    const first = await discover(smallRun(registry))
    const again = await discover(smallRun(registry))
    expect(again.registered).toEqual([])
    expect(again.rejected_duplicates).toBeGreaterThanOrEqual(first.registered.length)
    expect(await registry.list()).toHaveLength(first.registered.length)
    // the two archives: the search's own is the same search again, the registered one (the archive map's) did not move
    expect(again.qd_score).toBe(first.qd_score)
    expect(first.registered_archive).toEqual(registeredArchive(await registry.list(), 'europium_crystal').report)
    expect(again.registered_archive).toEqual(first.registered_archive)
    expect(first.registered_archive!.placed).toBe(first.registered.length)
    expect(first.registered_archive!.qd_score).toBeGreaterThan(0)
  })

  test('a run that registers nothing by design (the benchmark) reports no registered archive', async () => {
    const r = await discover(smallRun(new Registry(new MemoryRegistryStore()), { generations: 1, register: false }))
    expect(r.registered).toEqual([])
    expect(r.registered_archive).toBeNull()
  })

  test('bad settings are refused before anything runs', async () => {
    const registry = new Registry(new MemoryRegistryStore())
    await expect(discover(smallRun(registry, { population: 1 }))).rejects.toThrow('population must be a whole number from 2 to 4096, got 1')
    await expect(discover(smallRun(registry, { generations: 0 }))).rejects.toThrow('generations must be a whole number')
  })

  test('MERGE registers a child whose lineage names both parents; SPLIT names its parent', async () => {
    const registry = new Registry(new MemoryRegistryStore())
    const pulse = (x: number) => ({ x, y: 0.5, radius: 0.1, amplitude: 1.2, frequency: 2, phase: 0 })
    const parents = [
      candidate(1, { material: 'europium_crystal', genome: { pulses: [pulse(0.3)], resonate_steps: 200, dream: 'none' } }),
      candidate(2, { material: 'europium_crystal', genome: { pulses: [pulse(0.7)], resonate_steps: 300, dream: 'light' } }),
    ]
    const [a, b] = (await registry.register(parents)).registered
    const derive = { registry, size: 32, seed: 11, material: materials.get('europium_crystal'), open: onCpu }
    const merged = await merge(a.id, b.id, derive)
    expect(merged.evaluations).toHaveLength(1)
    expect(merged.registered).toHaveLength(1)
    expect(merged.registered[0].lineage).toEqual([a.id, b.id])
    expect(merged.registered[0].genome.pulses).toHaveLength(Math.min(6, a.genome.pulses.length + b.genome.pulses.length))
    const halves = await split(a.id, derive)
    expect(halves.evaluations).toHaveLength(2)
    // a half is registered naming its parent, or rejected naming what it duplicates
    expect(halves.registered.length + halves.rejected.length).toBeGreaterThanOrEqual(1)
    for (const p of halves.registered) expect(p.lineage).toEqual([a.id])
    for (const r of halves.rejected) expect((await registry.list()).map((p) => p.id)).toContain(r.duplicate_of)
    await expect(merge('CRY-999999', a.id, derive)).rejects.toThrow('no primitive CRY-999999 in the registry')
  })
})

describe('backends agree', () => {
  test('the CPU and GPU backends give the same detection and registration for the same seed', async () => {
    // SwiftShader runs the GPU half: minutes on a loaded 2-core machine
    const run = async (backend: 'cpu' | 'gpu') =>
      (
        await discover({
          material: materials.get('europium_crystal'),
          generations: 1,
          population: 3,
          size: 24,
          seed: 3,
          registry: new Registry(new MemoryRegistryStore()),
          open: (o) => createNodeEngine({ ...o, backend }),
          bounds: { min_steps: 40, max_steps: 80 },
        })
      ).registered
    const cpu = await run('cpu')
    const gpu = await run('gpu')
    expect(cpu.length).toBeGreaterThan(0)
    expect(gpu.map((p) => [p.class, p.hash])).toEqual(cpu.map((p) => [p.class, p.hash]))
    gpu.forEach((p, i) => expect(p.persistence).toBeCloseTo(cpu[i].persistence, 4))
  }, 300_000)
})
