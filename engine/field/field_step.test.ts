// The field kernel exists three times: shaders/field_step.wgsl (GPU), engine/cpu/simd/assembly/field.ts
// (the CPU backend, WASM SIMD) and engine/cpu/field_step.ts (the float32 reference). Same inputs
// through each, with every term of the step switched on: noise, saturation, viscosity, a leaky sponge.
import { afterAll, describe, expect, test } from 'vitest'
import { energyReference, LEDGER, stepReference } from '../cpu/field_step.js'
import { cpuBackend, gpuBackend, watchCompiles } from '../../testing/backends.js'
import { paramsFor, randomField } from '../../testing/fixtures.js'
import type { FieldBackend, LedgerSample } from './backend.js'
import { lowbias32, noiseKey } from './noise.js'
import { drawTable, STEP_TILE, STEPS_PER_DISPATCH, type StepParams, stepGroups, stepTable } from './params.js'
import { type AdapterChoice, findAdapter, openDevice } from '../gpu/device.js'
import { GpuFieldBackend } from '../gpu/backend.js'
import { DEFERRED_MAX } from '../gpu/transfers.js'
import { forgetKernels } from '../gpu/context.js'
import { nodeGpu } from '../gpu/webgpu.node.js'

const SEED = 1234
const SAMPLE_INTERVAL = 250

/** Runs the reference for `steps` steps and returns the state, the ledger and the sampled energies. */
function reference(
  n: number,
  fields: number,
  steps: number,
  params = paramsFor(n, fields),
  interval = SAMPLE_INTERVAL,
  start = startOf(n, fields),
) {
  const p = { ...params }
  let [cur, prev]: Float32Array[] = start.map((a) => a.slice())
  let next: Float32Array = new Float32Array(cur.length)
  const ledger = new Float64Array(fields * 4)
  const energies: Float64Array[] = []
  const books: Float64Array[] = []
  for (let i = 0; i < steps; i++) {
    p.noise_key = noiseKey(SEED, i)
    stepReference(prev, cur, next, p, ledger)
    ;[prev, cur, next] = [cur, next, prev]
    if ((i + 1) % interval === 0) {
      energies.push(energyReference(prev, cur, p))
      books.push(ledger.slice())
    }
  }
  return { u: cur, prev, ledger, energies, books }
}

/** The state the runs start from: u and u_prev. */
function startOf(n: number, fields: number): [Float32Array, Float32Array] {
  return [randomField(n, fields, 1), randomField(n, fields, 2)]
}

async function run(
  backend: FieldBackend,
  steps: number,
  params = paramsFor(backend.n, backend.fields),
  interval = SAMPLE_INTERVAL,
  start = startOf(backend.n, backend.fields),
): Promise<{ u: Float32Array; ledger: Float64Array; samples: LedgerSample[] }> {
  await backend.load(...start)
  const samples = await backend.step({ steps, first_step: 0, seed: SEED, sample_interval: interval, params })
  return { u: (await backend.read()).u, ledger: await backend.ledger(), samples }
}

function maxAbs(a: Float32Array): number {
  return a.reduce((m, v) => Math.max(m, Math.abs(v)), 0)
}

function maxDiff(a: Float32Array, b: Float32Array): number {
  let d = 0
  for (let i = 0; i < a.length; i++) d = Math.max(d, Math.abs(a[i] - b[i]))
  return d
}

const relative = (a: number, b: number) => Math.abs(a - b) / Math.max(Math.abs(a), Math.abs(b), 1e-30)

const opened: { destroy(): void }[] = []
afterAll(() => opened.forEach((b) => b.destroy()))

/** A GPU backend on the test adapter, its step summing tiles with subgroups or, forced, through shared memory. */
async function gpuWith(
  n: number,
  subgroups: boolean,
  ringBytes?: number,
  rows?: number,
): Promise<{ gpu: GpuFieldBackend; choice: AdapterChoice }> {
  const choice = (await findAdapter(await nodeGpu()))!
  const device = await openDevice({ ...choice, subgroups: subgroups && choice.subgroups })
  // a backend leaves its device open (engine/gpu/device.ts keptDevice): this one is the test's own
  opened.push(device)
  const gpu = await GpuFieldBackend.create(device, n, 1, choice.name, { ringBytes, rows })
  opened.push(gpu)
  return { gpu, choice }
}

