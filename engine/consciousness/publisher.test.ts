// The publisher on a real CPU engine, its messages checked by the contract bus: phi follows the
// field (a still field reads dormant), and the dream counts mean what docs/consciousness.md says.
import { afterEach, describe, expect, test } from 'vitest'
import { ContractBus } from '../bus/contract_bus.js'
import type { DreamReport } from '../dream/dream.js'
import type { Engine } from '../field/engine.js'
import { engineOn } from '../../testing/backends.js'
import { rng } from '../util/rng.js'
import { ConsciousnessLevel, phi } from './iit.js'
import { patchEnergy } from '../field/motion.js'
import { ConsciousnessPublisher, observationEvery, PATCH_SIDE, PHI_WINDOW } from './publisher.js'

const N = 48
const open: Engine[] = []
afterEach(() => open.splice(0).forEach((e) => e.destroy()))

async function setup(backend: 'cpu' | 'gpu' = 'cpu') {
  const engine = await engineOn(backend, { size: N, material: 'ideal_resonator', seed: 3 })
  open.push(engine)
  const sent: { subject: string; message: Record<string, unknown> }[] = []
  // the contract bus over a connection that keeps what it is given: every message is checked
  const bus = new ContractBus(
    { publish: (subject, data) => sent.push({ subject, message: JSON.parse(data) }), subscribe: () => ({ unsubscribe() {} }) },
    'node-t',
    () => {},
  )
  const warnings: string[] = []
  return { engine, sent, warnings, publisher: new ConsciousnessPublisher(engine, bus, 1000, (w) => warnings.push(w)) }
}

/** A dream that leaves the field alone: the control for both counts. */
const nothing = async (): Promise<DreamReport> => ({
  mode: 'light',
  steps_observed: 0,
  energy_before: 1,
  energy_after: 1,
  pruned_fraction: 0,
  amplified_fraction: 0,
  mutated_cells: 0,
  stability_preview: [],
})

