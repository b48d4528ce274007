// The engine as a user drives it: writes superpose, the energy books balance, the timeline grows,
// and bad input is refused with an error that names what is wrong.
import { afterEach, describe, expect, test, vi } from 'vitest'
import { CrystalError } from '../errors.js'
import { ENCODINGS } from '../contracts/api.js'
import { ENCODING_VERSION, textWavefront } from '../encode/text.js'
import { engineOn } from '../../testing/backends.js'
import { EVERYTHING_ON } from '../../testing/fixtures.js'
import { shapeSums } from '../detect/detect.js'
import { SAMPLES_LATER_MAX_STEPS, SAMPLES_WAITING_MAX, type Engine, type EngineOptions } from './engine.js'
import type { EnergyBooks } from './engine_api.js'
import { STEPS_PER_DISPATCH } from './params.js'
import { momentOf } from './state.js'
import { downsample } from '../util/downsample.js'
import { observeHeld } from '../dream/dream.js'
import { findAdapter } from '../gpu/device.js'
import { nodeGpu } from '../gpu/webgpu.node.js'
import { cellSpans } from '../gpu/backend.js'
import { phiCells } from '../consciousness/publisher.js'

const open: Engine[] = []
afterEach(() => open.splice(0).forEach((e) => e.destroy()))
async function engine(backend: 'gpu' | 'cpu', o: EngineOptions = {}): Promise<Engine> {
  const e = await engineOn(backend, o)
  open.push(e)
  return e
}

function maxAbs(a: Float32Array): number {
  return a.reduce((m, v) => Math.max(m, Math.abs(v)), 0)
}
function maxDiff(a: Float32Array, b: Float32Array): number {
  return a.reduce((m, v, i) => Math.max(m, Math.abs(v - b[i])), 0)
}

describe('superposition (at small amplitude the saturation is negligible)', () => {
  // europium_crystal has saturation and viscosity; temperature 0 keeps noise out of the comparison.
  const quiet = { size: 48, material: 'europium_crystal', temperature_k: 0 } as const
  const A = 'amber lattice'
  const B = 'the cold glyph remembers'
  const SMALL = 0.01

  test('write(a) then write(b) equals write(b) then write(a)', async () => {
    const ab = await engine('cpu', quiet)
    await ab.write(A, SMALL)
    await ab.write(B, SMALL)
    await ab.step(300)
    const ba = await engine('cpu', quiet)
    await ba.write(B, SMALL)
    await ba.write(A, SMALL)
    await ba.step(300)
    expect((await ab.read()).u).toEqual((await ba.read()).u)
  })

  test('a run with both writes equals the sum of separate runs', async () => {
    const run = async (texts: string[]) => {
      const e = await engine('cpu', quiet)
      for (const t of texts) await e.write(t, SMALL)
      await e.step(300)
      return (await e.read()).u
    }
    const both = await run([A, B])
    const a = await run([A])
    const b = await run([B])
    const sum = a.map((v, i) => v + b[i])
    // The cubic term at amplitude 0.01 is about 1e-4 of the linear one; float32 round-off is smaller.
    expect(maxDiff(both, sum)).toBeLessThan(1e-3 * maxAbs(sum))
  })
})

