// Encoding version 3 (docs/recall.md, "The encoding"): a part's sources on a grid of 16 sub-cells,
// each adding a signed 4 x 4 block of an integer weight table to an i32 field. Integer sums do not
// depend on their order, so every implementation (this TypeScript twin, the WebAssembly SIMD kernel in
// engine/cpu/simd/assembly/encode.ts, a GPU kernel with atomic adds) gives the same bits.
import { type EncodeModule, encodeKernel, layout3 } from './wasm.js'

/** Sub-cells a cell: a coordinate is P = 16 c + f on the grid. */
export const SUBCELLS = 16
/** Cells a source's block spans in x and in y. */
const TAPS = 4

/**
 * The weight table W[fy][fx][ty][tx] (16 x 16 x 4 x 4 i32, that order): round(65536 g(dx) g(dy)) for
 * g(d) = exp(-d^2 / (2 r^2)), d the distance from tap t's cell centre, c0 + t + 0.5 with
 * c0 = c - 2 + (f >> 3), to the source, at c + (f + 0.5) / 16: the four cells nearest the source.
 */
export function weightTable(radiusCells: number): Int32Array {
  const g = (f: number, t: number) => {
    const d = -2 + (f >> 3) + t + 0.5 - (f + 0.5) / SUBCELLS
    return Math.exp(-(d * d) / (2 * radiusCells * radiusCells))
  }
  const w = new Int32Array(SUBCELLS * SUBCELLS * TAPS * TAPS)
  for (let fy = 0; fy < SUBCELLS; fy++)
    for (let fx = 0; fx < SUBCELLS; fx++)
      for (let ty = 0; ty < TAPS; ty++)
        for (let tx = 0; tx < TAPS; tx++) w[((fy * SUBCELLS + fx) * TAPS + ty) * TAPS + tx] = Math.round(65536 * g(fx, tx) * g(fy, ty))
  return w
}

/** The sub-cell range of positions, [lo, hi): lo = ceil(2 n 16 / 25), the 0.08 margin of the side. */
export function gridRange(n: number): { lo: number; hi: number } {
  const lo = Math.ceil((2 * n * SUBCELLS) / 25)
  return { lo, hi: n * SUBCELLS - lo }
}

/** Source k of a stream (two words: x, y): its sub-cell position and sign (bit 0 of the x word). */
export function gridSource(stream: Uint32Array, k: number, n: number): { x: number; y: number; sign: 1 | -1 } {
  const { lo, hi } = gridRange(n)
  // w (hi - lo) < 2^48: exact in float64, as in the kernel's u64
  const at = (w: number) => lo + Math.floor((w * (hi - lo)) / 2 ** 32)
  return { x: at(stream[2 * k]), y: at(stream[2 * k + 1]), sign: stream[2 * k] & 1 ? 1 : -1 }
}

export type Kernel3 = 'wasm' | 'typescript'

/** A text to encode and superpose: its parts' stream inputs (identity first, text.ts streamInputs), each part's share of the energy, its weight in the sum. */
export interface Text3 {
  inputs: readonly string[]
  shares: readonly number[]
  importance: number
}

/** The steps of version 3's combination over a part (i32, (n + 4)^2 with a 2-cell border) and `out` (f32, n x n). */
interface Passes3 {
  /** Zeroes the part and adds a stream's sources to it. */
  render(stream: Uint32Array): void
  /** Sum of v^2 over the part's n x n inner cells, exact (then rounded once to float64). */
  energy(): number
  /** out = f32(out + f32(f32(v) * f32(s))) cell by cell; returns max |out| after it. */
  combine(s: number): number
  /** out = f32(out / d) */
  divide(d: number): void
  result(): Float32Array
}

