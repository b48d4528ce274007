// The encoding's WebAssembly kernel (engine/cpu/simd/assembly/encode.ts): one instance with its own
// memory, holding a word stream and the two n x n buffers of textWavefront. The memory grows to the
// largest field encoded so far (about 41 MB at N = 2048) and is kept for the next text.
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
  const align = (b: number) => Math.ceil(b / 16) * 16
  const stream = k.heapBase()
  const out = stream + align(words * 4)
  const part = out + align(cells * 4)
  const scratch = part + align(cells * 4) + 16 // the render may read and rewrite 8 bytes past a field
  const end = scratch + k.scratchBytes(words, n)
  const pages = Math.ceil((end - k.memory.buffer.byteLength) / 65536)
  if (pages > 0) k.memory.grow(pages)
  return { stream, out, part, scratch }
}
