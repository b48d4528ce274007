// The dream's kernels (shaders/dream.wgsl) against their CPU twin (engine/cpu/dream.ts), on the same
// states: stability sums, exact percentile thresholds, masks, smoothing, the edit in place and the
// kicks; and the transfer counter's proof that a dream on the GPU reads back only its report.
import { afterAll, describe, expect, test } from 'vitest'
import { HostDreamOps, percentile } from '../cpu/dream.js'
import type { DreamOps, EditOutcome, FieldBackend, FieldEdit } from '../field/backend.js'
import type { Engine } from '../field/engine.js'
import { GpuFieldBackend } from '../gpu/backend.js'
import { HISTOGRAM_BYTES } from '../gpu/dream.js'
import { keptDevice } from '../gpu/device.js'
import { nodeGpu } from '../gpu/webgpu.node.js'
import { cpuBackend, engineOn, gpuBackend } from '../../testing/backends.js'
import { randomField } from '../../testing/fixtures.js'
import { DREAM_PARAMS, dream, PREVIEW_SIDE } from './dream.js'

// SwiftShader takes up to ~0.1 s a dispatch on a loaded 2-core machine, and a dream is 300 steps
const GPU_TEST_TIMEOUT = 300_000
const opened: { destroy(): void }[] = []
afterAll(() => opened.forEach((b) => b.destroy()))

const N = 40
const FIELDS = 3
const deep = (key: number): FieldEdit => ({ ...DREAM_PARAMS.deep, key })
// field 1 is dead in its left half: a stability map with a quarter of its cells tied at zero, so the
// prune percentile falls inside a run of equal values
const EDITS = [deep(0x9e3779b9), { ...DREAM_PARAMS.light, key: 7 }, null]

function states(): { u: Float32Array; prev: Float32Array }[] {
  return [1, 2, 3].map((k) => {
    const u = randomField(N, FIELDS, 10 * k)
    const prev = randomField(N, FIELDS, 10 * k + 1)
    for (const a of [u, prev]) for (let y = 0; y < N; y++) for (let x = 0; x < N / 2; x++) a[N * N + y * N + x] = 0
    return { u, prev }
  })
}

async function dreamOn(
  backend: FieldBackend,
  ops: DreamOps,
  keep = EDITS.length,
  report = true,
): Promise<{ outcomes: EditOutcome[]; masks: boolean[]; submits: number; u: Float32Array; prev: Float32Array }> {
  const snapshots = states()
  for (const [k, s] of snapshots.entries()) {
    await backend.load(s.u, s.prev)
    await ops.accumulateStability(k === 0)
  }
  const counter = backend.transfers
  const before = counter?.submits ?? 0
  const { outcomes: later, masks } = await ops.edit(EDITS, 3, PREVIEW_SIDE, keep, report)
  // with the report its read submits the edit before the masks go; without it the edit is still handed over
  const outcomes = await later()
  const submits = (counter?.submits ?? 0) - before
  // released at once: on the GPU an edit handed over still copies into them
  for (const m of masks) if (m && !(m instanceof Float32Array)) backend.releaseMask?.(m)
  return { outcomes, masks: masks.map(Boolean), submits, ...(await backend.read()) }
}

