// Recall's sweep on the GPU (shaders/adjoint.wgsl, engine/gpu/adjoint.ts) against its CPU twin
// (AdjointField behind CpuAdjointRunner): the same readings from the same state; recall and probe
// alike on both backends, dream masks replayed from the device; and only the scores come back. The
// patterns recall keeps stay on the device within the bytes it allows (recall_cache_bytes).
import { afterAll, describe, expect, test } from 'vitest'
import type { AdjointRunner } from '../field/backend.js'
import type { Engine } from '../field/engine.js'
import type { GpuAdjointRunner } from '../gpu/adjoint.js'
import { GpuFieldBackend } from '../gpu/backend.js'
import { keptDevice } from '../gpu/device.js'
import { nodeGpu } from '../gpu/webgpu.node.js'
import { engineOn, gpuBackend } from '../../testing/backends.js'
import { paramsFor, randomField, TWELVE } from '../../testing/fixtures.js'
import { keptPatternBytes, type PathPlan } from '../field/backend.js'
import { negLaplacian } from './adjoint.js'
import { followPath } from './path.js'
import { NULL_PATTERNS, nullText } from './recall.js'
import { textParts3 } from '../encode/text.js'
import { CpuAdjointRunner } from './runner.js'

// SwiftShader takes up to ~0.1 s a dispatch on a loaded 2-core machine, and a dream is 300 steps
const GPU_TEST_TIMEOUT = 300_000
const opened: { destroy(): void }[] = []
afterAll(() => opened.forEach((b) => b.destroy()))

const nulls = Array.from({ length: NULL_PATTERNS }, (_, k) => nullText(k))
/**
 * What making these texts' wavefronts on the device, in one call of its encoder, reads back: each
 * part's energy (8 bytes), in one read; the wavefronts stay there. Up go the parts' inputs (one 64-byte
 * block each, at N = 32), their places, two uniform slots and a scale each.
 */
const madeOnDevice = (texts: readonly string[]) => {
  const parts = texts.reduce((s, t) => s + textParts3(t).inputs.length, 0)
  return { reads: 1, bytes: 8 * parts, sent: parts * (64 + 8 + 2 * 256 + 4) }
}

/** Steps, a scaling and readings in between, the same on either runner. */
async function sweep(r: AdjointRunner, mask: Float32Array): Promise<Float64Array> {
  r.read()
  for (let i = 0; i < 40; i++) r.step()
  r.read()
  r.scale(mask)
  for (let i = 0; i < 30; i++) r.step()
  r.read()
  r.read() // a second reading of the same moment is the same
  r.read([2, 0]) // a reading of some patterns only: the rest read 0
  r.read([])
  return r.results()
}

describe('the adjoint sweep on the GPU against its CPU twin', () => {
  // N = 100, six patterns: a reading's workgroups cover 16 x 64 cells in two rows of tiles, the last
  // partial, and its invocations score four patterns, then two (shaders/adjoint.wgsl PER_INVOCATION)
  test.each([
    [32, 3],
    [100, 6],
  ])(
    'every reading of every pattern agrees, through steps and a dream mask, on a damped, viscous, leaky material (N = %i, %i patterns)',
    {
      timeout: GPU_TEST_TIMEOUT,
    },
    async (n, count) => {
      const params = { ...paramsFor(n), noise: 0, nonlinearity: 0 }
      const u = randomField(n, 1, 3)
      const prev = randomField(n, 1, 4)
      const patterns = Array.from({ length: count }, (_, k) => randomField(n, 1, 5 + k))
      const mask = randomField(n, 1, 8).map((v) => 0.6 + 0.4 * Math.tanh(v))
      const gpu = await gpuBackend(n, 1)
      opened.push(gpu)
      await gpu.load(u, prev)
      const got = await sweep(await gpu.adjoint!(0, params, patterns, 6), mask)
      const want = await sweep(new CpuAdjointRunner(params, u, prev, patterns), mask)
      expect(got.length).toBe(6 * count)
      // float32 on both, but the CPU twin rounds each line's double-precision sum once, the GPU every
      // operation, and the readout sums in tiles: 1e-4 of the largest reading covers 70 steps of that
      const scale = Math.max(...want.map(Math.abs))
      expect(scale).toBeGreaterThan(0.1)
      want.forEach((w, k) => expect(Math.abs(got[k] - w)).toBeLessThanOrEqual(1e-4 * scale))
      expect(Math.abs(want[0] - want[3 * count])).toBeGreaterThan(1e-3 * scale) // the sweep changed what it reads
      const reading = (k: number) => [...got.subarray(k * count, (k + 1) * count)]
      expect(reading(3)).toEqual(reading(2))
      expect(reading(4)).toEqual(reading(3).map((v, p) => (p === 0 || p === 2 ? v : 0)))
      expect(reading(5).every((v) => v === 0)).toBe(true)
    },
  )
})

