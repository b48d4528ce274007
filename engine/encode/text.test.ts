// Text to wavefront: pinned to golden values (a change of encoding must be deliberate), the same on
// both backends, and shared words give shared structure.
import { afterAll, describe, expect, test } from 'vitest'
import type { Engine } from '../field/engine.js'
import { engineOn } from '../testing/backends.js'
import { cosine } from '../util/vector.js'
import { blake3Words, textSources, textWavefront } from './text.js'

describe('golden values (encoding version 1)', () => {
  test('the word stream is blake3: the first words of "hello" are its published digest, little-endian', async () => {
    // blake3("hello") = ea8f163d b3868292 5e4491c5 e58d4bb3 ...
    expect([...(await blake3Words('hello', 4))]).toEqual([0x3d168fea, 0x928286b3, 0xc591445e, 0xb34b8de5])
  })

  const golden = {
    'cold glyph': {
      identity0: { x: 0.604142785957083, y: 0.6607646371703595, radius: 0.10638275146018714, amplitude: -1, frequency: 1.9231189666315913, phase: 1.3968048394424915 },
      words: { cold: 0.742122451402247, glyph: 0.4022740478394553 },
      samples: [0, 0.307448, -0.1408826, -0.5278468],
    },
    hello: {
      identity0: { x: 0.500500315404497, y: 0.24450228174682706, radius: 0.07208600184880198, amplitude: -1, frequency: 1.309850960969925, phase: 0.524188901634655 },
      words: { hello: 0.4159894739277661 },
      samples: [0, 0.7137488, -0.2746171, -0.6677321],
    },
    'Résonance 結晶': {
      identity0: { x: 0.6369070638203993, y: 0.7610976236639544, radius: 0.0722614484303631, amplitude: 1, frequency: 0.7078301291912794, phase: 1.6821194274831663 },
      words: { 'résonance': 0.23069369040895252, '結晶': 0.7659130240557716 },
      samples: [0, 0.5510384, -0.5475741, 0.2197021],
    },
  }

  for (const [text, g] of Object.entries(golden)) {
    test(`"${text}": first identity source, word sources and wavefront samples`, async () => {
      const s = await textSources(text)
      expect(s.identity).toHaveLength(24)
      for (const [k, v] of Object.entries(g.identity0)) expect(s.identity[0][k as keyof typeof g.identity0]).toBeCloseTo(v, 12)
      expect(Object.fromEntries(s.words.map((w) => [w.word, w.sources[0].x]))).toEqual(g.words)
      const w = await textWavefront(text, 32)
      const samples = [w[0], w[16 * 32 + 16], w[10 * 32 + 20], w[25 * 32 + 7]]
      samples.forEach((v, i) => expect(v).toBeCloseTo(g.samples[i], 6))
    })
  }
})

describe('wavefronts', () => {
  const engines: Engine[] = []
  afterAll(() => engines.forEach((e) => e.destroy()))

  test('the same text gives the same wavefront on the GPU and the CPU backend', async () => {
    const fields: Float32Array[] = []
    for (const backend of ['gpu', 'cpu'] as const) {
      const e = await engineOn(backend, { size: 48, material: 'ideal_resonator' })
      engines.push(e)
      expect(e.backend).toBe(backend)
      await e.write('the cold glyph remembers', 0.8)
      fields.push((await e.read()).u)
    }
    const direct = await textWavefront('the cold glyph remembers', 48)
    expect(fields[0]).toEqual(fields[1])
    expect(fields[1]).toEqual(direct.map((v) => Math.fround(v * 0.8)))
  })

  test('peak amplitude is 1 (so importance is the peak of what write adds)', async () => {
    const w = await textWavefront('amber lattice', 64)
    expect(Math.max(...w.map(Math.abs))).toBeCloseTo(1, 6)
  })

  test('texts that share a word correlate; unrelated texts much less', async () => {
    const corr = async (a: string, b: string) => cosine(await textWavefront(a, 64), await textWavefront(b, 64))
    const sharing = await Promise.all([corr('glyph', 'the cold glyph'), corr('river', 'warm river stones'), corr('amber', 'amber lattice of night'), corr('cold', 'cold glyph')])
    const unrelated = await Promise.all([corr('glyph', 'warm river stones'), corr('amber', 'the cold glyph'), corr('river', 'amber lattice of night'), corr('night sky', 'cold glyph')])
    const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length
    for (const c of sharing) expect(c).toBeGreaterThan(0.2)
    // Blobs of radius 0.05..0.12 leave about 25 independent patches, so chance correlation is about 0.2 at most.
    expect(mean(unrelated.map(Math.abs))).toBeLessThan(0.15)
    expect(mean(sharing)).toBeGreaterThan(3 * mean(unrelated.map(Math.abs)))
  })

  test('case and punctuation do not change the words, but do change the identity', async () => {
    const a = await textSources('Cold, GLYPH!')
    const b = await textSources('cold glyph')
    expect(a.words).toEqual(b.words)
    expect(a.identity).not.toEqual(b.identity)
  })

  test('empty text is refused with a clear error', async () => {
    await expect(textWavefront('   ', 32)).rejects.toThrow('text must be a non-empty string')
  })
})