describe('the dream kernels against their CPU twin', () => {
  test('thresholds, counts, preview and the edited field agree; the thresholds are the exact percentiles', {
    timeout: GPU_TEST_TIMEOUT,
  }, async () => {
    const gpu = await gpuBackend(N, FIELDS)
    const cpu = await cpuBackend(N, FIELDS)
    opened.push(gpu, cpu)
    expect(gpu.dream).toBeDefined()
    const got = await dreamOn(gpu, gpu.dream!)
    const want = await dreamOn(cpu, new HostDreamOps(cpu))

    // the oracle of the radix select is a sort: the same float, not a neighbour of it
    const sums = new Float32Array(N * N * FIELDS)
    for (const s of states()) for (let i = 0; i < sums.length; i++) sums[i] = Math.fround(sums[i] + Math.abs(s.u[i]))
    EDITS.forEach((e, f) => {
      if (!e) return
      const map = sums.subarray(f * N * N, (f + 1) * N * N)
      expect(got.outcomes[f].low).toBe(percentile(map, e.prune_percentile))
      expect(got.outcomes[f].high).toBe(percentile(map, e.amplify_percentile))
    })
    expect(got.outcomes[1].low).toBe(0) // the tie at zero
    for (const [f, o] of got.outcomes.entries()) {
      const w = want.outcomes[f]
      expect([o.low, o.high, o.pruned, o.amplified, o.mutated]).toEqual([w.low, w.high, w.pruned, w.amplified, w.mutated])
      // block sums: float32 in tiles on the GPU, float64 on the CPU
      o.preview.forEach((v, k) => expect(Math.abs(v - w.preview[k])).toBeLessThanOrEqual(1e-5 * Math.max(...w.preview)))
    }
    expect(got.outcomes[0].mutated).toBeGreaterThan(0) // the deep dream's kicks are in play
    expect(got.outcomes[0].pruned).toBe(Math.floor(DREAM_PARAMS.deep.prune_percentile * N * N))
    // Same float32 operations in the same order: equal on SwiftShader; a driver that fuses
    // u * m + k into one multiply-add differs by an ulp, well inside 1e-6 of the peak.
    const peak = want.u.reduce((m, v) => Math.max(m, Math.abs(v)), 0)
    for (const [a, b] of [
      [got.u, want.u],
      [got.prev, want.prev],
    ]) {
      let d = 0
      for (let i = 0; i < a.length; i++) d = Math.max(d, Math.abs(a[i] - b[i]))
      expect(d).toBeLessThanOrEqual(1e-6 * peak)
    }
    // the field left alone is untouched, bit for bit
    const last = states()[2].u.subarray(2 * N * N)
    expect(got.u.subarray(2 * N * N)).toEqual(last)
    // a mask for each edited field; asked to keep one, the last edited field's alone, the edit the same
    for (const r of [got, want]) expect(r.masks).toEqual([true, true, false])
    for (const [backend, ops] of [
      [gpu, gpu.dream!],
      [cpu, new HostDreamOps(cpu)],
    ] as const) {
      const one = await dreamOn(backend, ops, 1)
      expect(one.masks).toEqual([false, true, false])
      expect(one.u).toEqual(backend === gpu ? got.u : want.u)
      // without the report: no outcomes, the same edit; on the GPU nothing submitted (it goes with the
      // next submit: here the read's), the masks it copies into released before that
      const quiet = await dreamOn(backend, ops, EDITS.length, false)
      expect(quiet.outcomes).toEqual([])
      expect(quiet.submits).toBe(0)
      expect([quiet.u, quiet.prev]).toEqual(backend === gpu ? [got.u, got.prev] : [want.u, want.prev])
    }
  })
})

describe('a batch whose histograms exceed a buffer', () => {
  test('its thresholds are found a group of fields at a time, with the same edit as in one group, bit for bit', {
    timeout: GPU_TEST_TIMEOUT,
  }, async () => {
    // a binding of one field's histograms (768 KiB), then of two: the three fields go in groups of 1, 1
    // and 1, then of 2 and 1, as a population of 1,000 (1.5 GB of them) goes on a device whose buffers
    // stop at 1 GiB
    const kept = (await keptDevice(await nodeGpu()))!
    const open = (bindingBytes?: number) => GpuFieldBackend.create(kept.device, N, FIELDS, kept.choice.name, { bindingBytes })
    const whole = await open()
    opened.push(whole)
    const one = await dreamOn(whole, whole.dream!)
    // fields past the first group are edited: both thresholds of the light dream's field matter
    expect(one.outcomes[1].amplified).toBeGreaterThan(0)
    for (const fields of [1, 2]) {
      const grouped = await open(fields * HISTOGRAM_BYTES)
      opened.push(grouped)
      const groups = await dreamOn(grouped, grouped.dream!)
      expect(groups.outcomes).toEqual(one.outcomes)
      expect([groups.u, groups.prev]).toEqual([one.u, one.prev])
    }
  })
})