describe('patterns past one storage binding', () => {
  test('are read through windows of the patterns buffer, a dispatch each: the same readings and products, bit for bit, as through one binding', {
    timeout: GPU_TEST_TIMEOUT,
  }, async () => {
    const n = 32
    const params = { ...paramsFor(n), noise: 0, nonlinearity: 0 }
    const [u, prev] = [randomField(n, 1, 3), randomField(n, 1, 4)]
    const patterns = [5, 6, 7, 8, 9, 10].map((s) => randomField(n, 1, s))
    const kept = (await keptDevice(await nodeGpu()))!
    const run = async (bindingBytes?: number) => {
      const gpu = await GpuFieldBackend.create(kept.device, n, 1, kept.choice.name, { bindingBytes })
      opened.push(gpu)
      await gpu.load(u, prev)
      const before = gpu.transfers.dispatches
      const r = await gpu.adjoint(0, params, patterns, 6)
      r.read()
      for (let i = 0; i < 20; i++) r.step()
      r.read([5, 0, 3]) // out of order, across every window
      r.product(4, [0, 5, 2]) // q in one window, the others in three
      r.product(1, [1])
      r.read([])
      r.read()
      const scores = [...(await r.results())]
      r.destroy()
      return { scores, dispatches: gpu.transfers.dispatches - before }
    }
    const one = await run()
    // room for two patterns a binding (each 4 KiB at N = 32): six patterns take three windows
    const windows = await run(2.5 * 4 * n * n)
    expect(windows.scores).toEqual(one.scores)
    expect(one.scores.filter((v) => v !== 0).length).toBe(6 + 3 + 3 + 1 + 6)
    // readings of all six: three windows, not one (2 dispatches a window); [5, 0, 3]: three; [0, 5, 2]: three
    expect(windows.dispatches - one.dispatches).toBe(2 * (2 + 2 + 2 + 2))
  })
})

