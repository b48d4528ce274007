// Dreaming on constructed fields: a standing structure (an eigenmode of the resonator) and a transient
// (a narrow pulse that runs off and rings around), as two fields of one batch.
import { afterEach, describe, expect, test } from 'vitest'
import type { Engine } from '../field/engine.js'
import { engineOn, meanAbsReadBack, softwareGpu } from '../../testing/backends.js'
import { DREAM_PARAMS, dream, observeStability, PREVIEW_SIDE } from './dream.js'

const N = 48
const open: Engine[] = []
afterEach(() => open.splice(0).forEach((e) => e.destroy()))

/** Field 0: the (2, 1) eigenmode of the mirror box, an exact standing wave; field 1: a narrow pulse. */
async function standingAndTransient(backend: 'cpu' | 'gpu' = 'cpu', timeline_interval?: number): Promise<Engine> {
  const e = await engineOn(backend, { size: N, fields: 2, material: 'ideal_resonator', seed: 5, timeline_interval })
  open.push(e)
  const mode = new Float32Array(N * N)
  for (let y = 0; y < N; y++)
    for (let x = 0; x < N; x++) mode[y * N + x] = Math.sin((2 * Math.PI * (x + 1)) / (N + 1)) * Math.sin((Math.PI * (y + 1)) / (N + 1))
  await e.inject(mode, 0)
  await e.pulse({ x: 0.3, y: 0.4, radius: 0.03, amplitude: 1.5, frequency: 0, phase: 0 }, 1)
  await e.step(50)
  return e
}

const kept = (r: { energy_before: number; energy_after: number }) => r.energy_after / r.energy_before

describe('dream', () => {
  for (const mode of ['light', 'deep'] as const) {
    test(`${mode}: the transient loses a larger share of its energy than the standing structure`, async () => {
      const e = await standingAndTransient()
      const [standing, transient] = await dream(e, mode)
      expect(standing.mode).toBe(mode)
      expect(kept(transient)).toBeLessThan(kept(standing))
      expect(kept(transient)).toBeLessThan(0.9) // a real cut, not a rounding difference
      expect(transient.pruned_fraction).toBeCloseTo(DREAM_PARAMS[mode].prune_percentile, 1)
      expect(standing.steps_observed).toBe(DREAM_PARAMS[mode].observe_steps)
      expect(standing.stability_preview).toHaveLength(PREVIEW_SIDE * PREVIEW_SIDE)
      expect(Math.max(...standing.stability_preview)).toBe(1)
    })
  }

  test('deep differs from light: it cuts transients harder and mutates', async () => {
    const [, light] = await dream(await standingAndTransient(), 'light')
    const [, deep] = await dream(await standingAndTransient(), 'deep')
    expect(kept(deep)).toBeLessThan(kept(light))
    expect(light.mutated_cells).toBe(0)
    expect(deep.mutated_cells).toBeGreaterThan(0)
  })

  test('each field of a batch dreams in its own mode; "none" leaves a field unedited', async () => {
    const e = await standingAndTransient()
    const [none, deep] = await dream(e, ['none', 'deep'])
    expect(none).toMatchObject({ mode: 'none', pruned_fraction: 0, mutated_cells: 0 })
    expect(deep.mode).toBe('deep')
    // the edits are in the books: the energy balance still closes
    const [, b] = await e.books()
    expect(Math.abs(b.energy + b.bulk_loss + b.boundary_loss + b.saturation - b.noise_work - b.injected)).toBeLessThan(
      1e-3 * Math.abs(b.injected),
    )
  })

  test('the same dream gives the same field on the CPU and the GPU backend', async () => {
    const fields: Float32Array[] = []
    for (const backend of ['cpu', 'gpu'] as const) {
      const e = await engineOn(backend, { size: 24, material: 'ideal_resonator', seed: 3 })
      open.push(e)
      await e.pulse({ x: 0.4, y: 0.5, radius: 0.08, amplitude: 1, frequency: 2, phase: 0 })
      await dream(e, 'deep')
      fields.push((await e.read()).u)
    }
    const peak = fields[0].reduce((m, v) => Math.max(m, Math.abs(v)), 0)
    expect(fields[1].every((v, i) => Math.abs(v - fields[0][i]) <= 1e-5 * peak)).toBe(true)
  })

  for (const backend of ['cpu', 'gpu'] as const)
    test(`observeStability on the ${backend}: the mean |u| of its samples, the sums kept where the fields live and read once`, async () => {
      // no timeline: its samples would be reads of their own, the same in both
      const [held, control] = [await standingAndTransient(backend, 0), await standingAndTransient(backend, 0)]
      const [steps, samples] = [100, 10]
      const reads = () => held.transfers()?.reads ?? 0
      const before = reads()
      const got = await observeStability(held, steps, samples)
      const readsHeld = reads() - before
      // the control: u read back a sample at a time, its |u| summed and averaged here
      const controlBefore = control.transfers()?.reads ?? 0
      const want = await meanAbsReadBack(control, steps, samples)
      const readsControl = (control.transfers()?.reads ?? 0) - controlBefore
      expect(got.some((v) => v > 0)).toBe(true)
      const peak = want.reduce((m, v) => Math.max(m, v), 0)
      // float32 |u| summed in the same order on both: bit for bit on the CPU and a software adapter
      if (backend === 'cpu' || (await softwareGpu())) expect(new Uint32Array(got.buffer)).toEqual(new Uint32Array(want.buffer))
      else expect(got.every((v, i) => Math.abs(v - want[i]) <= 1e-6 * peak)).toBe(true)
      if (backend === 'gpu') expect([readsHeld, readsControl]).toEqual([1, samples])
      expect(held.step_count).toBe(control.step_count)
      // no steps, no samples: zeros, not the sums of the window before
      expect((await observeStability(held, 0, samples)).every((v) => v === 0)).toBe(true)
    })
})