describe('WGSL on WebGPU against the CPU twin', () => {
  // The WGSL does the reference's float32 operations in the reference's order. On SwiftShader it
  // matches bit for bit; a driver that fuses a multiply-add (Vulkan allows it) differs by an ulp
  // per operation, which a damped, stable step keeps to about 1e-6 of the amplitude after 1,000
  // steps. 1e-5 of the peak leaves room for that and still catches any wrong term or order.
  const FIELD_TOLERANCE = 1e-5
  // Ledgers and energies are float32 tile sums on the GPU and float64 sums on the CPU.
  const SUM_TOLERANCE = 1e-4

  for (const [label, n, fields] of [
    ['one 32 x 32 field', 32, 1],
    ['a batch of three 24 x 24 fields', 24, 3],
  ] as const) {
    test(`${label}: 1,000 steps agree`, async () => {
      const gpu = await gpuBackend(n, fields)
      opened.push(gpu)
      expect(gpu.kind).toBe('gpu')
      // the backend as users get it sums its tiles with subgroups wherever the adapter offers them
      const choice = (await findAdapter(await nodeGpu()))!
      expect((gpu as GpuFieldBackend).device.features.has('subgroups')).toBe(choice.subgroups)
      const got = await run(gpu, 1000)
      const want = reference(n, fields, 1000)
      expect(maxAbs(want.u)).toBeGreaterThan(0.01) // the field is alive, so the comparison means something
      expect(maxDiff(got.u, want.u)).toBeLessThanOrEqual(FIELD_TOLERANCE * maxAbs(want.u))
      for (let i = 0; i < want.ledger.length; i++) expect(relative(got.ledger[i], want.ledger[i])).toBeLessThan(SUM_TOLERANCE)
      expect(got.samples.map((s) => s.step)).toEqual([250, 500, 750, 1000])
      got.samples.forEach((s, k) => s.fields.forEach((v, f) => expect(relative(v[0], want.energies[k][f])).toBeLessThan(SUM_TOLERANCE)))
      // every term did work: noise, saturation and the sponge are all in play
      for (let f = 0; f < fields; f++) for (const c of Object.values(LEDGER)) expect(Math.abs(want.ledger[f * 4 + c])).toBeGreaterThan(0)
    })
  }

  test('an engine without a timeline: the step compiles without its sampling code, alone, to the bits and books of the whole kernel; a run that samples compiles the whole one', async () => {
    const n = 96
    const params: StepParams = { ...paramsFor(n), sponge_width: 20, sponge_inv_width: Math.fround(1 / 20) }
    const choice = (await findAdapter(await nodeGpu()))!
    const device = await openDevice(choice)
    opened.push(device)
    const compiled: string[] = []
    watchCompiles(device, (d) => {
      if (d.compute.entryPoint === 'step') compiled.push(`SAMPLED=${d.compute.constants?.SAMPLED}`)
    })
    const backend = async (sampling: boolean) => {
      const b = await GpuFieldBackend.create(device, n, 1, choice.name, { sampling })
      opened.push(b)
      return b
    }
    const plain = await backend(false)
    expect(compiled).toEqual(['SAMPLED=0'])
    const a = await run(plain, 300, params, 0)
    // a run that samples, on the backend opened without: the whole kernel, compiled then
    const sampled = await run(plain, 300, params, 100)
    expect(sampled.samples.map((s) => s.step)).toEqual([100, 200, 300])
    expect(compiled).toEqual(['SAMPLED=0', 'SAMPLED=1'])
    expect(maxDiff(sampled.u, a.u)).toBe(0)
    // a backend opened with a timeline finds the whole kernel made (once a device)
    const whole = await backend(true)
    expect(compiled).toEqual(['SAMPLED=0', 'SAMPLED=1'])
    const b = await run(whole, 300, params, 0)
    expect(maxAbs(a.u)).toBeGreaterThan(0.01)
    expect(maxDiff(a.u, b.u)).toBe(0)
    expect([...a.ledger]).toEqual([...b.ledger])
    // the device's kernels forgotten (as when another backend fails to open): each backend keeps its own
    forgetKernels(device)
    await run(plain, 10, params, 0)
    await run(whole, 10, params, 10)
    expect(compiled).toEqual(['SAMPLED=0', 'SAMPLED=1'])
  })

  test("a ring of 3 slots for the tiles' ledger terms (folded mid-submit, as at N = 2048): 1,000 steps keep the books", async () => {
    const n = 32
    const { gpu } = await gpuWith(n, true, 3 * 4 * stepGroups(n)[0] * stepGroups(n)[1] * 4)
    const got = await run(gpu, 1000)
    const want = reference(n, 1, 1000)
    expect(maxDiff(got.u, want.u)).toBeLessThanOrEqual(FIELD_TOLERANCE * maxAbs(want.u))
    for (let i = 0; i < want.ledger.length; i++) expect(relative(got.ledger[i], want.ledger[i])).toBeLessThan(SUM_TOLERANCE)
    got.samples.forEach((s, k) => expect(relative(s.fields[0][0], want.energies[k][0])).toBeLessThan(SUM_TOLERANCE))
  })

  test('N = 768, 2,304 tiles a field: a timeline sample sums its rows of tiles in two passes (two chunks a row), to the same energy and books', async () => {
    const n = 768
    const gpu = await gpuBackend(n, 1)
    opened.push(gpu)
    const got = await run(gpu, 10, paramsFor(n), 5)
    const want = reference(n, 1, 10, paramsFor(n), 5)
    expect(maxDiff(got.u, want.u)).toBeLessThanOrEqual(FIELD_TOLERANCE * maxAbs(want.u))
    expect(got.samples.map((s) => s.step)).toEqual([5, 10])
    got.samples.forEach((s, k) => {
      expect(relative(s.fields[0][0], want.energies[k][0])).toBeLessThan(SUM_TOLERANCE)
      // bulk, boundary, saturation and noise work, each against the reference's running books then
      for (let c = 0; c < 4; c++) expect(relative(s.fields[0][1 + c], want.books[k][c])).toBeLessThan(SUM_TOLERANCE)
    })
  })

  // N = 96 is 3 x 6 step tiles of 32 x 16 (STEP_TILE). With a sponge 20 cells wide, the step meets all
  // three kinds of workgroup: the 14 at the edge (bounds-checked reads), the 2 inside whose cells are in
  // the sponge (x 32..63, y 16..31 and 64..79: unchecked reads, the sponge computed) and the 2 in the
  // middle past it (y 32..63: unchecked, no sponge).
  const wideN = 96
  const wide: StepParams = { ...paramsFor(wideN), sponge_width: 20, sponge_inv_width: Math.fround(1 / 20) }
  let wideRun: ReturnType<typeof reference> | undefined
  const wideReference = () => (wideRun ??= reference(wideN, 1, 1000, wide))
  // rows an invocation: 4 below N = 2048 (stepRows), STEP_TILE's from there
  for (const [subgroups, rows] of [
    [true, 4],
    [true, STEP_TILE.rows],
    [false, STEP_TILE.rows],
  ] as const) {
    test(`tiles at the edge, inside the sponge and past it, tile sums ${subgroups ? 'by subgroups where offered' : 'through shared memory (forced)'}, ${rows} rows an invocation: 1,000 steps agree`, async () => {
      const { gpu, choice } = await gpuWith(wideN, subgroups, undefined, rows)
      expect(gpu.device.features.has('subgroups')).toBe(subgroups && choice.subgroups)
      const got = await run(gpu, 1000, wide)
      const wideWant = wideReference()
      expect(maxAbs(wideWant.u)).toBeGreaterThan(0.01)
      expect(maxDiff(got.u, wideWant.u)).toBeLessThanOrEqual(FIELD_TOLERANCE * maxAbs(wideWant.u))
      for (let i = 0; i < 4; i++) expect(relative(got.ledger[i], wideWant.ledger[i])).toBeLessThan(SUM_TOLERANCE)
      got.samples.forEach((s, k) => expect(relative(s.fields[0][0], wideWant.energies[k][0])).toBeLessThan(SUM_TOLERANCE))
      // the middle tiles moved: the comparison covers the unchecked, sponge-free path
      let middle = 0
      for (let y = 2 * STEP_TILE.h; y < 4 * STEP_TILE.h; y++)
        for (let x = STEP_TILE.w; x < 2 * STEP_TILE.w; x++) middle = Math.max(middle, Math.abs(wideWant.u[y * wideN + x]))
      expect(middle).toBeGreaterThan(1e-3)
    })
  }
})

