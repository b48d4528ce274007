// Text to wavefront: version 2 pinned to golden values (a change of encoding must be deliberate; version
// 3's are in text3.test.ts), the same on both backends, and, in both versions, shared words give shared
// structure while unrelated texts stay apart.
import { afterAll, describe, expect, test } from 'vitest'
import type { Engine } from '../field/engine.js'
import { engineOn, softwareGpu } from '../../testing/backends.js'
import { cosine } from '../util/vector.js'
import { blake3Words, type EncodingVersion, textParts3, textSources, textWavefront } from './text.js'

describe('golden values (encoding version 2)', () => {
  test('the word stream is blake3: the first words of "hello" are its published digest, little-endian', async () => {
    // blake3("hello") = ea8f163d b3868292 5e4491c5 e58d4bb3 ...
    expect([...(await blake3Words('hello', 4))]).toEqual([0x3d168fea, 0x928286b3, 0xc591445e, 0xb34b8de5])
  })

  test('past 4,096 words the stream continues from a counter-suffixed input (hash-wasm caps one output at 2^17 bits)', async () => {
    const long = await blake3Words('hello', 5000)
    expect([...long.subarray(0, 4)]).toEqual([0x3d168fea, 0x928286b3, 0xc591445e, 0xb34b8de5])
    expect([...long.subarray(4096)]).toEqual([...(await blake3Words('hello\0#1', 904))])
  })

  test("the encoding kernel's blake3 gives hash-wasm's words: empty input, block edges, several blocks, a whole chunk, multi-byte UTF-8, past 4,096 words", async () => {
    const inputs = [
      '',
      'hello',
      'x'.repeat(63),
      'x'.repeat(64),
      'x'.repeat(65),
      'é'.repeat(300),
      'y'.repeat(1000),
      'z'.repeat(1024),
      'Résonance 結晶 🙂',
    ]
    for (const input of inputs)
      for (const count of [1, 17, 100, 4096, 5000]) {
        const [kernel, control] = await Promise.all([blake3Words(input, count), blake3Words(input, count, 'hash-wasm')])
        expect([...kernel], `${input.length} characters, ${count} words`).toEqual([...control])
      }
  })

  const golden = {
    'cold glyph': {
      identity0: { x: 0.6177232663054019, y: 0.6551100720837711, radius: 0.01875, amplitude: -1, frequency: 0, phase: 0 },
      words: { cold: 0.3038182587455958, glyph: 0.11744366961531341 },
      samples: [0, 0.1400116, 0.2876508, 0.2956094],
    },
    hello: {
      identity0: { x: 0.7140273833833635, y: 0.3186730871442705, radius: 0.01875, amplitude: -1, frequency: 0, phase: 0 },
      words: { hello: 0.8642822634801268 },
      samples: [0, 0.1971627, 0, 0],
    },
    'Résonance 結晶': {
      identity0: { x: 0.7843741021677851, y: 0.08498332004994154, radius: 0.01875, amplitude: 1, frequency: 0, phase: 0 },
      words: { résonance: 0.5244176092650741, 結晶: 0.3270147126726806 },
      samples: [0, 0, -0.5433605, -0.0494314],
    },
  }

  for (const [text, g] of Object.entries(golden)) {
    test(`"${text}": first identity source, word sources and wavefront samples at N = 32`, async () => {
      const s = await textSources(text, 32)
      expect(s.identity).toHaveLength(63) // 1,000 per part at N = 128, scaled by the area
      for (const [k, v] of Object.entries(g.identity0)) expect(s.identity[0][k as keyof typeof g.identity0]).toBeCloseTo(v, 12)
      expect(Object.fromEntries(s.words.map((w) => [w.word, w.sources[0].x]))).toEqual(g.words)
      const w = await textWavefront(text, 32, { version: 2 })
      const samples = [w[0], w[16 * 32 + 16], w[10 * 32 + 20], w[25 * 32 + 7]]
      samples.forEach((v, i) => expect(v).toBeCloseTo(g.samples[i], 6))
    })
  }
})

