// A memory is encoded once: the engine's write hands recall the wavefront it added, so the first
// question does not encode the memories' texts again. Control: the same field resumed from its saved
// state (no write in this engine) encodes them on its first question, and both recall the same.
import { afterAll, expect, test, vi } from 'vitest'
import type { Engine } from '../field/engine.js'
import { engineOn } from '../../testing/backends.js'
import { TWELVE } from '../../testing/fixtures.js'

const encoded: string[] = []
vi.mock('../encode/text.js', async (original) => {
  const m = await original<typeof import('../encode/text.js')>()
  return {
    ...m,
    textWavefront: (text: string, ...rest: unknown[]) => {
      encoded.push(text)
      return (m.textWavefront as (...a: unknown[]) => ReturnType<typeof m.textWavefront>)(text, ...rest)
    },
  }
})

const open: Engine[] = []
afterAll(() => open.forEach((e) => e.destroy()))

test("recall reads a memory written in this engine by its write's own pattern, never encoding its text again; resumed from the saved field, the same memories are encoded on the first question and recalled alike", async () => {
  const written = await engineOn('cpu', { size: 48, material: 'ideal_resonator', seed: 5, timeline_interval: 0 })
  open.push(written)
  // twelve texts at one moment: the first question splits that moment over all twelve patterns
  await written.writeMany(TWELVE.map((text) => ({ text })))
  await written.step(20)
  const { u, prev } = await written.read()
  const resumed = await engineOn('cpu', { size: 48, material: 'ideal_resonator', seed: 5, timeline_interval: 0 })
  open.push(resumed)
  await resumed.resume({ u, prev, step_count: written.step_count, memories: written.memories })

  const ask = async (e: Engine) => {
    encoded.length = 0
    const result = await e.recall(TWELVE[3], 3)
    return { result, memoriesEncoded: encoded.filter((t) => TWELVE.includes(t) && t !== TWELVE[3]) }
  }
  const [w, r] = [await ask(written), await ask(resumed)]
  expect(w.result.hits[0]?.text).toBe(TWELVE[3])
  expect(w.memoriesEncoded).toEqual([])
  // control: without the writes, each of the other eleven memories is encoded once
  expect([...r.memoriesEncoded].sort()).toEqual(TWELVE.filter((t) => t !== TWELVE[3]).sort())
  expect(r.result).toEqual(w.result)
})