describe("a timeline sample's energy taken by the step after it", () => {
  // The sample at a run's last step has no step after it: the energy pass takes it. Three runs of 10
  // steps sample at their ends only (the control); one run of 30 has its first two samples taken by
  // the steps after them: one dispatch fewer each, the same field bit for bit (the step's arithmetic
  // is the same), the same books, and each energy the same sum in other tiles (float32 round-off).
  for (const [label, n, sponge] of [
    ['N = 96, edge, sponge and middle tiles', 96, 20],
    ['N = 768, rows of tiles summed in two chunks', 768, undefined],
  ] as const) {
    test(label, async () => {
      const params: StepParams = sponge
        ? { ...paramsFor(n), sponge_width: sponge, sponge_inv_width: Math.fround(1 / sponge) }
        : paramsFor(n)
      const runs = async (lengths: number[]) => {
        const gpu = await gpuBackend(n, 1)
        opened.push(gpu)
        await gpu.load(randomField(n, 1, 1), randomField(n, 1, 2))
        const before = gpu.transfers!.dispatches
        const samples: LedgerSample[] = []
        let first = 0
        for (const steps of lengths) {
          samples.push(...(await gpu.step({ steps, first_step: first, seed: SEED, sample_interval: 10, params })))
          first += steps
        }
        const dispatches = gpu.transfers!.dispatches - before
        return { samples, dispatches, u: (await gpu.read()).u }
      }
      const [one, control] = [await runs([30]), await runs([10, 10, 10])]
      expect(one.samples.map((s) => s.step)).toEqual([10, 20, 30])
      expect(control.samples.map((s) => s.step)).toEqual([10, 20, 30])
      expect(one.dispatches).toBe(control.dispatches - 2)
      expect(maxDiff(one.u, control.u)).toBe(0)
      one.samples.forEach((s, k) => {
        const c = control.samples[k].fields[0]
        // 1e-7 to 2e-7 apart on SwiftShader at both sizes
        expect(relative(s.fields[0][0], c[0])).toBeLessThan(1e-6)
        expect([...s.fields[0].slice(1)]).toEqual([...c.slice(1)])
      })
      // the last samples were both taken by the energy pass
      expect(one.samples[2].fields[0][0]).toBe(control.samples[2].fields[0][0])
    })
  }
})

