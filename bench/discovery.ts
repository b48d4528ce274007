// Discovery and recall speed: genome evaluations per second (N = 96, 600 resonate steps, a population
// of 32, per backend), the time of a 10 x 12 evolve at N = 96, and recall latency over 10,000 memories.
import { evaluate } from '../engine/discovery/evaluate.js'
import { discover } from '../engine/discovery/discovery.js'
import { randomGenome } from '../engine/discovery/genome.js'
import { rng } from '../engine/util/rng.js'
import { MaterialCatalog } from '../engine/field/materials.js'
import { findAdapter } from '../engine/gpu/device.js'
import { nodeGpu } from '../engine/gpu/webgpu.node.js'
import { createNodeEngine } from '../engine/node.js'
import { MemoryRegistryStore, Registry } from '../engine/registry/registry.js'

export interface DiscoveryBenchReport {
  evaluations: { backend: 'cpu' | 'gpu'; population: number; size: number; resonate_steps: number; seconds: number; evaluations_per_second: number }[]
  evolve: { generations: number; population: number; size: number; seconds: number; registered: number }
  recall: { memories: number; size: number; k: number; queries: number; p50_ms: number; p95_ms: number; max_ms: number }
  skipped: string[]
}

const catalog = new MaterialCatalog()

async function evaluationRate(backend: 'cpu' | 'gpu') {
  const rand = rng(17)
  const bounds = { min_steps: 600, max_steps: 600 }
  const genomes = Array.from({ length: 32 }, () => randomGenome(rand, bounds))
  const t0 = performance.now()
  await evaluate(genomes, { size: 96, material: catalog.get('europium_crystal'), seed: 1, open: (o) => createNodeEngine({ ...o, backend }) })
  const seconds = (performance.now() - t0) / 1000
  return { backend, population: 32, size: 96, resonate_steps: 600, seconds, evaluations_per_second: 32 / seconds }
}

async function recallLatency() {
  const size = 64
  const e = await createNodeEngine({ size, material: 'ideal_resonator', seed: 3 })
  try {
    const syllables = ['ka', 'lo', 'mi', 'ren', 'tu', 'sha', 'vel', 'or', 'quin', 'da', 'pe', 'zor', 'ly', 'an', 'thi', 'bo']
    let s = 5
    const rand = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32)
    const word = () => syllables[Math.floor(rand() * 16)] + syllables[Math.floor(rand() * 16)]
    const texts = Array.from({ length: 10_000 }, (_, i) => `${word()} ${word()} ${word()} ${i}`)
    for (let i = 0; i < texts.length; i += 250) {
      await e.writeMany(texts.slice(i, i + 250).map((text) => ({ text })))
      await e.step(5)
    }
    await e.recall(texts[0], 10) // the first query builds the encoding index
    const times: number[] = []
    for (let q = 0; q < 50; q++) {
      const t0 = performance.now()
      await e.recall(texts[(q * 977) % texts.length], 10)
      times.push(performance.now() - t0)
    }
    times.sort((a, b) => a - b)
    return { memories: texts.length, size, k: 10, queries: times.length, p50_ms: times[24], p95_ms: times[47], max_ms: times[49] }
  } finally {
    e.destroy()
  }
}

export async function runDiscoveryBench(progress: (what: string) => void = () => {}): Promise<DiscoveryBenchReport> {
  const skipped: string[] = []
  progress('genome evaluations (cpu)')
  const evaluations = [await evaluationRate('cpu')]
  const adapter = await findAdapter(await nodeGpu())
  if (adapter && !adapter.software) {
    progress('genome evaluations (gpu)')
    evaluations.push(await evaluationRate('gpu'))
  } else skipped.push(`gpu evaluations: ${adapter ? 'software adapter only (minutes per population)' : 'no WebGPU adapter'}`)
  progress('evolve 10 x 12 at N = 96')
  const t0 = performance.now()
  const run = await discover({ material: catalog.get('europium_crystal'), generations: 10, population: 12, size: 96, seed: 5, registry: new Registry(new MemoryRegistryStore()), open: (o) => createNodeEngine(o) })
  const evolve = { generations: 10, population: 12, size: 96, seconds: (performance.now() - t0) / 1000, registered: run.registered.length }
  progress('recall over 10,000 memories')
  const recall = await recallLatency()
  return { evaluations, evolve, recall, skipped }
}

export function discoveryTables(r: DiscoveryBenchReport): Record<string, Record<string, string | number>[]> {
  return {
    'genome evaluations (N = 96, 600 steps, population 32)': r.evaluations.map((e) => ({ backend: e.backend, seconds: e.seconds.toFixed(2), 'evaluations/s': e.evaluations_per_second.toFixed(2) })),
    'evolve (10 generations of 12, N = 96, europium_crystal)': [{ seconds: r.evolve.seconds.toFixed(2), registered: r.evolve.registered }],
    'recall top-10 over 10,000 memories (N = 64)': [{ p50_ms: r.recall.p50_ms.toFixed(1), p95_ms: r.recall.p95_ms.toFixed(1), max_ms: r.recall.max_ms.toFixed(1) }],
  }
}
