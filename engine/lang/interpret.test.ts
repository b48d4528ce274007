// STABILIZE registers what crystallized: through the same detection and novelty as discovery, with
// the ids in its line, "nothing crystallized" when nothing did, and nothing twice.
import { describe, expect, test } from 'vitest'
import { MaterialCatalog } from '../field/materials.js'
import { createNodeEngine } from '../node.js'
import { MemoryRegistryStore, Registry } from '../registry/registry.js'
import { interpret } from './interpret.js'
import { parse } from './parse.js'

const catalog = new MaterialCatalog()
const run = (source: string, registry: Registry) => interpret(parse(source).commands, { open: (o) => createNodeEngine({ ...o, backend: 'cpu' }), catalog, registry, size: 32 })
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

  test('an absorbing vacuum crystallizes nothing', async () => {
    const registry = new Registry(new MemoryRegistryStore())
    const last = (await run(program('vacuum'), registry)).at(-1)!
    expect(last.text).toContain('nothing crystallized')
    expect(last.result.registered).toEqual([])
    expect(await registry.list()).toEqual([])
  })
})