describe('the transfer counter', () => {
  test('a dream on the GPU reads back its report only, under a tenth of one copy of the field (the control, read through the same counter)', {
    timeout: GPU_TEST_TIMEOUT,
  }, async () => {
    // no timeline: its samples (5 floats a field every 10 steps) are the books, not the dream's
    const e: Engine = await engineOn('gpu', { size: 32, fields: 2, material: 'graphene_model', seed: 4, timeline_interval: 0 })
    opened.push(e)
    await e.write('the river keeps its stones', 1, 0)
    await e.pulse({ x: 0.3, y: 0.4, radius: 0.05, amplitude: 1, frequency: 2, phase: 0 }, 1)
    await e.step(20)
    const before = e.transfers()!
    await e.dream(['deep', 'light'])
    const dreamt = e.transfers()!
    await e.read()
    const control = e.transfers()!
    const fieldBytes = control.bytes_read - dreamt.bytes_read
    expect(fieldBytes).toBe(2 * 32 * 32 * 4 * 2) // u and u_prev of both fields: the counter counts
    const dreamBytes = dreamt.bytes_read - before.bytes_read
    // per field: the report (4 tallies, 2 x 3 threshold words, the 8 x 8 preview); the books before
    // and after (an energy and 4 ledger totals each); the edit's energy and saturation potential
    // before and after (graphene is nonlinear); the write's and the pulse's, which the device held
    // until these books (the same four sums each); all float32
    const report = 2 * (4 * 4 + 6 * 4 + PREVIEW_SIDE * PREVIEW_SIDE * 4)
    const books = 2 * 2 * (1 + 4) * 4
    const edit = 2 * 2 * 2 * 4
    const held = 2 * 2 * 2 * 2 * 4
    expect(dreamBytes).toBe(report + books + edit + held)
    expect(dreamBytes).toBeLessThan(fieldBytes / 10)
    const cpu = await engineOn('cpu', { size: 16 })
    opened.push(cpu)
    expect(cpu.transfers()).toBeNull()
  })

  test("a dream's runs, its books before and after and its edit's outcomes come back in one read, where each run read on its own made 12, the same timeline to the bit", {
    timeout: GPU_TEST_TIMEOUT,
  }, async () => {
    const opening = { size: 32, fields: 2, material: 'graphene_model', seed: 4 }
    const prepared = async (backend: 'gpu' | 'cpu') => {
      const e = await engineOn(backend, opening)
      opened.push(e)
      await e.write('the river keeps its stones', 1, 0)
      await e.step(15)
      return e
    }
    const reads = async (e: Engine, work: () => Promise<unknown>) => {
      const before = e.transfers()?.reads ?? 0
      await work()
      return (e.transfers()?.reads ?? 0) - before
    }
    // the engine's dream, then one without its report (its samples still in the timeline as it returns);
    // the control: the same dream run through the engine's step, each sampled run read at its end
    const [later, control, cpu] = await Promise.all([prepared('gpu'), prepared('gpu'), prepared('cpu')])
    const booksBefore = await later.books()
    let reports: Awaited<ReturnType<Engine['dream']>> = []
    const counts = [
      [
        await reads(later, async () => (reports = await later.dream(['deep', 'light']))),
        await reads(later, () => later.dream('light', { report: false })),
      ],
      [
        await reads(control, () => dream(control, ['deep', 'light'])),
        await reads(control, () => dream(control, 'light', { report: false })),
      ],
    ]
    await cpu.dream(['deep', 'light'])
    await cpu.dream('light', { report: false })
    // the books before, the edit's outcomes, the books after and the samples in one read; the one without
    // them: its samples' read. The control: 11 sampled runs, each its own read, the rest riding on them
    // and on one more (13 while the outcomes were a read of their own)
    expect(counts).toEqual([
      [1, 1],
      [12, 11],
    ])
    // the books before, taken as the dream began, are those of the engine then
    expect(reports.map((r) => r.energy_before)).toEqual(booksBefore.map((b) => b.energy))
    for (let f = 0; f < 2; f++) {
      const line = later.timeline(f)
      expect(line.map((b) => b.step)).toEqual(Array.from({ length: 61 }, (_, k) => 10 * (k + 1)))
      expect(line).toEqual(control.timeline(f))
      // and the CPU engine's, within the books' tolerance
      line.forEach((b, k) => {
        const want = cpu.timeline(f)[k]
        for (const key of ['energy', 'injected', 'saturation'] as const)
          expect(Math.abs(b[key] - want[key])).toBeLessThanOrEqual(1e-4 * Math.max(1, Math.abs(want.injected)))
      })
    }
    expect(await later.read()).toEqual(await control.read())
  })

  test('a dream without its report (evolve) reads nothing back, and leaves the fields and the books as the dream with it', {
    timeout: GPU_TEST_TIMEOUT,
  }, async () => {
    for (const backend of ['gpu', 'cpu'] as const) {
      const [told, quiet] = await Promise.all(
        [0, 1].map(async () => {
          const e = await engineOn(backend, { size: 32, fields: 2, material: 'graphene_model', seed: 4, timeline_interval: 0 })
          opened.push(e)
          await e.write('the river keeps its stones', 1, 0)
          await e.step(20)
          return e
        }),
      )
      expect(await told.dream(['deep', 'light'])).toHaveLength(2)
      const before = quiet.transfers()
      expect(await quiet.dream(['deep', 'light'], { report: false })).toEqual([])
      const after = quiet.transfers()
      if (backend === 'gpu') expect([after!.reads, after!.bytes_read]).toEqual([before!.reads, before!.bytes_read])
      expect(await quiet.read()).toEqual(await told.read())
      expect(await quiet.books()).toEqual(await told.books())
    }
  })
})