describe('the patterns a sweep keeps on the device', () => {
  test('at most the bytes the sweep allows, least recently used dropped first: with room for four patterns, sweeps over A, B, then A upload A twice; control, with the default room A goes up once; both read A alike', {
    timeout: GPU_TEST_TIMEOUT,
  }, async () => {
    const n = 32
    const pattern = 4 * n * n
    const params = { ...paramsFor(n), noise: 0, nonlinearity: 0 }
    const gpu = await gpuBackend(n, 1)
    opened.push(gpu)
    await gpu.load(randomField(n, 1, 3), randomField(n, 1, 4))
    /** One reading of `patterns`, all kept; its scores and the bytes the sweep sent up. */
    const sweepOver = async (patterns: Float32Array[], bytes: number) => {
      const before = gpu.transfers!.bytes_written
      const runner = await gpu.adjoint!(0, params, patterns, 1, undefined, { from: 0, bytes })
      try {
        runner.read()
        return { scores: [...(await runner.results())], sent: gpu.transfers!.bytes_written - before }
      } finally {
        runner.destroy()
      }
    }
    const four = (seed: number) => [0, 1, 2, 3].map((k) => randomField(n, 1, seed + k))
    const run = async (bytes: number) => {
      const [a, b] = [four(10), four(20)]
      return [await sweepOver(a, bytes), await sweepOver(b, bytes), await sweepOver(a, bytes)]
    }
    const small = await run(4 * pattern)
    const control = await run(keptPatternBytes(pattern))
    for (const sweeps of [small, control]) {
      // each sweep's first sight of its four patterns uploads them
      expect(sweeps[0].sent).toBeGreaterThanOrEqual(4 * pattern)
      expect(sweeps[1].sent).toBeGreaterThanOrEqual(4 * pattern)
      expect(sweeps[2].scores).toEqual(sweeps[0].scores)
    }
    // B pushed A out of room for four: A goes up again; the default room keeps both
    expect(small[2].sent).toBeGreaterThanOrEqual(4 * pattern)
    expect(control[2].sent).toBeLessThan(pattern)
    expect(control[2].scores).toEqual(small[2].scores)
  })

  test("the engine's recall_cache_bytes reaches the device: twelve memories written at one moment stay there as the write made them, none made again; with room for four patterns, the write keeps the last four and the first question makes the other eight on the device; the same hits", {
    timeout: GPU_TEST_TIMEOUT,
  }, async () => {
    const pattern = 4 * 32 * 32
    const ask = async (recall_cache_bytes?: number) => {
      const e = await engineOn('gpu', { size: 32, material: 'ideal_resonator', seed: 9, timeline_interval: 0, recall_cache_bytes })
      opened.push(e)
      await e.writeMany(TWELVE.map((text) => ({ text })))
      await e.step(20)
      const first = e.transfers()!
      await e.recall(TWELVE[3], 3)
      const firstSent = e.transfers()!.bytes_written - first.bytes_written
      await e.step(1) // the next question splits the moment again, over all twelve patterns
      const before = e.transfers()!
      const { hits } = await e.recall(TWELVE[3], 3)
      const after = e.transfers()!
      return { hits, firstSent, sent: after.bytes_written - before.bytes_written, reads: after.reads - before.reads }
    }
    const [small, control] = [await ask(4 * pattern), await ask()]
    // the first question makes only the null patterns on the device (the question is a kept text): no
    // pattern goes up, where the host's encoding sent the 29 it reads (12 memories, the 16 null patterns
    // and the question's); what goes up is the encoding's inputs and the readings' slots
    expect(control.firstSent).toBeGreaterThanOrEqual(madeOnDevice(nulls).sent)
    expect(control.firstSent).toBeLessThan((1 + NULL_PATTERNS) * pattern)
    // room for four: the first eight memories (the question's text among them) are made on the device
    expect(small.firstSent - control.firstSent).toBeGreaterThanOrEqual(madeOnDevice(TWELVE.slice(0, 8)).sent)
    // asked after a step, nothing is made on either (a sweep's own patterns stay until others need the
    // room): the readings' slots go up, and the scores come back
    for (const q of [small, control]) expect(q.reads).toBe(1)
    expect(control.sent).toBeLessThan(pattern)
    expect(small.hits[0]?.text).toBe(TWELVE[3])
    // the patterns made again come from the same kernels as the write's: the same bits
    expect(small.hits).toEqual(control.hits)
  })
})

describe("a question's rest products on the GPU (the `product` kernel) against its CPU twin", () => {
  test('<Q w_q, w_p> of one pattern with those listed: the CPU twin is Q applied on the host and summed in float64, the GPU within 1e-5 of the largest; static, the same before and after steps', {
    timeout: GPU_TEST_TIMEOUT,
  }, async () => {
    // not a multiple of the tile (the border tiles are partial), two rows of a reading's 16 x 64 tiles,
    // and six patterns: a product's invocations score four, then one
    const n = 100
    const params = { ...paramsFor(n), noise: 0, nonlinearity: 0 }
    const [u, prev] = [randomField(n, 1, 3), randomField(n, 1, 4)]
    const patterns = [5, 6, 7, 8, 9, 10].map((s) => randomField(n, 1, s))
    const gpu = await gpuBackend(n, 1)
    opened.push(gpu)
    await gpu.load(u, prev)
    const run = async (r: AdjointRunner) => {
      const rows = [r.product(1, [0, 2, 1, 5, 4]), r.read([0])]
      for (let i = 0; i < 10; i++) r.step()
      rows.push(r.product(2, [1]))
      return { rows, values: await r.results() }
    }
    const got = await run(await gpu.adjoint!(0, params, patterns, 3))
    const want = await run(new CpuAdjointRunner(params, u, prev, patterns))
    const product = (q: number, p: number) => {
      const qw = negLaplacian(patterns[q], n)
      return patterns[p].reduce((s, w, i) => s + w * qw[i], 0)
    }
    const at = (r: { values: Float64Array; rows: number[] }, row: number, p: number) => r.values[r.rows[row] * patterns.length + p]
    const exact = [product(1, 0), product(1, 1), product(1, 2), product(1, 5), product(1, 4), product(2, 1)]
    const listed = (r: typeof got) => [at(r, 0, 0), at(r, 0, 1), at(r, 0, 2), at(r, 0, 5), at(r, 0, 4), at(r, 2, 1)]
    expect(listed(want)).toEqual(exact)
    const scale = Math.max(...exact.map(Math.abs))
    expect(scale).toBeGreaterThan(1)
    listed(got).forEach((g, k) => expect(Math.abs(g - exact[k])).toBeLessThanOrEqual(1e-5 * scale))
    // Q is symmetric: <Q w_1, w_2> = <Q w_2, w_1>, taken after the steps; the patterns not listed read 0
    expect(Math.abs(at(got, 2, 1) - at(got, 0, 2))).toBeLessThanOrEqual(1e-5 * scale)
    expect(at(got, 2, 0)).toBe(0)
    expect(at(got, 0, 3)).toBe(0)
    // control: the products differ from one another far more than the tolerance
    expect(Math.abs(exact[0] - exact[2])).toBeGreaterThan(1e-2 * scale)
    // the reading between them is the sweep's, as without them
    expect(Math.abs(at(got, 1, 0) - at(want, 1, 0))).toBeLessThanOrEqual(1e-4 * Math.abs(at(want, 1, 0)))
  })
})