function typescriptPasses(n: number, table: Int32Array): Passes3 {
  const stride = n + 4
  const part = new Int32Array(stride * stride)
  const out = new Float32Array(n * n)
  return {
    render(stream) {
      part.fill(0)
      for (let k = 0; 2 * k + 1 < stream.length; k++) {
        const { x, y, sign } = gridSource(stream, k, n)
        const first = ((y >> 4) + ((y & 15) >> 3)) * stride + (x >> 4) + ((x & 15) >> 3)
        const block = ((y & 15) * SUBCELLS + (x & 15)) * TAPS * TAPS
        for (let ty = 0; ty < TAPS; ty++)
          for (let tx = 0; tx < TAPS; tx++) part[first + ty * stride + tx] += sign * table[block + ty * TAPS + tx]
      }
    },
    energy() {
      // a row's sum in float64 is exact while n v^2 < 2^53 (|v| < 2^20 for n up to 4,096); else in BigInt
      let total = 0n
      for (let r = 2; r < n + 2; r++) {
        let row = 0
        let big = false
        for (let c = 2; c < n + 2; c++) {
          const v = part[r * stride + c]
          if (Math.abs(v) >= 2 ** 20) big = true
          row += v * v
        }
        if (!big) total += BigInt(row)
        else for (let c = 2; c < n + 2; c++) total += BigInt(part[r * stride + c]) ** 2n
      }
      return Number(total)
    },
    combine(s) {
      const s32 = Math.fround(s)
      let peak = 0
      for (let r = 0; r < n; r++)
        for (let c = 0; c < n; c++) {
          // each operation of two f32 values rounded once to f32 is the f32 operation (out stores in f32)
          out[r * n + c] += Math.fround(Math.fround(part[(r + 2) * stride + c + 2]) * s32)
          peak = Math.max(peak, Math.abs(out[r * n + c])) // the stored f32, not the assignment's float64
        }
      return peak
    },
    divide(d) {
      for (let i = 0; i < out.length; i++) out[i] /= d
    },
    result: () => out,
  }
}

function wasmPasses(k: EncodeModule, n: number, table: Int32Array, streamWords: number): Passes3 {
  const padded = Math.ceil((n * n) / 4) * 4 // divide3 takes 4 cells at a time; the padding stays 0
  const at = layout3(k, table.byteLength, streamWords, n, padded)
  new Int32Array(k.memory.buffer, at.table, table.length).set(table)
  new Float32Array(k.memory.buffer, at.out, padded).fill(0)
  return {
    render(stream) {
      new Uint32Array(k.memory.buffer, at.stream, stream.length).set(stream)
      k.render3(at.stream, stream.length, n, at.part, at.table, at.scratch)
    },
    energy: () => k.energy3(at.part, n),
    combine: (s) => k.combine3(at.part, n, at.out, s),
    divide: (d) => k.divide3(at.out, padded, d),
    result: () => new Float32Array(k.memory.buffer, at.out, n * n).slice(),
  }
}

const tables = new Map<number, Int32Array>()

/**
 * Version 3's wavefront from a text's streams (the identity's first, then each word's) on an n x n
 * field: part p enters scaled by s_p = sqrt(share_p / (E_p / n^2)) (float64, on the host), so that it
 * carries share_p of the energy; the sum is then divided by its peak.
 */
export async function wavefront3(
  streams: readonly Uint32Array[],
  n: number,
  shares: readonly number[],
  radiusCells: number,
  kernel: Kernel3,
): Promise<Float32Array> {
  if (!tables.has(radiusCells)) tables.set(radiusCells, weightTable(radiusCells))
  const table = tables.get(radiusCells)!
  const module = kernel === 'wasm' ? await encodeKernel() : undefined
  // no await from here on: the kernel's one memory serves one text at a time
  const passes = module ? wasmPasses(module, n, table, streams[0].length) : typescriptPasses(n, table)
  let peak = 0
  streams.forEach((stream, p) => {
    passes.render(stream)
    const energy = passes.energy()
    peak = passes.combine(energy ? Math.sqrt(shares[p] / (energy / (n * n))) : 0)
  })
  passes.divide(peak || 1)
  return passes.result()
}
