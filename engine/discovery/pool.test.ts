// Detection on a pool of worker threads (engine/discovery/pool.node.ts) against detection on the main
// thread: the same evaluations on either backend, the same registry for a seed; a worker that cannot
// start is named. The workers run the built detector (dist/: `npm run build` first).
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { afterAll, expect, test } from 'vitest'
import { MaterialCatalog } from '../field/materials.js'
import { createNodeEngine } from '../node.js'
import type { Primitive } from '../contracts/registry.js'
import { MemoryRegistryStore, Registry } from '../registry/registry.js'
import { rng } from '../util/rng.js'
import { discover } from './discovery.js'
import type { Structure } from '../detect/detect.js'
import { IN_THREAD, type Window } from './detector.js'
import { BATCH_PHASES, evaluate, type EvaluationTimes, RECORD_DT, RECORD_FRAMES } from './evaluate.js'
import { randomGenome } from './genome.js'
import { DetectPool, PRACTICE_ROUNDS } from './pool.node.js'

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
  // two runs at once share the pool's workers
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
  // where the time went (evolve --debug): every phase of the batch, the cells and their planes too where the planes stay on the device
  // (these maps guess no part wrong: no perturbation again)
  expect(Object.keys(times!.batch)).toEqual(
    BATCH_PHASES.filter((p) => (p !== 'dream' || genomes.some((g) => g.dream !== 'none')) && p !== 'again'),
  )
  const phases = Object.values(times!.batch)
  expect(Math.min(...phases, times!.waves)).toBeGreaterThanOrEqual(0)
  // the waves are made while the batch's engine opens: each within the whole, not their sum
  expect(
    Math.max(
      phases.reduce((a, b) => a + b, 0),
      times!.waves,
    ),
  ).toBeLessThanOrEqual(times!.total + 1)
}, 300_000)

test('workers practise on made-up windows while no call has work for them, and a search beside it registers what the main thread does', async () => {
  const practising = new DetectPool(3, WORKER)
  try {
    const run = (detector?: DetectPool) =>
      discover({
        material,
        generations: 2,
        population: 6,
        size: 24,
        seed: 8,
        registry: new Registry(new MemoryRegistryStore()),
        open: (o) => createNodeEngine({ ...o, backend: 'cpu' }),
        bounds,
        detector,
      }).then((r) => r.registered.map(found))
    // a generation of 6 genomes hands over 12 windows: 2 chunks, so 2 workers practise (one core is the caller's)
    const workers = Math.min(2, availableParallelism() - 1)
    await practising.warm(3, { n: 24, frames: RECORD_FRAMES, dt: RECORD_DT, windows: 12 })
    // a search beside the practice: it does not change what the search finds
    const [pooled, main] = await Promise.all([run(practising), run()])
    expect(pooled.length).toBeGreaterThan(0)
    expect(pooled).toEqual(main)
    expect(practising.posted).toBeGreaterThan(0)
    // every round is run in the end, each answered; the third worker none
    for (let waited = 0; practising.practised < workers * PRACTICE_ROUNDS && waited < 60_000; waited += 50)
      await new Promise((r) => setTimeout(r, 50))
    expect(practising.practised).toBe(workers * PRACTICE_ROUNDS)
  } finally {
    practising.close()
  }
}, 120_000)

test('a call goes before the practice rounds still to run: it waits for the round in hand at most', async () => {
  const one = new DetectPool(1, WORKER)
  try {
    await one.warm(1, { n: 96, frames: RECORD_FRAMES, dt: RECORD_DT, windows: 6 })
    // one core: nothing practises (the caller's core is left to it)
    if (availableParallelism() < 2) return
    const rand = rng(2)
    const genomes = Array.from({ length: 2 }, () => randomGenome(rand, bounds))
    // asked while the first round runs; had practice gone first, all 10 would be done by its answer
    await one.waves(genomes, 96)
    expect(one.posted).toBe(1)
    expect(one.practised).toBeLessThanOrEqual(2)
    for (let waited = 0; one.practised < PRACTICE_ROUNDS && waited < 20_000; waited += 50) await new Promise((r) => setTimeout(r, 50))
    expect(one.practised).toBe(PRACTICE_ROUNDS)
  } finally {
    one.close()
  }
}, 60_000)

test("a search at a large side practises at evolve's default side: its rounds done in seconds, not gigabytes of frames", async () => {
  const large = new DetectPool(1, WORKER)
  try {
    await large.warm(1, { n: 4096, frames: RECORD_FRAMES, dt: RECORD_DT, windows: 6 })
    const rounds = availableParallelism() > 1 ? PRACTICE_ROUNDS : 0
    // 32 frames of 4096^2 would be 2 GB to make a round
    for (let waited = 0; large.practised < rounds && waited < 20_000; waited += 50) await new Promise((r) => setTimeout(r, 50))
    expect(large.practised).toBe(rounds)
  } finally {
    large.close()
  }
}, 60_000)