describe('the WASM SIMD kernel against the CPU twin', () => {
  // Same float32 operations in the same order, and WebAssembly has no fused multiply-add: equal bit for bit.
  for (const [label, n, fields, threads] of [
    ['one 32 x 32 field, one thread', 32, 1, 1],
    ['a side that is not a multiple of four (30), batched, two threads', 30, 3, 2],
    ['a batch of five 17 x 17 fields, three threads', 17, 5, 3],
  ] as const) {
    test(`${label}: 1,000 steps agree exactly`, async () => {
      const cpu = await cpuBackend(n, fields, threads)
      opened.push(cpu)
      const got = await run(cpu, 1000)
      const want = reference(n, fields, 1000)
      expect(maxDiff(got.u, want.u)).toBe(0)
      // the ledger sums in a different order (vector lanes, threads): float64 round-off only
      for (let i = 0; i < want.ledger.length; i++) expect(relative(got.ledger[i], want.ledger[i])).toBeLessThan(1e-5)
      got.samples.forEach((s, k) => s.fields.forEach((v, f) => expect(relative(v[0], want.energies[k][f])).toBeLessThan(1e-5)))
    })
  }
})

describe('a rerun: fields from `rerun_from` on run the fields before them again with more noise', () => {
  const [n, first] = [24, 2]
  const cells = n * n * first
  const base = paramsFor(n, first)
  const louder = { ...base, noise: Math.fround(base.noise + 0.02) }
  // four fields: the two of `base`, then the same two again with louder's noise, drawing their noise
  const rerun = { ...paramsFor(n, 2 * first), rerun_from: first, rerun_noise: louder.noise }
  const twice = (a: Float32Array) => Float32Array.of(...a, ...a)
  const start = startOf(n, first).map(twice) as [Float32Array, Float32Array]
  const want = reference(n, 2 * first, 1000, rerun, SAMPLE_INTERVAL, start)

  test('the CPU twin: the first fields run as alone, the rerun ones as they would alone with the louder noise, bit for bit', () => {
    const alone = reference(n, first, 1000, base)
    const loud = reference(n, first, 1000, louder)
    expect(maxDiff(want.u.subarray(0, cells), alone.u)).toBe(0)
    expect(maxDiff(want.u.subarray(cells), loud.u)).toBe(0)
    expect([...want.ledger.subarray(4 * first)]).toEqual([...loud.ledger])
    // the control: the louder noise changed them, so the rerun is not a copy of the first run
    expect(maxDiff(loud.u, alone.u)).toBeGreaterThan(1e-3)
  })

  test('the WASM SIMD kernel, two threads: the same bits', async () => {
    const cpu = await cpuBackend(n, 2 * first, 2)
    opened.push(cpu)
    const got = await run(cpu, 1000, rerun, SAMPLE_INTERVAL, start)
    expect(maxDiff(got.u, want.u)).toBe(0)
    for (let i = 0; i < want.ledger.length; i++) expect(relative(got.ledger[i], want.ledger[i])).toBeLessThan(1e-5)
  })

  test('the WGSL kernel: the same numbers', async () => {
    const gpu = await gpuBackend(n, 2 * first)
    opened.push(gpu)
    const got = await run(gpu, 1000, rerun, SAMPLE_INTERVAL, start)
    expect(maxDiff(got.u, want.u)).toBeLessThanOrEqual(1e-5 * maxAbs(want.u))
    for (let i = 0; i < want.ledger.length; i++) expect(relative(got.ledger[i], want.ledger[i])).toBeLessThan(1e-4)
  })
})

