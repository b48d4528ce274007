// Encoding version 3: its weight table, sources and wavefronts pinned to golden values, its footprint
// inside the padded part at every side, and the WebAssembly kernel equal to the TypeScript twin bit for
// bit. Its statistical properties are tested beside version 2's (text.test.ts).
import { describe, expect, test } from 'vitest'
import { SOURCE_RADIUS_CELLS, sourceCount, textStreams, textWavefront } from './text.js'
import { gridRange, gridSource, SUBCELLS, weightTable } from './text3.js'

const v3 = { version: 3 } as const

describe('golden values (encoding version 3)', () => {
  test('the weight table: round(65536 g(dx) g(dy)) at a few sub-positions and taps, symmetric about the cell centre', () => {
    const w = weightTable(SOURCE_RADIUS_CELLS)
    expect(w).toHaveLength(16 * 16 * 4 * 4)
    const at = (fy: number, fx: number, ty: number, tx: number) => w[((fy * 16 + fx) * 4 + ty) * 4 + tx]
    // a source at sub-position 7 or 8 lies 1/32 cell from the centre of its nearest tap
    expect([at(7, 7, 2, 2), at(8, 8, 1, 1), at(7, 7, 1, 1), at(8, 8, 2, 2)]).toEqual([65358, 65358, 4834, 4834])
    expect([at(0, 0, 0, 0), at(0, 0, 1, 1), at(0, 0, 2, 2), at(15, 15, 2, 2), at(0, 15, 1, 3), at(15, 0, 3, 1)]).toEqual([
      97, 29923, 35597, 29923, 1706, 1706,
    ])
  })

  test('every source block lies inside the (n + 4)^2 padded part, for n = 16 .. 4,096', () => {
    for (let n = 16; n <= 4096; n++) {
      const { lo, hi } = gridRange(n)
      expect(lo).toBe(Math.ceil((2 * n * SUBCELLS) / 25))
      for (const w of [0, 2 ** 32 - 1]) {
        const { x } = gridSource(new Uint32Array([w, w]), 0, n)
        expect(x >= lo && x < hi, `n = ${n}, w = ${w}`).toBe(true)
        // the block's first column in the padded part, and its last
        const first = (x >> 4) + ((x & 15) >> 3)
        expect(first >= 0 && first + 3 <= n + 3, `n = ${n}, w = ${w}`).toBe(true)
      }
    }
  })

  const golden = {
    'cold glyph': {
      first: [
        { x: 395, y: 242, sign: 1 },
        { x: 333, y: 293, sign: 1 },
        { x: 335, y: 402, sign: 1 },
      ],
      samples: [0, 0.09055684506893158, 0.34215185046195984, 0.20925651490688324],
    },
    hello: {
      first: [
        { x: 444, y: 107, sign: -1 },
        { x: 154, y: 321, sign: 1 },
      ],
      samples: [0, -0.0065277349203825, -0.024615280330181122, 0.05290312319993973],
    },
    'Résonance 結晶': {
      first: [
        { x: 257, y: 94, sign: -1 },
        { x: 363, y: 358, sign: -1 },
        { x: 412, y: 59, sign: -1 },
      ],
      samples: [0, -0.03300568088889122, -0.00002662042243173346, -0.002635421697050333],
    },
  }

  for (const [text, g] of Object.entries(golden)) {
    test(`"${text}": each part's first source (sub-cells) and wavefront samples at N = 32, both kernels`, async () => {
      const streams = await textStreams(text, 32, 3)
      expect(streams[0]).toHaveLength(sourceCount(32) * 2)
      expect(streams.map((s) => gridSource(s, 0, 32))).toEqual(g.first)
      for (const kernel of ['wasm', 'typescript'] as const) {
        const w = await textWavefront(text, 32, { ...v3, kernel })
        expect([w[0], w[16 * 32 + 16], w[10 * 32 + 20], w[25 * 32 + 7]]).toEqual(g.samples.map(Math.fround))
      }
    })
  }

  test("version 3 is not version 2's wavefront, nor its stream", async () => {
    const [a, b] = await Promise.all([textWavefront('cold glyph', 32, v3), textWavefront('cold glyph', 32, { version: 2 })])
    expect([...a]).not.toEqual([...b])
    const [s2, s3] = await Promise.all([textStreams('cold glyph', 32, 2), textStreams('cold glyph', 32, 3)])
    expect(s3[0][0]).not.toBe(s2[0][0])
  })
})

describe('the WebAssembly kernel (version 3)', () => {
  test("gives the TypeScript twin's wavefront bit for bit: odd and even sides, one band of rows and many, many words", async () => {
    const cases: [string, number][] = [
      ['hello', 16],
      ['cold glyph', 33], // rows not a multiple of 4 cells: the kernel's scalar tail
      ['Résonance 結晶, the cold glyph remembers amber lattices of night', 48],
      ['x', 300], // two bands of rows (215 rows a band)
      ['warm river stones', 601], // six bands
      ['one two three four five six seven eight nine ten', 130], // ten words
    ]
    for (const [text, n] of cases) {
      const [wasm, twin] = await Promise.all([textWavefront(text, n, v3), textWavefront(text, n, { ...v3, kernel: 'typescript' })])
      expect(wasm.length, `${text} at N = ${n}`).toBe(n * n)
      expect(Buffer.from(wasm.buffer).equals(Buffer.from(twin.buffer)), `${text} at N = ${n}`).toBe(true)
    }
  }, 60_000)

  test('texts encoded at once, in both versions, and a small field after a large one, come out as each alone', async () => {
    const alone = await textWavefront('amber lattice', 40, { ...v3, kernel: 'typescript' })
    const together = await Promise.all([
      textWavefront('river', 300, v3),
      textWavefront('amber lattice', 40, v3),
      textWavefront('cold', 64, { version: 2 }),
      textWavefront('amber', 41, v3),
    ])
    expect([...together[1]]).toEqual([...alone])
    expect([...(await textWavefront('amber lattice', 40, v3))]).toEqual([...alone])
  })
})