test('a call whose chunk waits behind a practice round holds the process until it is answered (it ended with exit code 13)', () => {
  // a process of its own, with nothing but the pool to hold it: the worker answered a call, so it no
  // longer held the process, went back to practice, and the next call's chunk waited in the queue
  const script = join(mkdtempSync(join(tmpdir(), 'crystal-pool-')), 'held.mjs')
  writeFileSync(
    script,
    `const { DetectPool } = await import(${JSON.stringify(new URL('./pool.node.js', WORKER).href)})
const pool = new DetectPool(1)
await pool.warm(1, { n: 96, frames: ${RECORD_FRAMES}, dt: ${RECORD_DT}, windows: 6 })
for (let k = 0; k < 3; k++) await pool.waves([{ pulses: [] }, { pulses: [] }], 16)
console.log('answered')
pool.close()
`,
  )
  const r = spawnSync(process.execPath, [script], { encoding: 'utf8', timeout: 60_000 })
  expect([r.status, r.stdout.trim()]).toEqual([0, 'answered'])
}, 90_000)

test("the structures the workers find are the main thread's, with plain arrays of cells and signature, chunk by chunk from the workers and from the calling thread", async () => {
  const genomes = Array.from({ length: 12 }, (_, k) => randomGenome(rng(300 + k), bounds))
  const windows: Window[] = []
  // the real windows of a batch (the clean fields and their rerun), as evaluate hands them over
  const capturing = { ...IN_THREAD, first: (w: readonly Window[], limit: number) => (windows.push(...w), IN_THREAD.first(w, limit)) }
  await evaluate(genomes, { size: 24, material, seed: 4, open: (o) => createNodeEngine({ ...o, backend: 'cpu' }), detector: capturing })
  const want = await IN_THREAD.first(windows, 1)
  expect(want.filter(Boolean).length).toBeGreaterThan(2)
  const plain = (found: (Structure | undefined)[]) => found.every((s) => !s || (Array.isArray(s.cells) && Array.isArray(s.signature)))
  const fresh = new DetectPool(2, WORKER)
  try {
    // workers still loading: the calling thread takes chunks; then ready workers take them all
    for (const pooled of [fresh, pool]) {
      const got = await pooled.first(windows, 1)
      expect(got).toEqual(want)
      expect(plain(got)).toBe(true)
    }
    expect(fresh.ranHere).toBeGreaterThan(0)
  } finally {
    fresh.close()
  }
}, 120_000)

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

test('while the workers load their modules, the calling thread does the chunks, to the same bits; control: ready workers take them', async () => {
  const fresh = new DetectPool(2, WORKER)
  try {
    const genomes = Array.from({ length: 24 }, (_, k) => randomGenome(rng(100 + k), bounds))
    const want = await IN_THREAD.waves(genomes, 24)
    const got = await fresh.waves(genomes, 24)
    expect(fresh.ranHere).toBeGreaterThan(0)
    got.forEach((w, k) => expect(w).toEqual(want[k]))
    await fresh.warm()
    const [posted, ranHere] = [fresh.posted, fresh.ranHere]
    // one chunk, and a ready worker free for it
    expect(await fresh.waves(genomes.slice(0, 6), 24)).toEqual(want.slice(0, 6))
    expect([fresh.posted - posted, fresh.ranHere - ranHere]).toEqual([1, 0])
  } finally {
    fresh.close()
  }
})

test('a pool whose worker cannot start fails its calls and names the script', async () => {
  const broken = new DetectPool(1, new URL('./no_such_worker.js', import.meta.url))
  const genomes = [randomGenome(rng(1), bounds), randomGenome(rng(2), bounds)]
  // this thread would do a call's chunks while the workers load: starting them says it
  await expect(broken.warm()).rejects.toThrow('no_such_worker.js')
  await expect(
    evaluate(genomes, { size: 16, material, seed: 1, open: (o) => createNodeEngine({ ...o, backend: 'cpu' }), detector: broken }),
  ).rejects.toThrow('no_such_worker.js')
  broken.close()
})

test('a call with a failing chunk rejects only once its other chunks have answered: no worker is still at its memory after', async () => {
  // a worker that fails a chunk whose first genome has no pulses at once, and answers the others 300 ms late
  const script = join(mkdtempSync(join(tmpdir(), 'crystal-pool-')), 'slow_worker.mjs')
  writeFileSync(
    script,
    `import { parentPort } from 'node:worker_threads'
parentPort.postMessage({ ready: true })
parentPort.on('message', (task) => {
  if (task.jobs[0].pulses.length === 0) return parentPort.postMessage({ error: 'this chunk fails' })
  setTimeout(() => {
    for (const j of task.jobs) j.into.fill(7)
    parentPort.postMessage({ results: task.jobs.map(() => undefined) })
  }, 300)
})
`,
  )
  const slow = new DetectPool(2, pathToFileURL(script))
  try {
    // both workers take a chunk at once (4 chunks of six), the failing one among them
    await slow.warm()
    const genomes = Array.from({ length: 24 }, (_, k) => (k === 0 ? { pulses: [] } : randomGenome(rng(k), bounds)))
    const start = performance.now()
    await expect(slow.waves(genomes, 16)).rejects.toThrow('making waves in a worker thread failed: this chunk fails')
    // the other worker's chunk answered first (a rejection at once would come in a few ms)
    expect(performance.now() - start).toBeGreaterThanOrEqual(290)
    expect(slow.posted).toBeGreaterThanOrEqual(2)
  } finally {
    slow.close()
  }
})
