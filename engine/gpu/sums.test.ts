// engine/gpu/sums.ts's held sums, the injections, kicks and scalings they book, handed over to go with
// the work after them (Transfers.submitWithNext), against the same calls on the CPU: the books and the
// field come out the same while the holds' uniform slots come round again and their slots' buffer grows.
import { expect, test } from 'vitest'
import { engineOn } from '../../testing/backends.js'
import { rng } from '../util/rng.js'

test('changes booked with held sums handed over: the CPU books and field, in about a submit a change', async () => {
  const [n, fields, rounds] = [16, 2, 60]
  const run = async (backend: 'gpu' | 'cpu') => {
    const engine = await engineOn(backend, {
      size: n,
      fields,
      material: 'europium_crystal',
      seed: 4,
      noise: 0,
      timeline_interval: 0,
      recall_history: false,
    })
    try {
      const rand = rng(9)
      const wave = () => Float32Array.from({ length: n * n }, () => 0.3 * (rand() - 0.5))
      const submits = engine.transfers()?.submits ?? 0
      // europium saturates: each change holds energy and potential before and after, 4 uniform slots
      // of the 192 (so they come round again), and 4 slots of the sums' first 64 (so those grow twice)
      for (let r = 0; r < rounds; r++) {
        // the kick's pattern and the next injection's waves go up on the injector's next side (no
        // submit); the second scaling's mask goes where the first's is read (a submit)
        const change = ['inject', 'kick', 'inject', 'scale', 'scale'][r % 5]
        if (change === 'inject') await engine.injectMany([wave(), r % 10 ? wave() : undefined])
        else if (change === 'kick') await engine.kick(wave(), [r % fields])
        else await engine.scale(Float32Array.from({ length: fields * n * n }, () => 0.8 + 0.2 * rand()))
        await engine.step(3)
      }
      const loop = (engine.transfers()?.submits ?? 0) - submits
      return { loop, books: await engine.books(), state: await engine.read() }
    } finally {
      engine.destroy()
    }
  }
  const [g, c] = [await run('gpu'), await run('cpu')]
  for (let f = 0; f < fields; f++) {
    expect(g.books[f].step).toBe(3 * rounds)
    expect(Math.abs(g.books[f].injected - c.books[f].injected)).toBeLessThanOrEqual(1e-4 * Math.abs(c.books[f].injected))
    expect(Math.abs(g.books[f].energy - c.books[f].energy)).toBeLessThanOrEqual(1e-4 * c.books[f].energy)
    expect(Math.abs(g.books[f].saturation - c.books[f].saturation)).toBeLessThanOrEqual(1e-4 * Math.abs(c.books[f].injected))
  }
  const peak = c.state.u.reduce((m, v) => Math.max(m, Math.abs(v)), 0)
  expect(peak).toBeGreaterThan(0)
  for (const [a, b] of [
    [g.state.u, c.state.u],
    [g.state.prev, c.state.prev],
  ])
    expect(a.reduce((m, v, i) => Math.max(m, Math.abs(v - b[i])), 0)).toBeLessThanOrEqual(1e-5 * peak)
  // the holds, the changes and the steps go with the work after them: they are submitted when a mask
  // goes up where the last scaling's is read (1 change in 5 here), where the sums' slots grow (twice),
  // and where 16 command buffers wait (DEFERRED_MAX: some 9 more). 23 here; with the injector's waves in
  // one buffer (where each injection or kick submitted the change before it), 38; before the holds
  // were handed over, each change was three submits: 180. (The dream's scratch is new in this process,
  // a test file's own: buffers kept from another engine would add a clear each at the first scaling)
  expect(g.loop).toBeLessThanOrEqual(rounds / 5 + 12)
}, 120_000)
