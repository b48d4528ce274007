// Discovery end to end on real engines: it registers, it is reproducible, novelty rejects a repeat,
// lineage is recorded, MERGE and SPLIT derive primitives, and the two backends agree.
import { describe, expect, test } from 'vitest'
import type { Primitive } from '../contracts/registry.js'
import { MaterialCatalog } from '../field/materials.js'
import { createNodeEngine } from '../node.js'
import { MemoryRegistryStore, Registry } from '../registry/registry.js'
import { discover, merge, split, type DiscoveryOptions, type DiscoveryProgress } from './discovery.js'

const materials = new MaterialCatalog()
const onCpu: DiscoveryOptions['open'] = (o) => createNodeEngine({ ...o, backend: 'cpu' })

function smallRun(registry: Registry, extra: Partial<DiscoveryOptions> = {}): DiscoveryOptions {
  return { material: materials.get('ideal_resonator'), generations: 3, population: 8, size: 64, seed: 11, registry, open: onCpu, ...extra }
}

const shape = (ps: Primitive[]) => ps.map((p) => [p.class, p.hash, p.persistence.toFixed(6), p.noise_tolerance.toFixed(6)])

describe('discovery', () => {
  test('a small run (3 generations of 8 at N = 64) registers primitives, the same ones for the same seed', async () => {
    const progress: DiscoveryProgress[] = []
    const a = await discover(smallRun(new Registry(new MemoryRegistryStore()), { onProgress: (p) => progress.push(p) }))
    const b = await discover(smallRun(new Registry(new MemoryRegistryStore())))
    expect(a.registered.length).toBeGreaterThanOrEqual(1)
    expect(shape(a.registered)).toEqual(shape(b.registered))
    expect(a.evaluated).toBe(24)
    expect(progress.map((p) => p.generation)).toEqual([1, 2, 3])
    expect(progress.at(-1)!.registered_total).toBe(a.registered.length)
    for (const p of a.registered) {
      expect(p.material).toBe('ideal_resonator')
      expect(p.persistence).toBeGreaterThanOrEqual(0.2)
      expect(p.metrics.fitness).toBeGreaterThan(0)
      expect(p.genome.pulses.length).toBeGreaterThanOrEqual(1)
    }
    // lineage: a primitive found after the first generation names registered ancestors
    const later = a.registered.filter((p) => p.lineage.length > 0)
    expect(later.length).toBeGreaterThan(0)
    const ids = new Set(a.registered.map((p) => p.id))
    for (const p of later) for (const parent of p.lineage) expect(ids.has(parent)).toBe(true)
  })

  test('a second identical run registers nothing new: novelty rejects every duplicate', async () => {
    const registry = new Registry(new MemoryRegistryStore())
    const first = await discover(smallRun(registry))
    const again = await discover(smallRun(registry))
    expect(again.registered).toEqual([])
    expect(again.rejected_duplicates).toBeGreaterThanOrEqual(first.registered.length)
    expect(await registry.list()).toHaveLength(first.registered.length)
  })

  test('bad settings are refused before anything runs', async () => {
    const registry = new Registry(new MemoryRegistryStore())
    await expect(discover(smallRun(registry, { population: 1 }))).rejects.toThrow('population must be a whole number from 2 to 4096, got 1')
    await expect(discover(smallRun(registry, { generations: 0 }))).rejects.toThrow('generations must be a whole number')
  })

  test('MERGE registers a child whose lineage names both parents; SPLIT names its parent', async () => {
    const registry = new Registry(new MemoryRegistryStore())
    const { registered } = await discover(smallRun(registry, { generations: 1 }))
    expect(registered.length).toBeGreaterThanOrEqual(2)
    const [a, b] = registered
    const derive = { registry, size: 64, seed: 11, material: materials.get('ideal_resonator'), open: onCpu }
    const merged = await merge(a.id, b.id, derive)
    expect(merged.evaluations).toHaveLength(1)
    expect(merged.registered).toHaveLength(1)
    expect(merged.registered[0].lineage).toEqual([a.id, b.id])
    expect(merged.registered[0].genome.pulses).toHaveLength(Math.min(6, a.genome.pulses.length + b.genome.pulses.length))
    const halves = await split(a.id, derive)
    expect(halves.evaluations).toHaveLength(2)
    expect(halves.registered.length).toBeGreaterThanOrEqual(1)
    for (const p of halves.registered) expect(p.lineage).toEqual([a.id])
    await expect(merge('CRY-999999', a.id, derive)).rejects.toThrow('no primitive CRY-999999 in the registry')
  })
})

describe('backends agree', () => {
  test('the CPU and GPU backends give the same detection and registration for the same seed', async () => {
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
  })
})