describe('draws: each field of a batch draws the random numbers of the field its table names (Engine.extract)', () => {
  const [n, fields] = [24, 4]
  const cells = n * n
  const params = { ...paramsFor(n, fields), noise: Math.fround(0.02) }
  const start = startOf(n, fields)
  const want = reference(n, fields, 600, params, SAMPLE_INTERVAL, start)
  // fields 3 and 0 of the batch, alone in a batch of two, each drawing its field's numbers there
  const draws = Uint32Array.of(3, 0)
  const pick = (a: Float32Array) => Float32Array.of(...a.subarray(3 * cells, 4 * cells), ...a.subarray(0, cells))
  const apart = { ...paramsFor(n, 2), noise: params.noise }
  const partStart = start.map(pick) as [Float32Array, Float32Array]

  /** The reference over the two fields, with the draw table. */
  function part(table: Uint32Array) {
    let [cur, prev] = partStart.map((a) => a.slice())
    let next = new Float32Array(cur.length)
    const ledger = new Float64Array(2 * 4)
    for (let i = 0; i < 600; i++) {
      stepReference(prev, cur, next, { ...apart, noise_key: noiseKey(SEED, i) }, ledger, table)
      ;[prev, cur, next] = [cur, next, prev]
    }
    return { u: cur, ledger }
  }

  test('the CPU twin: the two run as they did in the batch, bit for bit; control, drawing their own numbers they do not', () => {
    const got = part(draws)
    expect(maxDiff(got.u, pick(want.u))).toBe(0)
    expect([...got.ledger]).toEqual([...want.ledger.subarray(12, 16), ...want.ledger.subarray(0, 4)])
    expect(maxDiff(part(Uint32Array.of(0, 1)).u, pick(want.u))).toBeGreaterThan(1e-3)
  })

  test.each([
    ['WASM SIMD, two threads', 0],
    ['WGSL, a step a dispatch', 1],
    ['WGSL, several steps a dispatch', STEPS_PER_DISPATCH],
  ])('the %s kernel: the same numbers', async (_, stepsPerDispatch) => {
    const backend = stepsPerDispatch ? await gpuBackend(n, 2, { stepsPerDispatch }) : await cpuBackend(n, 2, 2)
    opened.push(backend)
    await backend.load(...partStart)
    await backend.step({ steps: 600, first_step: 0, seed: SEED, sample_interval: 0, params: apart, draws: stepTable(draws) })
    const u = (await backend.read()).u
    if (stepsPerDispatch) expect(maxDiff(u, pick(want.u))).toBeLessThanOrEqual(1e-5 * maxAbs(want.u))
    else expect(maxDiff(u, pick(want.u))).toBe(0)
  })
})