describe('energy books', () => {
  for (const backend of ['cpu', 'gpu'] as const) {
    test(`${backend}: initial energy = current + bulk loss + boundary leakage + saturation - noise work - injected`, async () => {
      const e = await engine(backend, { size: 32, material: EVERYTHING_ON, timeline_interval: 50 })
      await e.write('the cold glyph remembers', 0.9)
      await e.pulse({ x: 0.3, y: 0.6, radius: 0.08, amplitude: 0.7, frequency: 2, phase: 0.5 })
      await e.step(250)
      await e.write('amber lattice', 0.5)
      await e.step(250)
      const [b] = await e.books()
      expect(b.step).toBe(500)
      // every account moved: this is a real test of each term
      for (const k of ['bulk_loss', 'boundary_loss', 'saturation', 'noise_work', 'injected'] as const)
        expect(Math.abs(b[k])).toBeGreaterThan(1e-6)
      const residual = b.energy + b.bulk_loss + b.boundary_loss + b.saturation - b.noise_work - b.injected
      // Exact in real arithmetic (docs/physics.md); float32 states and sums leave about 1e-5 of the flow.
      expect(Math.abs(residual)).toBeLessThan(1e-3 * b.injected)
      // the timeline sampled every 50 steps, and its last point is the books at step 500
      const line = e.timeline()
      expect(line.map((p) => p.step)).toEqual([50, 100, 150, 200, 250, 300, 350, 400, 450, 500])
      expect(line.at(-1)!.energy).toBeCloseTo(b.energy, 3)
      expect(line.at(-1)!.boundary_loss).toBeCloseTo(b.boundary_loss, 3)
    })
  }

  test("a write's saturation potential is counted: energy retention <= 1 + 1e-3 in every built-in, and the saturation account is near the potential still held (near zero once decayed)", async () => {
    const { BUILT_IN_MATERIALS } = await import('./materials.js')
    const { saturationPotential } = await import('../cpu/field_step.js')
    for (const material of BUILT_IN_MATERIALS) {
      // a strong write (peak 3) so the saturation matters where the material has any
      const e = await engine('cpu', { size: 48, material: material.name, temperature_k: 0, timeline_interval: 0 })
      await e.write('the cold glyph remembers', 3)
      await e.step(2000)
      const [b] = await e.books()
      const { u, prev } = await e.read()
      const held = saturationPotential(prev, u, material.nonlinearity, 1)[0]
      expect.soft(b.energy / b.injected, material.name).toBeLessThanOrEqual(1 + 1e-3)
      // the step's work b u^3/(1+u^2) (u_next - u_prev) is the potential's change up to O(dw^3): measured within 3%
      expect.soft(Math.abs(b.saturation - held), material.name).toBeLessThan(0.05 * b.injected)
      expect
        .soft(Math.abs(b.energy + b.bulk_loss + b.boundary_loss + b.saturation - b.noise_work - b.injected), material.name)
        .toBeLessThan(1e-3 * b.injected)
      e.destroy()
    }
  })

  test("an injection into some fields of a batch reads and books only those (the CPU backend: evolve's start groups of 1,000 fields)", async () => {
    const { WasmFieldBackend } = await import('../cpu/wasm.js')
    const e = await engine('cpu', { size: 24, fields: 6, material: 'europium_crystal', temperature_k: 0, timeline_interval: 0 })
    const wave = (a: number) => Float32Array.from({ length: 24 * 24 }, (_, i) => a * Math.sin(i / 7))
    await e.injectMany([wave(0.5), undefined, undefined, undefined, wave(0.3), undefined])
    await e.step(30)
    const read = vi.spyOn(WasmFieldBackend.prototype, 'read')
    try {
      await e.injectMany([undefined, wave(0.4), undefined, undefined, wave(0.2), undefined])
      // the energies and potentials before and after: fields 1 and 4 only (every field, before)
      expect(read.mock.calls.length).toBeGreaterThan(0)
      for (const [fields] of read.mock.calls) expect(fields).toEqual([1, 4])
    } finally {
      read.mockRestore()
    }
    // the books still close field by field (saturating europium: potential and energy both moved); at 0 K
    // the fields never injected hold nothing
    const books = await e.books()
    expect(books.map((b) => b.injected > 0)).toEqual([true, true, false, false, true, false])
    for (const [f, b] of books.entries()) {
      const residual = b.energy + b.bulk_loss + b.boundary_loss + b.saturation - b.noise_work - b.injected
      expect(Math.abs(residual), `field ${f}`).toBeLessThanOrEqual(1e-3 * b.injected)
    }
  })

  test('a batch keeps separate books per field', async () => {
    const e = await engine('cpu', { size: 24, fields: 3, material: 'ideal_resonator', timeline_interval: 20 })
    await e.pulse({ x: 0.5, y: 0.5, radius: 0.1, amplitude: 1, frequency: 0, phase: 0 }, 1)
    await e.step(100)
    const books = await e.books()
    expect(books[0].energy).toBe(0)
    expect(books[2].energy).toBe(0)
    expect(books[1].energy).toBeGreaterThan(0.9 * books[1].injected)
    expect(e.timeline(1)).toHaveLength(5)
  })
})

describe("a batch no one asks keeps no history for recall (recall_history: false, evolve's)", () => {
  test.each(['cpu', 'gpu'] as const)(
    '%s: a saturating batch written, dreamt and scaled: the same field and books, no masks nor saved states kept; recall, probe and readAt refuse; control, the default keeps both',
    { timeout: 300_000 },
    async (backend) => {
      const o = { size: 24, fields: 2, material: 'europium_crystal', temperature_k: 0, timeline_interval: 0 } as const
      const run = async (recall_history?: boolean) => {
        const e = await engine(backend, { ...o, recall_history })
        await e.write('amber lattice', 1, 1)
        await e.pulse({ x: 0.4, y: 0.5, radius: 0.1, amplitude: 1, frequency: 0, phase: 0 }, 0)
        await e.step(20)
        await e.dream(['deep', 'light'])
        await e.scale(new Float32Array(2 * 24 * 24).fill(0.5))
        return { e, state: await e.read(), books: await e.books(), kinds: new Set(e.history.map((h) => h.kind)) }
      }
      const [none, kept] = [await run(false), await run()]
      expect(kept.kinds).toEqual(new Set(['write', 'state', 'scale']))
      expect(none.kinds).toEqual(new Set(['write']))
      expect(none.state.u).toEqual(kept.state.u)
      expect(none.state.prev).toEqual(kept.state.prev)
      expect(none.books).toEqual(kept.books)
      const refused = /keeps no history for recall \(it was opened with recall_history: false\)/
      await expect(none.e.recall('amber lattice', 3, 1)).rejects.toThrow(refused)
      await expect(none.e.probe('amber lattice', 1)).rejects.toThrow(refused)
      await expect(none.e.readAt([new Float32Array(24 * 24)], [new Float32Array(24 * 24)], [], 1)).rejects.toThrow(refused)
      expect((await kept.e.recall('amber lattice', 3, 1)).hits[0]?.text).toBe('amber lattice')
    },
  )

  test('recall_history takes true or false only', async () => {
    await expect(engine('cpu', { size: 16, recall_history: 'no' as unknown as boolean })).rejects.toThrow(
      'recall_history must be true or false, got "no"',
    )
  })
})

