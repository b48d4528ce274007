// Encoding version 3 made on the device (shaders/encode3.wgsl, ./encode3.ts) against its CPU twin
// (engine/encode/text3.ts), the streams hashed by shaders/blake3.wgsl: the same wavefront at odd and even
// sides, for one word, many, and a text over one blake3 chunk (hashed on the host); the superposition
// lands in the field; a GPU engine's write against the CPU engine's, and what a write costs.
import { afterAll, describe, expect, test } from 'vitest'
import { engineOn, gpuBackend } from '../../testing/backends.js'
import { SOURCE_RADIUS_CELLS, sourceCount, textParts3, textWavefront } from '../encode/text.js'
import type { TransferCounts } from '../field/backend.js'
import type { GpuFieldBackend } from './backend.js'
import { GpuEncoder3 } from './encode3.js'

const GPU_TEST_TIMEOUT = 300_000
const opened: { destroy(): void }[] = []
afterAll(() => opened.forEach((b) => b.destroy()))

const LONG = Array.from({ length: 90 }, (_, k) => `word${k * 7919} glyph${k % 13}`).join(' ')

/**
 * Differences of the GPU's wavefront from the twin's: cells whose bits differ, and the largest
 * difference. Addition and multiplication are exactly rounded in WGSL, so on an adapter that does
 * not fuse them (SwiftShader) only the division could differ; a fused multiply-add (NVIDIA) rounds
 * once where the twin rounds twice, half an ulp of out a part, and the division may be off by 2.5 ulp.
 */
function compare(got: Float32Array, want: Float32Array): { differing: number; largest: number } {
  let differing = 0
  let largest = 0
  for (let i = 0; i < want.length; i++) {
    if (!Object.is(got[i], want[i])) differing++
    largest = Math.max(largest, Math.abs(got[i] - want[i]))
  }
  return { differing, largest }
}

describe('encoding version 3 on the GPU against text3.ts', () => {
  test.each([
    [16, 'one word', 'cold'],
    [33, 'eight words', 'the cold glyph hums under the quiet ice'],
    [130, 'a repeated word', 'Amber lattice, amber song: the lattice remembers.'],
    [200, 'streams of two blake3 inputs each', 'river stones'],
    [64, `${LONG.length} characters, 103 words`, LONG],
  ])('n = %i, %s', { timeout: GPU_TEST_TIMEOUT }, async (n, _, text) => {
    const gpu = (await gpuBackend(n, 1)) as GpuFieldBackend
    opened.push(gpu)
    const parts = textParts3(text)
    // the field held nothing: it holds the wavefront now, in u and u_prev
    await gpu.superpose3(0, [{ text, importance: 1 }], 0)
    const { u: got, prev } = await gpu.read()
    expect(prev).toEqual(got)
    const want = await textWavefront(text, n, { version: 3, kernel: 'typescript' })
    const { differing, largest } = compare(got, want)
    // the peak is 1 and every part adds at most a few ulp of 1 (2^-23) where operations fuse
    expect(largest).toBeLessThanOrEqual(parts.inputs.length * 2 ** -21)
    if (/swiftshader/i.test(gpu.description)) expect(differing).toBe(0)
    expect(Math.max(...want.map(Math.abs))).toBe(1)
  })
})

test('calls at once take turns (recall makes its null patterns at once): each text its own wavefront, as made one at a time', {
  timeout: GPU_TEST_TIMEOUT,
}, async () => {
  const n = 48
  const gpu = (await gpuBackend(n, 1)) as GpuFieldBackend
  opened.push(gpu)
  const encoder = new GpuEncoder3(gpu, gpu.device.createBuffer({ size: 4 * n * n, usage: 0x80 | 0x4 | 0x8 }), SOURCE_RADIUS_CELLS)
  const texts = ['granite steps of the old tower', 'lighthouse beam across the bay', 'cold', 'amber lattice song']
  const together = await Promise.all(texts.map(async (t) => (await encoder.encode([textParts3(t)]))[0]))
  for (const [k, t] of texts.entries()) {
    const want = await textWavefront(t, n, { version: 3, kernel: 'typescript' })
    const { differing, largest } = compare(together[k], want)
    expect(largest).toBeLessThanOrEqual(textParts3(t).inputs.length * 2 ** -21)
    if (/swiftshader/i.test(gpu.description)) expect(differing).toBe(0)
  }
})