describe('a field at rest (EngineOptions.rest_until_injected): held at 0, its ledger terms 0, whatever it held; one that rested keys its noise by its own steps', () => {
  const [n, fields, steps] = [24, 4, 600]
  const params = { ...paramsFor(n, fields), noise: Math.fround(0.02) }
  // every field starts from a random state, the resting ones too: each step holds them at 0
  const start = startOf(n, fields)
  const resting = [false, true, true, false]
  // field 3 rested 37 steps before: its noise at step t is a field's of its own at t - 37
  const table = stepTable(drawTable(fields, fields), resting, [0, 50, 50, 37])
  const cells = n * n
  // the CPU twin's run from `start` under the step's table `t`
  const stepped = (t: Uint32Array) => {
    let [cur, prev] = start.map((a) => a.slice())
    let next = new Float32Array(cur.length)
    const ledger = new Float64Array(fields * 4)
    const energies: Float64Array[] = []
    for (let i = 0; i < steps; i++) {
      stepReference(prev, cur, next, { ...params, noise_key: noiseKey(SEED, i), step: i, seed_key: lowbias32(SEED) }, ledger, t)
      ;[prev, cur, next] = [cur, next, prev]
      if ((i + 1) % SAMPLE_INTERVAL === 0) energies.push(energyReference(prev, cur, params))
    }
    return { u: cur, prev, ledger, energies }
  }
  const want = stepped(table)
  const field = (a: Float32Array, f: number) => a.subarray(f * cells, (f + 1) * cells)

  test('the CPU twin: the resting fields 0 and their ledger rows 0; the one that never rested as in a run where none rests, bit for bit, the one that rested as with its own keys', () => {
    const awake = reference(n, fields, steps, params, SAMPLE_INTERVAL, start)
    // field 3 alone, stepped with the keys of its own steps (noiseKey(seed, t - 37)) from its state
    const own = (() => {
      const one = { ...paramsFor(n, 1), noise: params.noise }
      let [cur, prev] = start.map((a) => field(a, 3).slice())
      let next = new Float32Array(cur.length)
      const ledger = new Float64Array(4)
      for (let i = 0; i < steps; i++) {
        stepReference(prev, cur, next, { ...one, noise_key: noiseKey(SEED, i - 37) }, ledger, [3])
        ;[prev, cur, next] = [cur, next, prev]
      }
      return { u: cur, ledger }
    })()
    expect(maxDiff(field(want.u, 3), own.u)).toBe(0)
    expect([...want.ledger.subarray(12, 16)]).toEqual([...own.ledger])
    // the control: keyed by the batch's steps it would not be
    expect(maxDiff(field(want.u, 3), field(awake.u, 3))).toBeGreaterThan(1e-3)
    for (const f of [1, 2]) {
      expect(maxAbs(field(want.u, f))).toBe(0)
      expect(maxAbs(field(want.prev, f))).toBe(0)
      expect([...want.ledger.subarray(4 * f, 4 * f + 4)]).toEqual([0, 0, 0, 0])
      expect(want.energies.map((e) => e[f])).toEqual([0, 0])
    }
    expect(maxDiff(field(want.u, 0), field(awake.u, 0))).toBe(0)
    expect([...want.ledger.subarray(0, 4)]).toEqual([...awake.ledger.subarray(0, 4)])
    // the control: stepped as the others, the resting fields would not be 0
    expect(maxAbs(field(awake.u, 1))).toBeGreaterThan(1e-3)
  })

  test.each([[[false, false, true, true]], [[true, true, false, false]], [[true, false, true, false]]])(
    'the WASM SIMD kernel, three threads, the resting fields %j: the same bits as the twin',
    async (rests) => {
      const t = stepTable(drawTable(fields, fields), rests, [0, 0, 0, 0])
      const backend = await cpuBackend(n, fields, 3)
      opened.push(backend)
      await backend.load(...start)
      await backend.step({ steps, first_step: 0, seed: SEED, sample_interval: 0, params, draws: t })
      const expected = stepped(t)
      expect(maxDiff((await backend.read()).u, expected.u)).toBe(0)
      const ledger = await backend.ledger()
      for (let i = 0; i < ledger.length; i++) expect(relative(ledger[i], expected.ledger[i]), `ledger term ${i}`).toBeLessThan(1e-5)
    },
  )

  test.each([
    ['WASM SIMD, two threads', 0],
    ['WGSL, a step a dispatch', 1],
    ['WGSL, several steps a dispatch', STEPS_PER_DISPATCH],
  ])('the %s kernel: the same', async (_, stepsPerDispatch) => {
    const backend = stepsPerDispatch ? await gpuBackend(n, fields, { stepsPerDispatch }) : await cpuBackend(n, fields, 2)
    opened.push(backend)
    await backend.load(...start)
    // several steps a dispatch where no timeline is sampled; the others sample one (a resting field's energy read)
    const interval = stepsPerDispatch > 1 ? 0 : SAMPLE_INTERVAL
    const samples = await backend.step({ steps, first_step: 0, seed: SEED, sample_interval: interval, params, draws: table })
    const { u, prev } = await backend.read()
    const ledger = await backend.ledger()
    for (const f of [1, 2]) {
      expect(maxAbs(field(u, f))).toBe(0)
      expect(maxAbs(field(prev, f))).toBe(0)
      expect([...ledger.subarray(4 * f, 4 * f + 4)]).toEqual([0, 0, 0, 0])
    }
    if (interval) expect(samples.map((s) => s.fields[1][0])).toEqual([0, 0])
    if (stepsPerDispatch) expect(maxDiff(u, want.u)).toBeLessThanOrEqual(1e-5 * maxAbs(want.u))
    else expect(maxDiff(u, want.u)).toBe(0)
    for (let i = 0; i < want.ledger.length; i++) expect(relative(ledger[i], want.ledger[i])).toBeLessThan(1e-4)
  })
})