describe("a rerun: a batch's later fields run its first ones again with more noise (evolve's noise-tolerance run)", () => {
  test.each(['cpu', 'gpu'] as const)(
    '%s: written, stepped and dreamt, the first fields are those of an engine of their own, the rerun ones those of an engine opened with the added noise, bit for bit; control, the added noise changed them',
    { timeout: 300_000 },
    async (backend) => {
      const o = { size: 24, material: 'europium_crystal', seed: 5, timeline_interval: 0, recall_history: false } as const
      const wave = (k: number) => Float32Array.from({ length: 24 * 24 }, (_, i) => Math.sin(i * (0.01 + 0.003 * k)) * 0.5)
      const run = async (extra: EngineOptions, copies: number) => {
        const e = await engine(backend, { ...o, ...extra, fields: 2 * copies })
        const twice = <T>(a: T[]) => (copies === 2 ? [...a, ...a] : a)
        await e.injectMany(twice([wave(1), wave(2)]))
        await e.step(30)
        await e.dream(twice(['deep', 'light'] as const))
        await e.step(20)
        return { state: await e.read(), books: await e.books() }
      }
      const both = await run({ rerun: { from: 2, noise: 0.003 } }, 2)
      const [clean, noisy] = [await run({}, 1), await run({ noise: 0.003 }, 1)]
      const half = 2 * 24 * 24
      expect(both.state.u.subarray(0, half)).toEqual(clean.state.u)
      expect(both.state.u.subarray(half)).toEqual(noisy.state.u)
      expect(both.state.prev.subarray(half)).toEqual(noisy.state.prev)
      expect(both.books.slice(2)).toEqual(noisy.books)
      expect(both.books.slice(0, 2)).toEqual(clean.books)
      expect(maxDiff(noisy.state.u, clean.state.u)).toBeGreaterThan(1e-4)
    },
  )

  test('gpu, 4 steps a dispatch (shaders/field_steps.wgsl): the rerun batch written, stepped and dreamt is the same, bit for bit, in fewer dispatches', {
    timeout: 300_000,
  }, async () => {
    const o = { size: 24, material: 'europium_crystal', seed: 5, timeline_interval: 0, recall_history: false } as const
    const wave = (k: number) => Float32Array.from({ length: 24 * 24 }, (_, i) => Math.sin(i * (0.01 + 0.003 * k)) * 0.5)
    const run = async (steps: number) => {
      const e = await engine('gpu', { ...o, fields: 4, rerun: { from: 2, noise: 0.003 }, gpu_steps_per_dispatch: steps })
      await e.injectMany([wave(1), wave(2), wave(1), wave(2)])
      // 30 and 21 steps: runs that are not multiples of 4
      await e.step(30)
      await e.dream(['deep', 'light', 'deep', 'light'])
      await e.step(21)
      return { state: await e.read(), books: await e.books(), dispatches: e.transfers()!.dispatches }
    }
    const [one, several] = [await run(1), await run(STEPS_PER_DISPATCH)]
    expect(maxDiff(one.state.u, new Float32Array(one.state.u.length))).toBeGreaterThan(1e-3)
    expect(several.dispatches).toBeLessThan(one.dispatches)
    if ((await findAdapter(await nodeGpu()))!.software) {
      expect(several.state.u).toEqual(one.state.u)
      expect(several.state.prev).toEqual(one.state.prev)
      expect(several.books).toEqual(one.books)
    } else {
      // a GPU's compiler may fuse multiply-adds in one kernel and not the other: the twins' tolerances
      expect(maxDiff(several.state.u, one.state.u)).toBeLessThanOrEqual(1e-5 * maxDiff(one.state.u, new Float32Array(one.state.u.length)))
      one.books.forEach((b, f) => {
        for (const [k, v] of Object.entries(b) as [keyof EnergyBooks, number][])
          expect(Math.abs(several.books[f][k] - v), `field ${f} ${k}`).toBeLessThanOrEqual(1e-4 * Math.abs(v) + 1e-12)
      })
    }
  })

  test('a rerun needs as many fields before it as it has', async () => {
    await expect(engine('cpu', { size: 16, fields: 4, rerun: { from: 1, noise: 0 } })).rejects.toThrow(
      'rerun.from must be a whole number from 2 to 3, got 1',
    )
    await expect(engine('cpu', { size: 16, fields: 4, rerun: { from: 2, noise: -1 } })).rejects.toThrow(/rerun\.noise/)
    await expect(engine('cpu', { size: 16, rerun: { from: 1, noise: 0 } })).rejects.toThrow('it needs 2 fields at least, got 1')
  })
})

// the rest tests' engine: three small fields of europium under noise, and a wave to inject
const RESTING_SIDE = 24
const RESTING_OPTIONS = {
  size: RESTING_SIDE,
  material: 'europium_crystal',
  seed: 5,
  noise: 0.01,
  fields: 3,
  timeline_interval: 0,
  recall_history: false,
} as const
const RESTING_WAVE = Float32Array.from({ length: RESTING_SIDE ** 2 }, (_, i) => Math.sin(i * 0.013) * 0.5)