describe("a saturating field's path rerun on the GPU", () => {
  test("the secant kernel's k, step by step, is path.ts's k: from a kept device state and a host one, with noise and a change of constants", {
    timeout: GPU_TEST_TIMEOUT,
  }, async () => {
    const n = 32
    const gpu = (await gpuBackend(n, 1)) as GpuFieldBackend
    opened.push(gpu)
    const start = { u: randomField(n, 1, 11), prev: randomField(n, 1, 12) }
    await gpu.load(start.u, start.prev)
    const kept = gpu.snapshot(0)
    const saturating = { ...paramsFor(n), nonlinearity: 0.8, noise: 1e-3 }
    const plan: PathPlan = {
      from: 100,
      seed: 7,
      ops: [
        { kind: 'run', to: 100, params: saturating },
        { kind: 'reset', saved: kept },
        { kind: 'run', to: 120, params: saturating },
        { kind: 'reset', saved: { u: randomField(n, 1, 13), prev: randomField(n, 1, 14) } },
        { kind: 'run', to: 135, params: { ...saturating, nonlinearity: 0.3, c2: 0.2 } },
      ],
    }
    const runner = (await gpu.adjoint(0, paramsFor(n), [randomField(n, 1, 5)], 1, plan)) as GpuAdjointRunner
    const path = runner.path!
    const got = new Float32Array(await gpu.transfers.read(path.k, 0, 35 * n * n * 4, gpu.device.createCommandEncoder(), () => undefined))
    runner.destroy()
    // the kept device state is the one loaded
    const want = await followPath(plan, n, (s) => Promise.resolve('u' in s ? s : start))
    expect(path.steps).toBe(35)
    expect(want.k.length).toBe(35)
    let worst = 0
    let scale = 0
    want.k.forEach((k, j) =>
      k!.forEach((v, i) => ((worst = Math.max(worst, Math.abs(got[j * n * n + i] - v))), (scale = Math.max(scale, v)))),
    )
    expect(scale).toBeGreaterThan(0.05)
    // float32 steps on both, summed in different orders: 35 steps keep k within 1e-4 of its largest
    expect(worst).toBeLessThan(1e-4 * scale)
    // control: the same rows a step apart differ far more (k follows the path, not a constant)
    let moved = 0
    for (let i = 0; i < n * n; i++) moved = Math.max(moved, Math.abs(got[5 * n * n + i] - got[4 * n * n + i]))
    expect(moved).toBeGreaterThan(100 * worst)
  })
})