describe('the consciousness publisher', () => {
  test('a moving field reads above its null in most periods; the same cells made independent read dormant in >= 95%; a still field reads dormant at once', async () => {
    const { engine, sent, warnings, publisher } = await setup()
    await engine.write('the cold glyph remembers', 1)
    const windows: (readonly Float64Array[])[] = []
    for (let k = 0; k < 12; k++) {
      await engine.step(50)
      await publisher.tick()
      windows.push(publisher.window)
      expect(publisher.last).toMatchObject({ units: 12, samples: PHI_WINDOW, surrogates: 99 })
    }
    const moving = sent.filter((s) => s.subject === 'SVC.consciousness').map((s) => s.message)
    expect(moving.filter((m) => (m.phi as number) > 0).length).toBeGreaterThanOrEqual(9)
    for (const m of moving) expect(m.phi_null as number).toBeGreaterThan(0)
    // controls, the same run: each cell's series from another period (independent of the others, each
    // with its own dynamics), and each cell's series shuffled in time; 60 windows of each
    const rand = rng(4)
    const pick = () => Math.floor(rand() * windows.length)
    const independent = Array.from({ length: 60 }, () => {
      const from = Array.from({ length: 12 }, (_, i) => (pick() + i) % windows.length)
      return windows[0].map((_, t) => Float64Array.from(from, (w, i) => windows[w][t][i]))
    })
    const shuffled = Array.from({ length: 60 }, (_, k) => {
      const w = windows[k % windows.length]
      const order = Array.from({ length: 12 }, () =>
        w
          .map((_, t) => [rand(), t] as const)
          .sort((x, y) => x[0] - y[0])
          .map(([, t]) => t),
      )
      return w.map((_, t) => Float64Array.from({ length: 12 }, (_, i) => w[order[i][t]][i]))
    })
    for (const control of [independent, shuffled])
      expect(control.filter((w) => phi(w).level === ConsciousnessLevel.Dormant).length).toBeGreaterThanOrEqual(57)
    sent.length = 0
    for (let k = 0; k < 3; k++) await publisher.tick()
    const still = sent.filter((s) => s.subject === 'SVC.consciousness').map((s) => s.message)
    for (const m of still) expect(m).toMatchObject({ phi: 0, xi: 0, consciousness_level: ConsciousnessLevel.Dormant })
    expect(warnings).toEqual([])
  })

  test("on the GPU the window and the phases are the CPU's; the live field reads 520 bytes a period, its fork the samples in one read", {
    timeout: 300_000,
  }, async () => {
    const windows: (readonly Float64Array[])[] = []
    const messages: Record<string, unknown>[] = []
    let [reads, live] = [0, { reads: 0, bytes: 0 }]
    for (const backend of ['cpu', 'gpu'] as const) {
      const { engine, publisher, warnings, sent } = await setup(backend)
      await engine.write('the cold glyph remembers', 1)
      await engine.step(50)
      // the fork the window is observed in counts its own reads
      const fork = engine.fork.bind(engine)
      let twinReads = () => 0
      engine.fork = async (field) => {
        const t = await fork(field)
        twinReads = () => t.transfers()?.reads ?? 0
        return t
      }
      const before = engine.transfers()
      await publisher.tick()
      const after = engine.transfers()
      expect(warnings).toEqual([])
      windows.push(publisher.window)
      messages.push(sent.find((s) => s.subject === 'QUEEN.phase.node-t')!.message)
      if (backend === 'gpu') {
        reads = twinReads()
        live = { reads: after!.reads - before!.reads, bytes: after!.bytes_read - before!.bytes_read }
      }
    }
    expect(windows[1]).toHaveLength(PHI_WINDOW)
    const peak = Math.max(...windows[0].flatMap((w) => [...w].map(Math.abs)))
    expect(peak).toBeGreaterThan(0)
    windows[1].forEach((w, t) => w.forEach((v, i) => expect(Math.abs(v - windows[0][t][i])).toBeLessThanOrEqual(1e-5 * peak)))
    // the phase and frequency from the GPU's float32 sums, the CPU's float64 ones
    for (const key of ['phase', 'frequency', 'order'])
      expect(Math.abs((messages[1][key] as number) - (messages[0][key] as number))).toBeLessThanOrEqual(1e-5)
    // the motion: 2 sums and 64 cells' u and u_prev, where the field's u and u_prev came back (18,432 bytes at N = 48)
    expect(live).toEqual({ reads: 1, bytes: (2 + 2 * 64) * 4 })
    // the samples alone: 128 reads before, one a sample; the fork's books start balanced from sums it
    // holds on the device (read with its books, which no one asks for), where its energy was a read of its own
    expect(reads).toBe(1)
  })

  test('a field larger than 256 x 256 is observed in one moving period in (n / 256)^2, and keeps its last phi between', async () => {
    expect([128, 256, 257, 512, 4096].map(observationEvery)).toEqual([1, 1, 2, 4, 256])
    const engine = await engineOn('cpu', { size: 512, material: 'ideal_resonator', seed: 3 })
    open.push(engine)
    const sent: number[] = []
    const publisher = new ConsciousnessPublisher(
      engine,
      { sender: 'node-t', publish: (subject, m) => subject === 'SVC.consciousness' && sent.push(m.phi as number) },
      1000,
      () => {},
    )
    await engine.write('the cold glyph remembers', 1)
    const reports: (typeof publisher.last)[] = []
    for (let k = 0; k < 5; k++) {
      await engine.step(1)
      await publisher.tick()
      reports.push(publisher.last)
    }
    // observed in the first and the fifth period; the three between publish the first's phi
    expect(new Set(reports).size).toBe(2)
    expect(reports.slice(0, 4).every((r) => r === reports[0])).toBe(true)
    expect(sent.slice(0, 4)).toEqual(Array(4).fill(reports[0]!.phi))
    // still, it reads dormant at once, with no observation due
    await publisher.tick()
    expect(publisher.last).toMatchObject({ phi: 0, level: ConsciousnessLevel.Dormant })
  })

  test('memories_strengthened counts the memories whose probe score the dream raised; a dream that does nothing strengthens none', async () => {
    const { engine, sent, publisher } = await setup()
    const texts = ['amber tide', 'cold glyph', 'quiet lattice']
    for (const t of texts) await engine.write(t, 1)
    await engine.step(40)
    const score = async () => Promise.all(texts.map(async (t) => (await engine.probe(t)).resonance))
    const before = await score()
    await publisher.around('deep', async () => (await engine.dream('deep'))[0])
    const after = await score()
    const dreams = sent.find((s) => s.subject === 'SVC.dreams')!.message
    expect(dreams.memories_strengthened).toBe(after.filter((s, i) => s > before[i]).length)
    expect(sent.find((s) => s.subject === 'queen.event.dream.end')!.message).toMatchObject({
      memories_strengthened: dreams.memories_strengthened,
      hallucinations: dreams.hallucinations,
    })
    sent.length = 0
    await publisher.around('light', nothing)
    expect(sent.find((s) => s.subject === 'SVC.dreams')!.message).toMatchObject({ memories_strengthened: 0, hallucinations: 0 })
  })

  test.each(['cpu', 'gpu'] as const)(
    'hallucinations on the %s: a structure the dream puts where no memory is counts; a memory made stronger does not',
    {
      timeout: 300_000,
    },
    async (backend) => {
      const { engine, sent, publisher } = await setup(backend)
      await engine.write('cold glyph', 1)
      // a memory strengthened in place: what rises is what the memory explains
      await publisher.around('light', async () => (await engine.write('cold glyph', 1), nothing()))
      expect(sent.find((s) => s.subject === 'SVC.dreams')!.message.hallucinations).toBe(0)
      // find a patch the memory leaves (nearly) empty, and dream a pulse into it
      const twin = await engine.twin(1)
      await twin.write('cold glyph', 1)
      const e = patchEnergy((await twin.read()).u, N, PATCH_SIDE)
      twin.destroy()
      const p = e.indexOf(Math.min(...e))
      const [x, y] = [((p % PATCH_SIDE) + 0.5) / PATCH_SIDE, (Math.floor(p / PATCH_SIDE) + 0.5) / PATCH_SIDE]
      sent.length = 0
      await publisher.around(
        'light',
        async () => (await engine.pulse({ x, y, radius: 0.02, amplitude: 5, frequency: 0, phase: 0 }), nothing()),
      )
      expect(sent.find((s) => s.subject === 'SVC.dreams')!.message.hallucinations).toBeGreaterThanOrEqual(1)
    },
  )
})