describe('several steps a dispatch (shaders/field_steps.wgsl): the same field and books as one step a dispatch', () => {
  // N = 100: the field's edge cuts its last tiles of 32 x 16; a sponge 20 wide; two fields and their
  // rerun with more noise; runs that start at steps that are not multiples of 4 and end past them; a
  // ring of 6 slots, so that a dispatch of 4 steps that would not fit folds the books first.
  const [n, first] = [100, 2]
  const fields = 2 * first
  const base = { ...paramsFor(n, fields), sponge_width: 20, sponge_inv_width: Math.fround(1 / 20) }
  const params: StepParams = { ...base, rerun_from: first, rerun_noise: Math.fround(base.noise + 0.02) }
  const [tx, ty] = stepGroups(n)
  const ringBytes = 6 * 4 * fields * tx * ty * 4
  // steps and timeline interval: two runs without a timeline, then one with (its steps one a dispatch)
  const runs = [
    [7, 0],
    [263, 0],
    [20, 5],
  ] as const

  async function runOn(device: GPUDevice, stepsPerDispatch: number) {
    const gpu = await GpuFieldBackend.create(device, n, fields, 'the test adapter', { ringBytes, stepsPerDispatch, sampling: false })
    opened.push(gpu)
    await gpu.load(...startOf(n, fields))
    const dispatches: number[] = []
    const samples: LedgerSample[] = []
    let at = 0
    for (const [steps, interval] of runs) {
      const before = gpu.transfers.dispatches
      samples.push(...(await gpu.step({ steps, first_step: at, seed: SEED, sample_interval: interval, params })))
      dispatches.push(gpu.transfers.dispatches - before)
      at += steps
    }
    return { ...(await gpu.read()), ledger: await gpu.ledger(), samples, dispatches }
  }

  for (const subgroups of [true, false]) {
    test(`tile sums ${subgroups ? 'by subgroups where offered' : 'through shared memory (forced)'}: the same bits, in fewer dispatches`, async () => {
      // one device for both, which compiles each kernel once
      const choice = (await findAdapter(await nodeGpu()))!
      const device = await openDevice({ ...choice, subgroups: subgroups && choice.subgroups })
      opened.push(device)
      const one = await runOn(device, 1)
      const several = await runOn(device, STEPS_PER_DISPATCH)
      expect(maxAbs(one.u)).toBeGreaterThan(0.01)
      expect(several.samples.map((s) => s.step)).toEqual([275, 280, 285, 290])
      if (choice.software) {
        expect(maxDiff(several.u, one.u)).toBe(0)
        expect(maxDiff(several.prev, one.prev)).toBe(0)
        expect([...several.ledger]).toEqual([...one.ledger])
        expect(several.samples).toEqual(one.samples)
      } else {
        // the same arithmetic, but a GPU compiler may fuse multiply-adds in one kernel where not in the
        // other (the WGSL allows it): the twins' tolerances (1e-5 of the peak, 1e-4 of a sum)
        expect(maxDiff(several.u, one.u)).toBeLessThanOrEqual(1e-5 * maxAbs(one.u))
        for (let i = 0; i < one.ledger.length; i++) expect(relative(several.ledger[i], one.ledger[i])).toBeLessThan(1e-4)
      }
      // steps and folds. 7 steps: 7 and 2 folds (at 6, at the end), against 4 + 3 and 2 (at 6, at the
      // end). 263, in submits of 256 and 7: 263 and 43 + 2 folds, against 64 + (4 + 3) and 64 + 2 (before
      // each dispatch of 4 but a submit's first, at 6, at a submit's end). The run with a timeline takes
      // its steps one by one on both.
      expect(one.dispatches.slice(0, 2)).toEqual([9, 308])
      expect(several.dispatches).toEqual([6, 134, one.dispatches[2]])
      // the rerun's louder noise is in play: its fields are not the first ones'
      const cells = n * n * first
      expect(maxDiff(one.u.subarray(cells), one.u.subarray(0, cells))).toBeGreaterThan(1e-3)
    }, 300_000)
  }

  test('only 1 or STEPS_PER_DISPATCH steps a dispatch, and 1 where the ring holds fewer slots', async () => {
    const choice = (await findAdapter(await nodeGpu()))!
    const device = await openDevice(choice)
    opened.push(device)
    await expect(GpuFieldBackend.create(device, n, 1, choice.name, { stepsPerDispatch: 3 })).rejects.toThrow(
      /steps a dispatch: 1 or 4, got 3/,
    )
    const slot = 4 * fields * tx * ty * 4
    for (const [slots, taken] of [
      [STEPS_PER_DISPATCH - 1, 1],
      [STEPS_PER_DISPATCH, STEPS_PER_DISPATCH],
    ]) {
      const gpu = await GpuFieldBackend.create(device, n, fields, choice.name, {
        ringBytes: slots * slot,
        stepsPerDispatch: STEPS_PER_DISPATCH,
      })
      opened.push(gpu)
      expect(gpu.stepsPerDispatch).toBe(taken)
      await gpu.load(...startOf(n, fields))
      const before = gpu.transfers.dispatches
      await gpu.step({ steps: 8, first_step: 0, seed: SEED, sample_interval: 0, params })
      // 8 steps and their folds, at each full ring: one a dispatch (3 slots: folds at 3, 6 and the end), or two
      // dispatches of 4 (4 slots: folds at 4 and 8)
      expect(gpu.transfers.dispatches - before).toBe(taken === 1 ? 8 + 3 : 2 + 2)
    }
  })
})