describe('recall and probe on the GPU', () => {
  const texts = [
    'amber light on the hill',
    'cold river stones',
    'a lantern in the fog',
    'seven crows at dusk',
    'salt on the window',
    'the quiet engine room',
  ]
  async function program(backend: 'cpu' | 'gpu', material = 'ideal_resonator'): Promise<Engine> {
    const e = await engineOn(backend, { size: 32, material, seed: 9, timeline_interval: 0 })
    opened.push(e)
    for (const t of texts) {
      await e.write(t)
      await e.step(5)
    }
    await e.dream('deep') // its masks stay on the GPU and the sweep replays them there
    await e.step(20)
    return e
  }

  test("rank the same memories with the same scores as the CPU, and read back only the scores: the query and null patterns at each moment, a memory's own pattern only where it could be a hit; asked again, the query alone", {
    timeout: GPU_TEST_TIMEOUT,
  }, async () => {
    const [gpu, cpu] = [await program('gpu'), await program('cpu')]
    expect(gpu.history.some((h) => h.kind === 'scale' && !(h.mask instanceof Float32Array))).toBe(true)
    const before = gpu.transfers()!
    const got = await gpu.recall('cold river', 3)
    const after = gpu.transfers()!
    const want = await cpu.recall('cold river', 3)
    expect(want.hits.length).toBeGreaterThan(0)
    expect(want.hits[0].text).toBe('cold river stones')
    expect(got.hits.map((h) => h.memory)).toEqual(want.hits.map((h) => h.memory))
    got.hits.forEach((h, k) => {
      expect(Math.abs(h.score - want.hits[k].score)).toBeLessThan(1e-3 * Math.abs(want.hits[0].score))
      expect(h.match).toBe(h.score)
      expect(Math.abs(h.strength - want.hits[k].strength)).toBeLessThan(1e-3 * Math.abs(want.hits[k].strength))
    })
    expect(got.capacity).toBe(want.capacity)
    // the question's and the null patterns' wavefronts are made on the device (engine/gpu/encode3.ts:
    // one read, the parts' energies), the memories' were kept there by their writes; the sweeps read one reading per write
    // moment (six, one memory each) of the query and the null patterns, and each one's rest energy (a
    // product with itself: two slots); then a second sweep each candidate memory's own pattern at its
    // moment only, its energy, and its products with the null patterns (a reading per null pattern:
    // its slot, then a product per candidate): 4 bytes a score
    const made = madeOnDevice(['cold river', ...nulls])
    expect(after.reads - before.reads).toBe(2 + made.reads)
    const swept = after.bytes_read - before.bytes_read - made.bytes
    const second = swept / 4 - texts.length * (1 + NULL_PATTERNS) - 2 * (1 + NULL_PATTERNS)
    const candidates = (second - NULL_PATTERNS) / (3 + NULL_PATTERNS)
    expect(Number.isInteger(candidates) && candidates >= 1 && candidates <= texts.length).toBe(true)
    // control: the field the CPU sweep would have read back first
    expect(swept).toBeLessThan((2 * 32 * 32 * 4) / 10)
    // the same field asked again: what recall kept of each moment stands, so only the query is read,
    // with its energy (a question's pattern is made anew, on the device: one read more)
    const again = gpu.transfers()!
    expect((await gpu.recall('cold river', 3)).hits).toEqual(got.hits)
    expect(gpu.transfers()!.bytes_read - again.bytes_read).toBe(texts.length * 4 + 2 * 4 + madeOnDevice(['cold river']).bytes)
    // no pattern goes up, ever: the first question sent the encoding's inputs of its own and the null
    // patterns' texts, and the readings' slots; control, the 17 patterns it read, which the host's
    // encoding would have sent
    const pattern = 32 * 32 * 4
    expect(after.bytes_written - before.bytes_written).toBeGreaterThanOrEqual(made.sent)
    expect(after.bytes_written - before.bytes_written).toBeLessThan((1 + NULL_PATTERNS) * pattern)
    // after a step every moment is read and split again: the question's pattern is made again (its
    // encoding's inputs and uniforms, 4 writes), the readings' slots go up in a write or two a submit
    for (const e of [gpu, cpu]) await e.step(1)
    const stepped = gpu.transfers()!
    const [g1, c1] = [await gpu.recall('cold river', 3), await cpu.recall('cold river', 3)]
    const done = gpu.transfers()!
    expect(g1.hits.map((h) => h.memory)).toEqual(c1.hits.map((h) => h.memory))
    g1.hits.forEach((h, k) => expect(Math.abs(h.score - c1.hits[k].score)).toBeLessThan(1e-3 * Math.abs(c1.hits[0].score)))
    expect(done.bytes_written - stepped.bytes_written).toBeLessThan(3 * pattern)
    expect(done.writes - stepped.writes).toBeLessThanOrEqual(10 + 9)

    const [pg, pc] = [await gpu.probe('a lantern in the fog'), await cpu.probe('a lantern in the fog')]
    expect(pg.step).toBe(pc.step)
    expect(Math.abs(pg.resonance - pc.resonance)).toBeLessThan(1e-3 * Math.abs(pc.resonance))
    expect(pc.resonance).toBeGreaterThan(pc.noise_floor)
  })

  test("a change of material on the way (ideal_resonator, then vacuum): the GPU sweep takes the constants in force then, to the CPU engine's scores", {
    timeout: GPU_TEST_TIMEOUT,
  }, async () => {
    const [gpu, cpu] = [await program('gpu'), await program('cpu')]
    for (const e of [gpu, cpu]) {
      e.setMaterial('vacuum')
      await e.step(30)
    }
    const [pg, pc] = [await Promise.all(texts.map((t) => gpu.probe(t))), await Promise.all(texts.map((t) => cpu.probe(t)))]
    const scale = Math.max(...pc.map((p) => Math.abs(p.resonance)))
    expect(scale).toBeGreaterThan(0)
    pg.forEach((p, k) => expect(Math.abs(p.resonance - pc[k].resonance)).toBeLessThan(1e-3 * scale))
  })

  test("a saturating field (cold europium), through a deep dream and a change of temperature and of material: recall follows its path on the GPU to the CPU engine's scores, reading back only the scores", {
    timeout: GPU_TEST_TIMEOUT,
  }, async () => {
    const [gpu, cpu] = [await program('gpu', 'europium_crystal'), await program('cpu', 'europium_crystal')]
    for (const e of [gpu, cpu]) {
      e.setTemperature(20)
      await e.step(10)
      e.setMaterial('ideal_resonator')
      await e.step(10)
      e.setMaterial('europium_crystal')
      await e.step(10)
    }
    const states = gpu.history.filter((h) => h.kind === 'state')
    expect(states.length).toBeGreaterThan(texts.length) // one after each write and after the dream's edit
    expect(states.every((h) => h.kind === 'state' && !('u' in h.saved))).toBe(true)
    const before = gpu.transfers()!
    const got = await gpu.recall('cold river', 3)
    const after = gpu.transfers()!
    const want = await cpu.recall('cold river', 3)
    // at N = 32 the deep dream leaves nothing above the noise floor here: the probes below carry the scores
    expect(got.hits.map((h) => h.memory)).toEqual(want.hits.map((h) => h.memory))
    expect(got.capacity).toBe(want.capacity)
    // the query and null patterns at each moment, and, if a reading there could make a hit, a second
    // sweep of the candidates' own patterns (counted as in the test above: 1 with encoding 3, none
    // with 2); control: the field and its kept states the CPU twin read before
    // the question and the null patterns (new at this material's wave speed) made on the device, as above
    const made = madeOnDevice(['cold river', ...nulls])
    expect(after.reads - before.reads - made.reads).toBeLessThanOrEqual(2)
    // the query's energy, and the null patterns', two slots each
    const swept = after.bytes_read - before.bytes_read - made.bytes
    const second = swept / 4 - texts.length * (1 + NULL_PATTERNS) - 2 * (1 + NULL_PATTERNS)
    const candidates = second && (second - NULL_PATTERNS) / (3 + NULL_PATTERNS)
    expect(Number.isInteger(candidates) && candidates >= 0 && candidates <= texts.length, `${second} scores past the first sweep`).toBe(
      true,
    )
    expect(swept).toBeLessThan((2 * 32 * 32 * 4) / 10)
    // every text's probe, on both: the path rerun on the device gives the CPU's numbers
    const [pg, pc] = [await Promise.all(texts.map((t) => gpu.probe(t))), await Promise.all(texts.map((t) => cpu.probe(t)))]
    const scale = Math.max(...pc.map((p) => Math.abs(p.resonance)))
    expect(scale).toBeGreaterThan(0)
    pg.forEach((p, k) => expect(Math.abs(p.resonance - pc[k].resonance)).toBeLessThan(1e-3 * scale))
  })
})
