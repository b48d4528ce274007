// A memory is encoded once: the engine's write hands recall the wavefront it added, so the first
// question does not encode the memories' texts again. Control: the same field resumed from its saved
// state (no write in this engine) encodes them on its first question, and both recall the same.
// Within the bytes recall keeps (recall_cache_bytes): below what the memories take, they are encoded
// again.
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

test('with recall_cache_bytes of four patterns recall keeps four: the first question encodes the memories whose written wavefronts were dropped, the next (after a step) remakes patterns it dropped; control, the default keeps all twelve and encodes none; the answers are the same', async () => {
  const pattern = 4 * 48 * 48
  const questions = async (recall_cache_bytes?: number) => {
    const e = await engineOn('cpu', { size: 48, material: 'ideal_resonator', seed: 5, timeline_interval: 0, recall_cache_bytes })
    open.push(e)
    await e.writeMany(TWELVE.map((text) => ({ text })))
    await e.step(20)
    const asked: { result: Awaited<ReturnType<Engine['recall']>>; memoriesEncoded: number }[] = []
    for (let q = 0; q < 2; q++) {
      encoded.length = 0
      const result = await e.recall(TWELVE[3], 3)
      asked.push({ result, memoriesEncoded: encoded.filter((t) => TWELVE.includes(t) && t !== TWELVE[3]).length })
      // a step: the next question reads the moment's patterns and splits it again
      await e.step(1)
    }
    return asked
  }
  const [small, control] = [await questions(4 * pattern), await questions()]
  expect(control.map((q) => q.memoriesEncoded)).toEqual([0, 0])
  // the four written last are kept; of the eight before them, all but the question's own text are encoded
  expect(small[0].memoriesEncoded).toBe(7)
  expect(small[1].memoriesEncoded).toBeGreaterThan(0)
  expect(small[0].result.hits[0]?.text).toBe(TWELVE[3])
  small.forEach((q, k) => expect(q.result).toEqual(control[k].result))
  await expect(engineOn('cpu', { size: 48, recall_cache_bytes: 1.5 })).rejects.toThrow('recall_cache_bytes must be a whole number')
})