describe('short runs of steps go in one submit with the work after them (Transfers.submitWithNext)', () => {
  test('100 runs of 3 steps, then 15 of 20 whose uniform slots come round to those of runs not yet submitted: the field and books of one run of 600, in a few submits', async () => {
    const [n, fields] = [32, 2]
    // one step a dispatch on any adapter: a hardware one takes 4 by default, and runs of 3 against one of 600
    // group the books' per-dispatch sums differently (the H200 gave a ledger 1 ulp apart, the fields equal)
    const one = { stepsPerDispatch: 1 }
    const gpu = (await gpuBackend(n, fields, one)) as GpuFieldBackend
    opened.push(gpu)
    const params = paramsFor(n, fields)
    await gpu.load(...startOf(n, fields))
    const runs = async (count: number, steps: number, from: number) => {
      const submits = gpu.transfers.submits
      for (let k = 0; k < count; k++) await gpu.step({ steps, first_step: from + k * steps, seed: SEED, sample_interval: 0, params })
      return gpu.transfers.submits - submits
    }
    // each run had a submit of its own before; now DEFERRED_MAX (16) go in one
    expect(await runs(100, 3, 0)).toBe(Math.floor(100 / DEFERRED_MAX))
    // 20 steps a run: the slots (256 in the buffer) come round, and the 12th run's reach those of the
    // last 3-step runs, still handed over: they go first (a write to slots still to be read would change
    // their steps' noise keys)
    expect(await runs(15, 20, 300)).toBe(1)
    const short = { ...(await gpu.read()), ledger: await gpu.ledger() }
    const other = await gpuBackend(n, fields, one)
    opened.push(other)
    await other.load(...startOf(n, fields))
    await other.step({ steps: 600, first_step: 0, seed: SEED, sample_interval: 0, params })
    const long = { ...(await other.read()), ledger: await other.ledger() }
    expect(maxAbs(long.u)).toBeGreaterThan(0.01)
    // the same kernel, dispatch for dispatch: the same bits on any adapter
    expect(maxDiff(short.u, long.u)).toBe(0)
    expect(maxDiff(short.prev, long.prev)).toBe(0)
    expect([...short.ledger]).toEqual([...long.ledger])
  })

  test("a run handed over is submitted before a write to what it uses: a field loaded after it is the one loaded, an energy taken after it is the stepped field's", async () => {
    const [n, fields] = [32, 2]
    const params = paramsFor(n, fields)
    const [gpu, other] = [await gpuBackend(n, fields), await gpuBackend(n, fields)] as GpuFieldBackend[]
    opened.push(gpu, other)
    const start = startOf(n, fields)
    const stepped = async (b: GpuFieldBackend) => {
      await b.load(...start)
      await b.step({ steps: 5, first_step: 0, seed: SEED, sample_interval: 0, params })
    }
    // the energy's constants go to the step's first uniform slot, which the run waiting holds: the
    // control reads the field first (a read submits what waits), then takes the energy
    await Promise.all([stepped(gpu), stepped(other)])
    const submits = gpu.transfers.submits
    const energy = await gpu.energy(params)
    // two submits: the run waiting, as the energy's constants go up where it reads them, then the energy's own
    expect(gpu.transfers.submits - submits).toBe(2)
    await other.read()
    expect([...energy]).toEqual([...(await other.energy(params))])
    expect([...energy]).not.toEqual([...(await gpuEnergyOf(start))])
    // a load lands on the states the run waiting steps: it goes first, so the field read is the one loaded
    await gpu.step({ steps: 5, first_step: 5, seed: SEED, sample_interval: 0, params })
    await gpu.load(...start)
    const back = await gpu.read()
    expect(maxDiff(back.u, start[0])).toBe(0)
    expect(maxDiff(back.prev, start[1])).toBe(0)

    async function gpuEnergyOf([u, prev]: [Float32Array, Float32Array]): Promise<Float64Array> {
      const fresh = await gpuBackend(n, fields)
      opened.push(fresh)
      await fresh.load(u, prev)
      return fresh.energy(params)
    }
  })
})