test('parts in groups where one buffer cannot hold every stream, one hashed on the host (its input over one blake3 chunk): the same wavefronts', {
  timeout: GPU_TEST_TIMEOUT,
}, async () => {
  const n = 24
  const gpu = (await gpuBackend(n, 1)) as GpuFieldBackend
  opened.push(gpu)
  const long = 'amber '.repeat(180) // 1,080 bytes, and the identity's domain before it
  const texts = [textParts3(long, 1), textParts3('cold glyph', 0.5)]
  // room for 2 parts' streams: 5 parts (2 and 3) in 3 groups, made by each pass
  const encoder = new GpuEncoder3(
    gpu,
    gpu.device.createBuffer({ size: 4 * n * n, usage: 0x80 | 0x4 | 0x8 }),
    SOURCE_RADIUS_CELLS,
    8 * 2 * sourceCount(n) + 4,
  )
  const before = gpu.transfers.snapshot()
  const got = await encoder.encode(texts)
  // the uniforms, the inputs and their places, the scales, and the long identity's stream in each pass
  expect(gpu.transfers.snapshot().writes - before.writes).toBe(4 + 2)
  for (const [k, text] of [long, 'cold glyph'].entries()) {
    const want = await textWavefront(text, n, { version: 3, kernel: 'typescript' })
    const { differing, largest } = compare(got[k], want)
    expect(largest).toBeLessThanOrEqual(texts[k].inputs.length * 2 ** -21)
    if (/swiftshader/i.test(gpu.description)) expect(differing).toBe(0)
  }
  encoder.destroy()
})

describe('a write on the GPU engine encodes on the device', () => {
  const quiet = { size: 48, material: 'europium_crystal', temperature_k: 0 } as const
  const TEXTS = [
    { text: 'amber lattice hums', importance: 1 },
    { text: 'the cold glyph remembers', importance: 0.5 },
  ]

  test("the CPU engine's field and books; recall finds what it wrote, an erased field nothing; the counts of a write", {
    timeout: GPU_TEST_TIMEOUT,
  }, async () => {
    const [gpu, cpu] = [await engineOn('gpu', quiet), await engineOn('cpu', quiet)]
    opened.push(gpu, cpu)
    for (const e of [gpu, cpu]) {
      await e.writeMany(TEXTS)
      await e.step(10)
    }
    await Promise.all([gpu, cpu].map((e) => e.write('river stones')))
    const [g, c] = [await gpu.read(), await cpu.read()]
    expect(Math.max(...c.u.map(Math.abs))).toBeGreaterThan(0.5)
    // ten steps of float32 on either backend apart, not the encoding: within 1e-5 of the peak
    c.u.forEach((v, i) => expect(Math.abs(g.u[i] - v)).toBeLessThanOrEqual(1e-5))
    const [[bg], [bc]] = [await gpu.books(), await cpu.books()]
    expect(Math.abs(bg.injected - bc.injected)).toBeLessThan(1e-5 * bc.injected)
    expect(Math.abs(bg.energy - bc.energy)).toBeLessThan(1e-5 * bc.energy)

    const hits = await gpu.recall('amber lattice', 2)
    expect(hits.hits[0]?.text).toBe('amber lattice hums')
    expect((await cpu.recall('amber lattice', 2)).hits.map((h) => h.memory)).toEqual(hits.hits.map((h) => h.memory))
    await gpu.scale(new Float32Array(48 * 48))
    expect((await gpu.recall('amber lattice', 2)).hits).toEqual([])

    // what one write costs, against the path it replaced, in the same run: its wavefront made on the host and injected
    const text = 'river stones' // three parts: the identity and two words
    const counts = [gpu.transfers()!]
    await gpu.write(text)
    counts.push(gpu.transfers()!)
    await gpu.inject(await textWavefront(text, 48))
    counts.push(gpu.transfers()!)
    const [write, host] = [0, 1].map((k) =>
      Object.fromEntries(Object.entries(counts[k]).map(([key, v]) => [key, counts[k + 1][key as keyof TransferCounts] - v])),
    )
    const [parts, cells] = [3, 48 * 48]
    // the books' sums stay on the device on both paths (until the books are read); a write reads back
    // only the parts' energies (8 bytes each): its wavefront stays on the device, kept for recall
    expect(host.reads).toBe(0)
    expect(write.reads).toBe(1)
    expect(write.bytes_read).toBe(8 * parts)
    // the write submits its encoding's two (the held sums before it go with the first); the copy of the
    // saturating field's state kept for recall, the held sums after it, and all of the host's injection
    // go with the work after them (Transfers.submitWithNext)
    expect([write.submits, host.submits]).toEqual([2, 0])
    // up: the parts' inputs (one 64-byte block each), their places, two uniform slots and a scale each, not the wavefront
    expect(write.bytes_written - host.bytes_written).toBe(parts * (64 + 8 + 2 * 256 + 4) - 4 * cells)
    expect(write.writes - host.writes).toBe(5 - 2)
    // an empty text is refused before anything goes up, as on the host
    await expect(gpu.write(' ')).rejects.toThrow(/non-empty/)
  })
})
