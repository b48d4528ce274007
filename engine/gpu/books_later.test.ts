// engine.booksLater on the GPU (engine/gpu/sums.ts releaseLater through engine/gpu/transfers.ts ride)
// against the same calls on the CPU: books taken on the device at one moment come back with the
// engine's next read, as they were then, and the books after them still add up.
import { expect, test } from 'vitest'
import { engineOn } from '../../testing/backends.js'
import { rng } from '../util/rng.js'

test("books taken for later are the books of their moment, come back with the device's next read, and keep the books after them whole", async () => {
  const opened = await Promise.all(
    (['gpu', 'cpu'] as const).map((backend) =>
      engineOn(backend, { size: 32, fields: 3, material: 'europium_crystal', seed: 2, noise: 0, timeline_interval: 0 }),
    ),
  )
  try {
    const runs = []
    for (const engine of opened) {
      const rand = rng(5)
      const wave = () => Float32Array.from({ length: 32 * 32 }, () => rand() - 0.5)
      await engine.injectMany([wave(), wave(), wave()])
      await engine.step(20)
      const reads = engine.transfers()?.reads ?? 0
      const later = engine.booksLater()
      // what comes after: a kick (booked), steps, and a read of the engine's (the perturbation's)
      await engine.kick(wave(), [1])
      await engine.step(10)
      await engine.read([0])
      const taken = await later()
      const readsTaken = (engine.transfers()?.reads ?? 0) - reads
      const now = await engine.books()
      // the control: the same read alone
      const before = engine.transfers()?.reads ?? 0
      await engine.read([0])
      runs.push({ taken, now, readsTaken, alone: (engine.transfers()?.reads ?? 0) - before })
    }
    const [g, c] = runs
    // the GPU's rode on the read after them: no read of their own; the CPU reads none
    expect(g.readsTaken).toBe(g.alone)
    expect(g.alone).toBeGreaterThan(0)
    for (const run of runs) {
      // the books of their moment: before the kick, at step 20
      for (let f = 0; f < 3; f++) {
        expect(run.taken[f].step).toBe(20)
        expect(run.now[f].step).toBe(30)
      }
      expect(run.now[1].injected).toBeGreaterThan(run.taken[1].injected)
      expect(run.now[0].injected).toBe(run.taken[0].injected)
    }
    // alike on both backends, within the books' tolerance (engine/field/engine.test.ts)
    for (const [a, b] of [
      [g.taken, c.taken],
      [g.now, c.now],
    ])
      for (let f = 0; f < 3; f++) {
        expect(Math.abs(a[f].injected - b[f].injected)).toBeLessThanOrEqual(1e-4 * b[f].injected)
        expect(Math.abs(a[f].energy - b[f].energy)).toBeLessThanOrEqual(1e-4 * b[f].energy)
      }
  } finally {
    for (const e of opened) e.destroy()
  }
})

test('books taken for later, then steps, an injection and the books now asked for first: each as the books read at its moment', async () => {
  /** The same run, with the books of step 20 taken for later or read at once (the control). */
  const scenario = async (backend: 'gpu' | 'cpu', deferred: boolean) => {
    const engine = await engineOn(backend, { size: 24, fields: 2, material: 'europium_crystal', seed: 3, noise: 0, timeline_interval: 10 })
    try {
      const rand = rng(7)
      const wave = () => Float32Array.from({ length: 24 * 24 }, () => rand() - 0.5)
      await engine.injectMany([wave(), wave()])
      await engine.step(20)
      await engine.injectMany([wave(), undefined])
      const later = deferred ? engine.booksLater() : undefined
      const atOnce = deferred ? undefined : await engine.books()
      // steps at once (no timeline sample: nothing settled), an injection, then steps whose timeline
      // samples settle the books held, all before the books taken are asked for
      await engine.step(5)
      await engine.injectMany([undefined, wave()])
      await engine.step(45)
      const now = await engine.books()
      return { taken: atOnce ?? (await later!()), now }
    } finally {
      engine.destroy()
    }
  }
  for (const backend of ['gpu', 'cpu'] as const) {
    const [got, want] = [await scenario(backend, true), await scenario(backend, false)]
    expect(got).toEqual(want)
    for (let f = 0; f < 2; f++) expect([got.taken[f].step, got.now[f].step]).toEqual([20, 70])
    expect(got.now[1].injected).toBeGreaterThan(got.taken[1].injected)
  }
})

test("a run that takes a timeline sample brings the held sums of the changes before it in its samples' read: one read, the CPU engine's timeline", async () => {
  const opened = await Promise.all(
    (['gpu', 'cpu'] as const).map((backend) =>
      engineOn(backend, {
        size: 24,
        fields: 2,
        material: 'europium_crystal',
        seed: 4,
        noise: 0,
        timeline_interval: 10,
        recall_history: false,
      }),
    ),
  )
  try {
    const runs = []
    for (const engine of opened) {
      const rand = rng(9)
      const wave = () => Float32Array.from({ length: 24 * 24 }, () => rand() - 0.5)
      const reads = () => engine.transfers()?.reads ?? 0
      const at = reads()
      // a change, then a run that samples
      await engine.injectMany([wave(), wave()])
      await engine.step(10)
      const changed = reads() - at
      // the control: a run that samples with no change before it
      await engine.step(10)
      const quiet = reads() - at - changed
      // a change, a run too short to sample (nothing read), then one that samples: its read brings them
      await engine.injectMany([undefined, wave()])
      await engine.step(4)
      const short = reads() - at - changed - quiet
      await engine.step(6)
      const later = reads() - at - changed - quiet - short
      runs.push({ counts: [changed, quiet, short, later], timeline: [0, 1].map((f) => engine.timeline(f)) })
    }
    const [g, c] = runs
    expect(g.counts).toEqual([1, 1, 0, 1])
    expect(c.counts).toEqual([0, 0, 0, 0])
    // the books of each sample, the changes before it booked, alike on both backends (the books' tolerance)
    for (let f = 0; f < 2; f++) {
      expect(g.timeline[f].map((b) => b.step)).toEqual([10, 20, 30])
      g.timeline[f].forEach((b, k) => {
        const want = c.timeline[f][k]
        for (const key of ['energy', 'injected', 'saturation'] as const)
          expect(Math.abs(b[key] - want[key])).toBeLessThanOrEqual(1e-4 * Math.abs(want.injected))
      })
    }
    // the second change is in the third sample's books, not in the second's
    expect(g.timeline[1][2].injected).toBeGreaterThan(g.timeline[1][1].injected)
    expect(g.timeline[0][2].injected).toBe(g.timeline[0][1].injected)
  } finally {
    for (const e of opened) e.destroy()
  }
})