describe('rest_until_injected (evolve: a genome injected after others starts from a quiet field)', () => {
  test.each(['cpu', 'gpu'] as const)(
    '%s: each field rests at 0, with nothing in its books, until its first injection, then steps on under noise keyed by its own steps; a field never injected rests to the end; extract refuses a resting field, and a copy steps on as its field',
    { timeout: 300_000 },
    async (backend) => {
      const [o, wave] = [RESTING_OPTIONS, RESTING_WAVE]
      const [e, control] = [await engine(backend, { ...o, rest_until_injected: true }), await engine(backend, o)]
      const peak = async (x: Engine, f: number) => Math.max(...(await x.readU([f])).map(Math.abs))
      for (const x of [e, control]) await x.step(40)
      // the control, stepped under noise from the start: every field has moved
      for (const f of [0, 1, 2]) {
        expect(await peak(e, f)).toBe(0)
        expect(await peak(control, f)).toBeGreaterThan(0)
      }
      await expect(e.extract([1])).rejects.toThrow('field 1 rests (rest_until_injected or rest): extract takes fields awake')
      await e.inject(wave, 0)
      await e.step(40)
      await e.injectMany([undefined, wave, undefined])
      // field 1 took its wave into a quiet field: exactly the wave, as in an engine of its own
      expect([...(await e.readU([1]))]).toEqual([...wave])
      await e.step(20)
      const books = await e.books()
      for (const f of [0, 1]) {
        expect(await peak(e, f)).toBeGreaterThan(0.01)
        expect(books[f].noise_work).not.toBe(0)
      }
      // field 2 was never injected: at rest, its books empty
      expect(await peak(e, 2)).toBe(0)
      expect(books[2]).toMatchObject({ energy: 0, bulk_loss: 0, boundary_loss: 0, noise_work: 0, injected: 0 })
      // a copy steps on as its field: awake, its noise keyed by the field's own steps (it rested 80)
      const part = await e.extract([1])
      open.push(part)
      expect([...e.rested, ...part.rested]).toEqual([40, 80, 100, 80])
      for (const x of [e, part]) await x.step(10)
      expect([...(await part.readU([0]))]).toEqual([...(await e.readU([1]))])
      await expect(engine('cpu', { ...o, rest_until_injected: 1 as unknown as boolean })).rejects.toThrow(
        'rest_until_injected must be true or false, got 1',
      )
    },
  )
})

describe("rest (evolve's perturbation rests the fields nothing perturbs)", () => {
  test.each(['cpu', 'gpu'] as const)(
    '%s: a field sent back to rest is 0 and stays so, its energy booked as taken out, the books balanced; the others step on bit for bit; an injection or a write wakes it',
    { timeout: 300_000 },
    async (backend) => {
      const [o, wave] = [RESTING_OPTIONS, RESTING_WAVE]
      const [e, control] = [await engine(backend, o), await engine(backend, o)]
      for (const x of [e, control]) {
        await x.injectMany([wave, wave, wave])
        await x.step(30)
      }
      const before = (await e.books())[1]
      expect(before.energy).toBeGreaterThan(0.1)
      await e.rest([1])
      const { u, prev } = await e.read([1])
      expect([maxAbs(u), maxAbs(prev)]).toEqual([0, 0])
      const rested = (await e.books())[1]
      // its energy and potential taken out as an injection takes them (an erasure's books): balanced
      expect(rested.energy).toBe(0)
      expect(before.injected - rested.injected).toBeGreaterThanOrEqual(before.energy)
      const balance = (b: EnergyBooks) => b.energy + b.bulk_loss + b.boundary_loss + b.saturation - b.noise_work - b.injected
      expect(Math.abs(balance(rested))).toBeLessThanOrEqual(1e-3 * before.injected)
      for (const x of [e, control]) await x.step(40)
      const after = await e.books()
      // held at 0 with no noise and no work: nothing moved in its books
      expect(maxAbs(await e.readU([1]))).toBe(0)
      expect(after[1]).toMatchObject({ energy: 0, noise_work: rested.noise_work, bulk_loss: rested.bulk_loss, injected: rested.injected })
      for (const f of [0, 1, 2]) expect(Math.abs(balance(after[f])), `field ${f}`).toBeLessThanOrEqual(1e-3 * before.injected)
      // the others as in the control, where none rested
      for (const f of [0, 2]) expect(maxDiff(await e.readU([f]), await control.readU([f])), `field ${f}`).toBe(0)
      await e.inject(wave, 1)
      expect([...(await e.readU([1]))]).toEqual([...wave])
      await e.step(10)
      expect(maxDiff(await e.readU([1]), wave)).toBeGreaterThan(1e-4)
      // a write wakes it too (on the GPU made and superposed on the device, encoding 3)
      await e.rest([1])
      await e.write('a memory written into a field at rest', 1, 1)
      await e.step(5)
      expect(maxAbs(await e.readU([1]))).toBeGreaterThan(1e-3)
      await expect(e.rest([3])).rejects.toThrow(/field must be a whole number from 0 to 2, got 3/)
      await expect(e.rest([0, 0])).rejects.toThrow('a rest lists a field twice (0, 0): list each field once')
    },
  )
})

