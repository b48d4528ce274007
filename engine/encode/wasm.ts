// The encoding's WebAssembly kernel (engine/cpu/simd/assembly/encode.ts): one instance with its own
// memory, holding a word stream and the buffers of textWavefront (two n x n f32 fields for version 2;
// an (n + 4)^2 i32 part and an n x n f32 field for version 3). The memory grows to the largest field
// encoded so far (about 41 MB at N = 2048) and is kept for the next text.
import { ENCODE_WASM_BASE64 } from '../cpu/simd/encode_wasm.gen.js'

export interface EncodeModule {
  memory: WebAssembly.Memory
  heapBase(): number
  scratchBytes(count: number, n: number): number
  render(words: number, count: number, n: number, out: number, margin: number, radiusCells: number, scratch: number): void
  sumSquares(a: number, len: number): number
  scale(a: number, len: number, s: number, divide: boolean): void
  addScaled(dst: number, src: number, len: number, s: number): void
  peakAbs(a: number, len: number): number
  scratchBytes3(count: number, n: number): number
  render3(words: number, count: number, n: number, part: number, table: number, scratch: number): void
  energy3(part: number, n: number): number
  combine3(part: number, n: number, out: number, s: number): number
  divide3(a: number, len: number, d: number): void
  blake3(input: number, len: number, out: number, words: number): void
}

let instance: Promise<EncodeModule> | undefined

/** The kernel, instantiated on first use (asynchronously: browsers refuse to compile large modules synchronously). */
export function encodeKernel(): Promise<EncodeModule> {
  instance ??= WebAssembly.instantiate(
    typeof Buffer !== 'undefined'
      ? Buffer.from(ENCODE_WASM_BASE64, 'base64')
      : Uint8Array.from(atob(ENCODE_WASM_BASE64), (c) => c.charCodeAt(0)),
  ).then((r) => r.instance.exports as unknown as EncodeModule)
  return instance
}

/**
 * Byte offsets of a stream of `words` u32, two fields of `cells` f32 (n x n, padded) and the render's
 * scratch, the memory grown to hold them.
 */
export function layout(
  k: EncodeModule,
  words: number,
  n: number,
  cells: number,
): { stream: number; out: number; part: number; scratch: number } {
  const stream = k.heapBase()
  const out = stream + align(words * 4)
  const part = out + align(cells * 4)
  const scratch = part + align(cells * 4) + 16 // the render may read and rewrite 8 bytes past a field
  grow(k, scratch + k.scratchBytes(words, n))
  return { stream, out, part, scratch }
}

/**
 * Version 3's byte offsets: the weight table (`tableBytes`), a stream of `words` u32, the (n + 4)^2
 * i32 part, the n x n f32 field (`cells`, padded to a multiple of 4) and render3's scratch.
 */
export function layout3(
  k: EncodeModule,
  tableBytes: number,
  words: number,
  n: number,
  cells: number,
): { table: number; stream: number; part: number; out: number; scratch: number } {
  const table = k.heapBase()
  const stream = table + align(tableBytes)
  const part = stream + align(words * 4)
  const out = part + align((n + 4) * (n + 4) * 4)
  const scratch = out + align(cells * 4)
  grow(k, scratch + k.scratchBytes3(words, n))
  return { table, stream, part, out, scratch }
}

/** The longest input the kernel's blake3 takes: one chunk. */
export const BLAKE3_MAX_INPUT = 1024

/**
 * The first `words` u32 (at most 4,096) of blake3's output for `input` (at most BLAKE3_MAX_INPUT
 * bytes), by the kernel: into `out` at `at`. Synchronous, so texts encoded at once do not meet.
 */
export function blake3Into(k: EncodeModule, input: Uint8Array, words: number, out: Uint32Array, at: number): void {
  const base = k.heapBase()
  const output = base + BLAKE3_MAX_INPUT
  grow(k, output + Math.ceil(words / 64) * 64 * 4)
  new Uint8Array(k.memory.buffer, base, input.length).set(input)
  k.blake3(base, input.length, output, words)
  out.set(new Uint32Array(k.memory.buffer, output, words), at)
}

const align = (b: number) => Math.ceil(b / 16) * 16

function grow(k: EncodeModule, end: number): void {
  const pages = Math.ceil((end - k.memory.buffer.byteLength) / 65536)
  if (pages > 0) k.memory.grow(pages)
}
