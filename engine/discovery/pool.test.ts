// Detection on a pool of worker threads (engine/discovery/pool.node.ts) against detection on the main
// thread: the same evaluations on either backend, the same registry for a seed; a worker that cannot
// start is named. The workers run the built detector (dist/: `npm run build` first).
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { afterAll, expect, test } from 'vitest'
import { MaterialCatalog } from '../field/materials.js'
import { createNodeEngine } from '../node.js'
import type { Primitive } from '../contracts/registry.js'
import { MemoryRegistryStore, Registry } from '../registry/registry.js'
import { rng } from '../util/rng.js'
import { discover } from './discovery.js'
import { IN_THREAD } from './detector.js'
import { BATCH_PHASES, evaluate, type EvaluationTimes } from './evaluate.js'
import { randomGenome } from './genome.js'
import { DetectPool } from './pool.node.js'

const WORKER = new URL('../../dist/engine/discovery/detect_worker.js', import.meta.url)
if (!existsSync(fileURLToPath(WORKER))) throw new Error(`${fileURLToPath(WORKER)} is missing: run npm run build before this test`)
const pool = new DetectPool(2, WORKER)
afterAll(() => pool.close())
const material = new MaterialCatalog().get('europium_crystal')
const bounds = { min_steps: 40, max_steps: 120 }
/** A primitive less what each registration draws anew (its uuid, its time). */
const found = ({ uuid, discovered_at, ...rest }: Primitive) => rest

test('a discovery run with its detection on worker threads registers what one detecting on the main thread does', async () => {
  const run = async (detector?: DetectPool) => {
    const registry = new Registry(new MemoryRegistryStore())
    const result = await discover({
      material,
      generations: 2,
      population: 6,
      size: 24,
      seed: 5,
      registry,
      open: (o) => createNodeEngine({ ...o, backend: 'cpu' }),
      bounds,
      detector,
    })
    return { result: { ...result, registered: result.registered.map(found) }, registry: (await registry.list()).map(found) }
  }
  const main = await run()
  // two runs at once share the pool's workers (evolve's two batches a generation ask it at once on the GPU)
  const [pooled, beside] = await Promise.all([run(pool), run(pool)])
  expect(main.result.registered.length).toBeGreaterThan(0)
  for (const r of [pooled, beside]) {
    expect(r.registry).toEqual(main.registry)
    expect(r.result).toEqual(main.result)
  }
}, 120_000)

test('on the GPU (planes gathered from the device, then sent to the workers) the evaluations are those of the main thread', async () => {
  const rand = rng(9)
  const genomes = Array.from({ length: 3 }, () => randomGenome(rand, bounds))
  const run = (detector?: DetectPool, onTimes?: (t: EvaluationTimes) => void) =>
    evaluate(genomes, { size: 24, material, seed: 3, open: (o) => createNodeEngine({ ...o, backend: 'gpu' }), detector, onTimes })
  const main = await run()
  expect(main.some((e) => e.structure)).toBe(true)
  let times: EvaluationTimes | undefined
  expect(await run(pool, (t) => (times = t))).toEqual(main)
  // where the time went (evolve --debug): every phase of each batch, the cells and their planes too where the planes stay on the device
  expect(Object.keys(times!.clean)).toEqual(BATCH_PHASES.filter((p) => p !== 'dream' || genomes.some((g) => g.dream !== 'none')))
  expect(Object.keys(times!.noisy)).toEqual(Object.keys(times!.clean).filter((p) => p !== 'books' && p !== 'perturb'))
  const clean = Object.values(times!.clean).reduce((a, b) => a + b, 0)
  expect(Math.min(...Object.values(times!.clean), ...Object.values(times!.noisy), times!.waves)).toBeGreaterThanOrEqual(0)
  expect(clean + times!.waves).toBeLessThanOrEqual(times!.total + 1)
}, 300_000)

test("the genomes' waves made on the workers are the main thread's, bit for bit, on memory the threads share", async () => {
  const rand = rng(12)
  const genomes = Array.from({ length: 40 }, () => randomGenome(rand, bounds))
  const [pooled, main] = [await pool.waves(genomes, 32), await IN_THREAD.waves(genomes, 32)]
  expect(pooled).toHaveLength(genomes.length)
  pooled.forEach((w, k) => {
    expect(w.buffer).toBeInstanceOf(SharedArrayBuffer)
    expect(Buffer.from(w.buffer, w.byteOffset, w.byteLength).equals(Buffer.from(main[k].buffer))).toBe(true)
  })
  // the control: every wave holds its genome's pulses, not a neighbour's or none
  expect(main.every((w, k) => w.some((v) => v !== 0) && (k === 0 || w.some((v, i) => v !== main[k - 1][i])))).toBe(true)
})

test('a pool whose worker cannot start fails the call and names the script', async () => {
  const broken = new DetectPool(1, new URL('./no_such_worker.js', import.meta.url))
  const genomes = [randomGenome(rng(1), bounds), randomGenome(rng(2), bounds)]
  await expect(
    evaluate(genomes, { size: 16, material, seed: 1, open: (o) => createNodeEngine({ ...o, backend: 'cpu' }), detector: broken }),
  ).rejects.toThrow('no_such_worker.js')
  broken.close()
})