describe("extract (evolve's perturbation steps only the fields it perturbs)", () => {
  // the GPU at 4 steps a dispatch too (as SVC_CRYSTAL_GPU_STEPS_PER_DISPATCH=4 asks), whose steps rotate among 4 state buffers
  test.each([
    ['cpu', 1],
    ['gpu', 1],
    ['gpu', STEPS_PER_DISPATCH],
  ] as const)(
    '%s, %i step(s) a dispatch: extract gives fields a batch of their own that steps on as they would have here, bit for bit, with the sums held, a field listed twice twice (each copy on its own); nothing read back for it on the GPU',
    { timeout: 300_000 },
    async (backend, steps) => {
      const o = {
        size: 24,
        material: 'europium_crystal',
        seed: 5,
        noise: 0.01,
        fields: 6,
        rerun: { from: 3, noise: 0.01 },
        timeline_interval: 0,
        recall_history: false,
        ...(backend === 'gpu' ? { gpu_steps_per_dispatch: steps } : {}),
      } as const
      const e = await engine(backend, o)
      const wave = (k: number) => Float32Array.from({ length: 24 * 24 }, (_, i) => Math.sin(i * (0.01 + 0.003 * k)) * 0.5)
      await e.injectMany([1, 2, 3, 1, 2, 3].map(wave))
      await e.step(30)
      await observeHeld(e, 20, 4)
      await e.holdStability()
      const reads = e.transfers()?.reads
      // field 2 twice (a field with two parts to perturb, each in a copy of its own), and alone
      const [part, alone] = [await e.extract([2, 0, 2]), await e.extract([2])]
      expect(e.transfers()?.reads).toBe(reads)
      expect(part.transfers()?.reads ?? 0).toBe(0)
      expect([part.fields, part.step_count, [...part.draws]]).toEqual([3, e.step_count, [2, 0, 2]])
      const taken = await part.read()
      // the same kick and steps on both (the first copy of field 2 kicked, the second not, nor the one
      // alone): the fields and what a perturbation's answers read agree
      const pattern = wave(4)
      for (const [engine, kicked] of [
        [e, [2]],
        [part, [0]],
        [alone, []],
      ] as const) {
        await engine.kick(pattern, kicked)
        await engine.step(25)
        await observeHeld(engine, 20, 4)
      }
      const [mine, theirs, unkicked] = [await part.read(), await e.read([2, 0]), await alone.read()]
      const cells = 24 * 24
      expect(mine.u.subarray(0, 2 * cells)).toEqual(theirs.u)
      expect(mine.prev.subarray(0, 2 * cells)).toEqual(theirs.prev)
      expect(mine.u.subarray(2 * cells)).toEqual(unkicked.u)
      expect(mine.prev.subarray(2 * cells)).toEqual(unkicked.prev)
      // the copies went apart: the kick reached one only
      expect(maxDiff(mine.u.subarray(0, cells), mine.u.subarray(2 * cells))).toBeGreaterThan(1e-3)
      const plan = shapeSums([5, 6, 7, 77, 78, 79, 300], e.size)
      const asked = await part.perturbationSums({ pattern, basins: [0], erased: [{ field: 1, sums: plan }] })
      const here = await e.perturbationSums({ pattern, basins: [2], erased: [{ field: 0, sums: plan }] })
      expect(asked).toEqual(here)
      // the second copy holds field 2's sums too
      expect(await part.perturbationSums({ pattern, basins: [2], erased: [] })).toEqual(
        await alone.perturbationSums({ pattern, basins: [0], erased: [] }),
      )
      expect((await part.books())[0].energy).toBeCloseTo((await e.books())[2].energy, 5)
      // the control: the kick and steps moved them (engine/field/field_step.test.ts holds the draws to
      // their twin, and fields drawing their own numbers apart from them); the rerun's fields, whose
      // noise is louder, are refused
      expect(maxDiff(mine.u, taken.u)).toBeGreaterThan(1e-3)
      await expect(e.extract([4])).rejects.toThrow("field 4 is a rerun's (its noise louder): extract takes fields of the first run")
      await expect(e.extract([])).rejects.toThrow('extract takes at least one field')
      part.destroy()
      alone.destroy()
      e.destroy()
    },
  )
})