describe('the WebAssembly kernel (version 2)', () => {
  test("gives the TypeScript twin's wavefront bit for bit: odd and even sides, one band of rows and many, many words", async () => {
    const cases: [string, number][] = [
      ['hello', 16],
      ['cold glyph', 33], // n * n not a multiple of 4: the padded SIMD passes
      ['Résonance 結晶, the cold glyph remembers amber lattices of night', 48],
      ['x', 257], // two bands of rows
      ['warm river stones', 600], // ten bands
    ]
    for (const [text, n] of cases) {
      const [wasm, twin] = await Promise.all([
        textWavefront(text, n, { version: 2 }),
        textWavefront(text, n, { version: 2, kernel: 'typescript' }),
      ])
      expect(wasm.length, `${text} at N = ${n}`).toBe(n * n)
      expect(Buffer.from(wasm.buffer).equals(Buffer.from(twin.buffer)), `${text} at N = ${n}`).toBe(true)
    }
  }, 60_000)

  test('texts encoded at once, and a small field after a large one, come out as each alone', async () => {
    const v2 = { version: 2 } as const
    const alone = await textWavefront('amber lattice', 40, { ...v2, kernel: 'typescript' })
    const together = await Promise.all([
      textWavefront('river', 300, v2),
      textWavefront('amber lattice', 40, v2),
      textWavefront('cold', 64, v2),
    ])
    expect([...together[1]]).toEqual([...alone])
    expect([...(await textWavefront('amber lattice', 40, v2))]).toEqual([...alone])
  })
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
    // the GPU encodes on the device: the same bits on a software adapter; on hardware each of the text's
    // parts may add a few ulp of the peak (1 x 0.8) where the driver fuses operations (engine/gpu/encode3.test.ts)
    if (await softwareGpu()) expect(fields[0]).toEqual(fields[1])
    else {
      const parts = textParts3('the cold glyph remembers').inputs.length
      fields[0].forEach((v, i) => expect(Math.abs(v - fields[1][i])).toBeLessThanOrEqual(parts * 2 ** -21))
    }
    // the write's weight is the f32 importance on every backend
    expect(fields[1]).toEqual(direct.map((v) => Math.fround(v * Math.fround(0.8))))
  })

  test('case and punctuation do not change the words, but do change the identity', async () => {
    const a = await textSources('Cold, GLYPH!', 32)
    const b = await textSources('cold glyph', 32)
    expect(a.words).toEqual(b.words)
    expect(a.identity).not.toEqual(b.identity)
  })

  test('empty text is refused with a clear error', async () => {
    await expect(textWavefront('   ', 32)).rejects.toThrow('text must be a non-empty string')
  })
})

describe.each([2, 3] as EncodingVersion[])('wavefronts of encoding version %i', (version) => {
  test('peak amplitude is 1 (so importance is the peak of what write adds)', async () => {
    const w = await textWavefront('amber lattice', 64, { version })
    expect(Math.max(...w.map(Math.abs))).toBeCloseTo(1, 6)
  })

  test('texts that share a word correlate; unrelated texts much less', async () => {
    const corr = async (a: string, b: string) => cosine(await textWavefront(a, 64, { version }), await textWavefront(b, 64, { version }))
    const sharing = await Promise.all([
      corr('glyph', 'the cold glyph'),
      corr('river', 'warm river stones'),
      corr('amber', 'amber lattice of night'),
      corr('cold', 'cold glyph'),
    ])
    const unrelated = await Promise.all([
      corr('glyph', 'warm river stones'),
      corr('amber', 'the cold glyph'),
      corr('river', 'amber lattice of night'),
      corr('night sky', 'cold glyph'),
    ])
    for (const c of sharing) expect(c).toBeGreaterThan(0.2)
    for (const c of unrelated) expect(Math.abs(c)).toBeLessThan(0.1)
  })

  test('broadband: unrelated texts correlate by mean |r| <= 0.03 at N = 128 over 1,000 pairs', async () => {
    // the bound; 1,000 sources of 0.6 cells per part leave some 3,000 independent patches
    // 1,000 texts with no word in common, each paired with the next (cyclic): 1,000 distinct pairs
    const waves = await Promise.all(Array.from({ length: 1000 }, (_, i) => textWavefront(`stone${i} lantern${i}`, 128, { version })))
    const mean = waves.reduce((s, w, i) => s + Math.abs(cosine(w, waves[(i + 1) % waves.length])), 0) / waves.length
    expect(mean).toBeLessThanOrEqual(0.03)
  }, 120_000)

  test('the encoding stays in the band the grid carries: most of its energy lies below half the Nyquist wavenumber', async () => {
    // energy by |k| from the 2D DFT of one row-set would be costly; the Laplacian's Rayleigh quotient
    // <w, -L w> / <w, w> (8 at Nyquist, 0 for a flat field) measures the same: the mean squared wavenumber
    const n = 64
    const w = await textWavefront('the cold glyph remembers', n, { version })
    const { negLaplacian } = await import('../recall/adjoint.js')
    const q = negLaplacian(w, n)
    const rayleigh = w.reduce((s, v, i) => s + v * q[i], 0) / w.reduce((s, v) => s + v * v, 0)
    expect(rayleigh).toBeLessThan(4) // below the mean of white noise (4): smoother than cell-to-cell noise
  })
})