describe('timeline samples ride (samplingLater): a row of sampled runs on the GPU reads back now and then, not a run at a time', () => {
  test(`40 runs of 10 steps and the books: ${Math.ceil(40 / SAMPLES_WAITING_MAX)} reads (the waiting samples read every ${SAMPLES_WAITING_MAX} runs) where each run read its own made 41; the same timeline, books and field to the bit, and the CPU's timeline within the books' tolerance`, {
    timeout: 300_000,
  }, async () => {
    const RUNS = 40
    const o = { size: 24, fields: 2, material: 'europium_crystal', seed: 3, noise: 0.002 } as const
    const prepared = async (backend: 'gpu' | 'cpu') => {
      const e = await engine(backend, o)
      await e.write('the river keeps its stones', 1, 1)
      await e.step(5)
      return e
    }
    // what the server's step does: its chunks, then the snapshot's books and field, taken together
    const work = async (e: Engine) => {
      for (let k = 0; k < RUNS; k++) await e.step(10)
      const books = e.booksLater()
      const state = await e.read()
      return { books: await books(), state }
    }
    const reads = async (e: Engine, run: () => Promise<unknown>) => {
      const before = e.transfers()!.reads
      const result = await run()
      return { reads: e.transfers()!.reads - before, result }
    }
    const [later, control, cpu] = await Promise.all([prepared('gpu'), prepared('gpu'), prepared('cpu')])
    const rode = await reads(later, () => later.samplingLater(() => work(later)))
    const own = await reads(control, () => work(control))
    expect([rode.reads, own.reads]).toEqual([Math.ceil(RUNS / SAMPLES_WAITING_MAX), RUNS + 1])
    expect(rode.result).toEqual(own.result)
    await work(cpu)
    for (let f = 0; f < 2; f++) {
      const line = later.timeline(f)
      // every sample recorded by the time samplingLater returns, in order
      expect(line.map((b) => b.step)).toEqual(Array.from({ length: RUNS }, (_, k) => 10 * (k + 1)))
      expect(line).toEqual(control.timeline(f))
      line.forEach((b, k) => {
        const want = cpu.timeline(f)[k]
        for (const key of ['energy', 'injected', 'saturation', 'bulk_loss'] as const)
          expect(Math.abs(b[key] - want[key])).toBeLessThanOrEqual(1e-4 * Math.max(1, Math.abs(want.injected)))
      })
    }
  })

  test(`a run longer than ${SAMPLES_LATER_MAX_STEPS} steps reads its samples as it goes, as outside samplingLater; after work that threw, the samples left waiting count toward the ${SAMPLES_WAITING_MAX}`, {
    timeout: 300_000,
  }, async () => {
    const o = { size: 16, material: 'europium_crystal', seed: 6 } as const
    const [inside, outside] = [await engine('gpu', o), await engine('gpu', o)]
    for (const e of [inside, outside]) await e.write('a lantern in the rain')
    const reads = async (e: Engine, run: () => Promise<unknown>) => {
      const before = e.transfers()!.reads
      await run().catch(() => undefined)
      return e.transfers()!.reads - before
    }
    const long = async (e: Engine) => {
      await e.step(2 * SAMPLES_LATER_MAX_STEPS)
      return e.books()
    }
    expect(await reads(inside, () => inside.samplingLater(() => long(inside)))).toBe(await reads(outside, () => long(outside)))
    expect(inside.timeline(0)).toEqual(outside.timeline(0))
    // 12 runs, then a failure: their samples still wait (no read), and count; of the next 40 runs, 5, 21 and
    // 37 find 16 waiting and read them, then the books read the rest: 4 reads (the 12 forgotten, the count
    // would fall below zero as they were taken: 2)
    const threw = await reads(inside, () =>
      inside.samplingLater(async () => {
        for (let k = 0; k < 12; k++) await inside.step(10)
        throw new Error('a change that failed')
      }),
    )
    const after = await reads(inside, () =>
      inside.samplingLater(async () => {
        for (let k = 0; k < 40; k++) await inside.step(10)
        return inside.books()
      }),
    )
    expect([threw, after]).toEqual([0, 4])
    const steps = inside.timeline(0).map((b) => b.step)
    expect(steps.slice(-52)).toEqual(Array.from({ length: 52 }, (_, k) => steps.at(-52)! + 10 * k))
    // every sample, to the last run's (a sample every 10 steps of the engine's count)
    expect(steps.at(-1)).toBe(10 * Math.floor(inside.step_count / 10))
  })

  test("a moment of the field (the server's snapshot, a tab's state) is one read: the books, field averaged where it lives, and timeline that books(), read() and downsample give, which read twice", {
    timeout: 300_000,
  }, async () => {
    const e = await engine('gpu', { size: 32, material: 'europium_crystal', seed: 8, noise: 0.001 })
    await e.write('a moth at the window')
    await e.step(25)
    const reads = () => e.transfers()!.reads
    const bytesRead = () => e.transfers()!.bytes_read
    const [before, bytesBefore] = [reads(), bytesRead()]
    const moment = await momentOf(e, [8])
    const once = reads() - before
    // the 8 x 8 image and the books' few bytes, not u (32 x 32): a snapshot shows the field at the sides asked
    const bytes = bytesRead() - bytesBefore
    expect(bytes).toBeGreaterThanOrEqual(8 * 8 * 4)
    expect(bytes).toBeLessThan(32 * 32 * 4)
    const [books] = await e.books()
    const { u } = await e.read([0])
    expect([once, reads() - before - once]).toEqual([1, 2])
    expect({ ...moment, images: [...moment.images.keys()] }).toEqual({
      images: [8],
      books,
      timeline: e.timeline(0),
      memories: 1,
      material: 'europium_crystal',
      temperature_k: e.temperature_k,
    })
    // the twin's image (its bits on a software adapter; a hardware one's division may be an ulp off)
    const twin = downsample(u, 32, 8)
    moment.images.get(8)!.forEach((v, k) => expect(Math.abs(v - twin[k])).toBeLessThanOrEqual(3e-7 * Math.abs(twin[k])))
    expect(moment.timeline.at(-1)?.step).toBe(20)
    // no side asked: the books alone; two sides: a read each, the books with the first
    const [again, bytesAgain] = [reads(), bytesRead()]
    expect((await momentOf(e, [])).books).toEqual(books)
    expect([reads() - again, bytesRead() - bytesAgain < 8 * 8 * 4]).toEqual([1, true])
    const both = await momentOf(e, [8, 32])
    expect([...both.images.keys()]).toEqual([8, 32])
    expect(both.images.get(32)).toEqual(u)
    expect(reads() - again).toBe(3)
  })

  test("a read of the fields is one read back, whichever fields and in whatever order (u's and u_prev's were two, a field's each)", {
    timeout: 300_000,
  }, async () => {
    const e = await engine('gpu', { size: 16, fields: 3, material: 'europium_crystal', seed: 2, timeline_interval: 0 })
    const wave = (k: number) => Float32Array.from({ length: 16 * 16 }, (_, i) => Math.sin(i * (0.02 + 0.005 * k)) * 0.3)
    await e.injectMany([wave(1), wave(2), wave(3)])
    await e.step(7)
    const counted = async (fields?: number[]) => {
      const before = e.transfers()!
      const read = await e.read(fields)
      const after = e.transfers()!
      return { read, reads: after.reads - before.reads, bytes: after.bytes_read - before.bytes_read }
    }
    const all = await counted()
    const some = await counted([2, 0])
    const plane = (a: Float32Array, f: number) => a.subarray(f * 256, (f + 1) * 256)
    expect([all.reads, all.bytes, some.reads, some.bytes]).toEqual([1, 2 * 3 * 256 * 4, 1, 2 * 2 * 256 * 4])
    for (const key of ['u', 'prev'] as const) {
      expect([plane(some.read[key], 0), plane(some.read[key], 1)]).toEqual([plane(all.read[key], 2), plane(all.read[key], 0)])
      // the planes differ: a mix-up of fields or of u and u_prev would show
      expect(maxDiff(plane(all.read[key], 0), plane(all.read[key], 2))).toBeGreaterThan(1e-3)
    }
    expect(maxDiff(all.read.u, all.read.prev)).toBeGreaterThan(1e-4)
  })

  for (const backend of ['cpu', 'gpu'] as const)
    test(`cellsLater on the ${backend}: u at the cells listed after each run, as readU has it, all in one read`, {
      timeout: 300_000,
    }, async () => {
      const open = () => engine(backend, { size: 16, fields: 2, material: 'europium_crystal', seed: 4, timeline_interval: 0 })
      const [e, control] = [await open(), await open()]
      const wave = Float32Array.from({ length: 16 * 16 }, (_, i) => Math.sin(i * 0.03) * 0.3)
      for (const x of [e, control]) await x.injectMany([wave, wave.map((v) => -v)])
      // a 4 x 3 block and, out of order, two cells far apart; field 1
      const cells = [...[0, 1, 2].flatMap((r) => [0, 1, 2, 3].map((c) => (6 + r) * 16 + 5 + c)), 255, 3]
      const reads = (x: Engine) => x.transfers()?.reads ?? 0
      const [before, controlBefore] = [reads(e), reads(control)]
      const bytesBefore = e.transfers()?.bytes_read ?? 0
      const want: Float32Array[] = []
      for (let k = 0; k < 20; k++) {
        await control.step(3)
        const u = await control.readU([1])
        want.push(Float32Array.from(cells, (c) => u[c]))
      }
      // after the control's reads: a read of any engine on the device brings the rides waiting back
      const later: (() => Promise<Float32Array>)[] = []
      for (let k = 0; k < 20; k++) {
        await e.step(3)
        later.push(e.cellsLater(cells, 1))
      }
      const got = []
      for (const sample of later) got.push(await sample())
      expect(got).toEqual(want)
      expect(new Set(got.map((g) => g[0])).size).toBeGreaterThan(10)
      if (backend === 'gpu') expect([reads(e) - before, reads(control) - controlBefore]).toEqual([1, 20])
      // the block's three rows are one run, 3 and 255 a run each: 38 floats a sample where the span from 3 to 255 was 253
      if (backend === 'gpu') expect(e.transfers()!.bytes_read - bytesBefore).toBe(20 * 38 * 4)
    })

  test("the runs of cells a GPU read copies: cells at most 64 apart share one, each cell found where it lands, repeats and order kept; the phi window's 12 cells at N = 2048 are 48 bytes", () => {
    expect(cellSpans([7, 3, 3, 70, 5, 200])).toEqual({
      spans: [
        [3, 68],
        [200, 1],
      ],
      at: Int32Array.from([4, 0, 0, 67, 2, 68]),
    })
    expect(cellSpans([0, 66, 65])).toEqual({
      spans: [
        [0, 1],
        [65, 2],
      ],
      at: Int32Array.from([0, 2, 1]),
    })
    expect(cellSpans([0, 64]).spans).toEqual([[0, 65]])
    const phi = cellSpans(phiCells(2048))
    expect(phi.spans).toEqual([0, 1, 2].map((r) => [(1023 + r) * 2048 + 1022, 4]))
    expect(phi.spans.reduce((sum, [, count]) => sum + count, 0) * 4).toBe(48)
  })

  test('cellsLater and motion refuse a cell outside the field, naming it; patchEnergy and downsampled a side that is no whole number of patches up to N', async () => {
    const e = await engine('cpu', { size: 16 })
    expect(() => e.cellsLater([3, 256])).toThrow(/cell 256 is outside field 0's 0 to 255/)
    expect(() => e.cellsLater([1.5])).toThrow(/cell 1.5/)
    expect(() => e.cellsLater([])).toThrow(/at least one cell/)
    expect(() => e.cellsLater([0], 1)).toThrow(/field/)
    await expect(e.motion([0, 256])).rejects.toThrow(/cell 256 is outside field 0's 0 to 255/)
    await expect(e.motion([0], 1)).rejects.toThrow(/field/)
    for (const side of [0, 1.5, 17])
      for (const read of [() => e.patchEnergy(side), () => e.downsampled(side)])
        await expect(read()).rejects.toThrow(`side must be a whole number from 1 to 16, got ${side}`)
    await expect(e.downsampled(4, 1)).rejects.toThrow(/field/)
  })

  for (const backend of ['cpu', 'gpu'] as const)
    test(`readU on the ${backend} is read's u, of whichever fields, for half its bytes`, { timeout: 300_000 }, async () => {
      const e = await engine(backend, { size: 16, fields: 3, material: 'europium_crystal', seed: 2, timeline_interval: 0 })
      const wave = (k: number) => Float32Array.from({ length: 16 * 16 }, (_, i) => Math.sin(i * (0.02 + 0.005 * k)) * 0.3)
      await e.injectMany([wave(1), wave(2), wave(3)])
      await e.step(7)
      for (const fields of [undefined, [2, 0], [1]]) {
        const before = e.transfers()
        const u = await e.readU(fields)
        const after = e.transfers()
        const { u: want, prev } = await e.read(fields)
        expect(u).toEqual(want)
        expect(maxDiff(u, prev)).toBeGreaterThan(1e-4)
        if (before && after) expect([after.reads - before.reads, after.bytes_read - before.bytes_read]).toEqual([1, want.byteLength])
      }
    })
})

describe('bad input is refused with a clear error', () => {
  const refused = async (make: () => Promise<unknown>, code: string, words: string) => {
    const error = await make().then(
      () => undefined,
      (e) => e,
    )
    expect(error).toBeInstanceOf(CrystalError)
    expect((error as CrystalError).code).toBe(code)
    expect((error as CrystalError).message).toContain(words)
  }

  test('an unknown material names the known ones', async () => {
    await refused(() => engineOn('cpu', { material: 'unobtainium' }), 'unknown_material', 'unknown material "unobtainium"')
    const error = await engineOn('cpu', { material: 'unobtainium' }).catch((e) => e)
    expect(error.hint).toContain('europium_crystal')
  })

  test('N outside 16..4096', async () => {
    await refused(() => engineOn('cpu', { size: 15 }), 'bad_argument', 'size must be a whole number from 16 to 4096, got 15')
    await refused(() => engineOn('cpu', { size: 4097 }), 'bad_argument', 'got 4097')
    await refused(() => engineOn('cpu', { size: 100.5 }), 'bad_argument', 'got 100.5')
  })

  test('a non-finite pulse parameter names the parameter', async () => {
    const e = await engine('cpu', { size: 16 })
    const ok = { x: 0.5, y: 0.5, radius: 0.1, amplitude: 1, frequency: 0, phase: 0 }
    await refused(() => e.pulse({ ...ok, amplitude: NaN }), 'bad_argument', 'amplitude must be a finite number, got NaN')
    await refused(() => e.pulse({ ...ok, frequency: Infinity }), 'bad_argument', 'frequency must be a finite number, got Infinity')
    await refused(() => e.pulse({ ...ok, x: 1.5 }), 'bad_argument', 'x must be between 0 and 1, got 1.5')
    // nothing was added by the refused pulses
    expect(maxAbs((await e.read()).u)).toBe(0)
  })

  test('an encoding this build does not read names the option and the encodings it reads', async () => {
    await refused(
      () => engineOn('cpu', { encoding: 1 as never }),
      'bad_argument',
      'encoding must be a text encoding this build reads (2 or 3), got 1',
    )
  })

  test('steps, importance and field index', async () => {
    const e = await engine('cpu', { size: 16 })
    await refused(() => e.step(-1), 'bad_argument', 'steps must be a whole number')
    await refused(() => e.write('x', Infinity), 'bad_argument', 'importance must be a finite number')
    // a memory of importance 0 could never be recalled (its strength is its resonance over its importance)
    await refused(() => e.write('x', 0), 'bad_argument', 'importance must not be 0')
    expect(e.memories).toHaveLength(0)
    await refused(() => e.write('x', 1, 3), 'bad_argument', 'field must be a whole number from 0 to 0, got 3')
  })
})

describe("one text encoding per field: writes and recall use the field's, a resumed field brings its own", () => {
  // the encoding new fields do not take: a field of it is made by passing it (nothing here writes with it)
  const OTHER = ENCODINGS.find((v) => v !== ENCODING_VERSION)!
  const TEXT = 'the cold glyph remembers'

  test('a new engine takes ENCODING_VERSION; a write adds the wavefront of the encoding the engine was given', async () => {
    expect((await engine('cpu', { size: 16 })).encoding).toBe(ENCODING_VERSION)
    const e = await engine('cpu', { size: 32, encoding: 2 })
    expect(e.encoding).toBe(2)
    await e.write(TEXT, 0.5)
    const wave = await textWavefront(TEXT, 32, { version: 2 })
    expect(
      maxDiff(
        (await e.read()).u,
        wave.map((v) => v * 0.5),
      ),
    ).toBeLessThan(1e-7)
  })

  test("resume takes the saved field's encoding: recall there reads its memories as the engine that wrote them does; a twin keeps it", async () => {
    const from = await engine('cpu', { size: 32 })
    await from.write(TEXT)
    await from.step(20)
    const { u, prev } = await from.read()
    const into = await engine('cpu', { size: 32, encoding: OTHER })
    await into.resume({ u, prev, step_count: from.step_count, memories: from.memories, encoding: from.encoding })
    expect(into.encoding).toBe(ENCODING_VERSION)
    const [ours, theirs] = [await into.recall(TEXT, 1), await from.recall(TEXT, 1)]
    expect(ours.hits[0]?.text).toBe(TEXT)
    expect(ours.hits[0].match).toBeCloseTo(theirs.hits[0].match, 6)
    const twin = await into.twin(1)
    open.push(twin)
    expect(twin.encoding).toBe(ENCODING_VERSION)
  })

  test('a saved field of another encoding cannot join memories of this one: refused, naming both; a bad saved encoding is refused', async () => {
    const e = await engine('cpu', { size: 16 })
    await e.write(TEXT)
    const saved = { ...(await e.read()), step_count: 0, memories: [] }
    const error = await e.resume({ ...saved, encoding: OTHER }).catch((x) => x)
    expect(error).toBeInstanceOf(CrystalError)
    expect(error.message).toBe(
      `a saved field of text encoding ${OTHER} cannot join this engine's memories, written with encoding ${ENCODING_VERSION}`,
    )
    const fresh = await engine('cpu', { size: 16 })
    await expect(fresh.resume({ ...saved, encoding: 9 as never })).rejects.toThrow('encoding must be a text encoding this build reads')
    expect(fresh.encoding).toBe(ENCODING_VERSION)
  })
})
