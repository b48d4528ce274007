// Encoding version 3's wavefronts made on the device, so that a write uploads its texts (the streams'
// blake3 inputs) rather than a float per cell, and its superposition goes into the field there.
// shaders/blake3.wgsl hashes each part's stream where every input of it is one blake3 chunk (else the
// host's words go up). Two submits a call: every part of every text is rendered and its exact energy
// summed (shaders/encode3.wgsl; one read of 8 bytes a part); the host takes s_p = sqrt(share_p /
// (E_p / n^2)) in float64 as text3.ts does; then each text's parts are rendered again and combined in
// order, divided by the peak and added, times the text's f32 importance, into `sum`; each text's
// wavefront is copied into a buffer of the caller's on the device (recall keeps it there:
// docs/recall.md), or read back from there (`encode`, the tests'). CPU twins: engine/encode/text3.ts
// and blake3Words (engine/encode/text.ts); test: ./encode3.test.ts.
import { CrystalError } from '../errors.js'
import { packStruct, wgslStruct } from '../field/params.js'
import { blake3Words, MAX_WORDS_PER_CALL, oneChunk, sourceCount, streamInput } from '../encode/text.js'
import { gridRange, type Text3, weightTable } from '../encode/text3.js'
import { type GpuContext, type Kernel, kernelModule, perDevice, pipelineOf } from './context.js'
import { SHADERS } from './shaders.gen.js'

/** Uniforms of shaders/encode3.wgsl, one 256-byte slot a part. */
export const ENCODE3_LAYOUT = [
  ['n', 'u32'],
  ['stride', 'u32'],
  ['sources', 'u32'],
  ['lo', 'u32'],
  ['span', 'u32'],
  ['stream_at', 'u32'],
  ['part', 'u32'],
  ['peak_at', 'u32'],
  ['importance', 'f32'],
] as const

/** Uniforms of shaders/blake3.wgsl, one 256-byte slot a part. */
export const BLAKE3_LAYOUT = [
  ['first', 'u32'],
  ['inputs', 'u32'],
  ['count', 'u32'],
  ['stream_at', 'u32'],
] as const

const SLOT = 256
const STORAGE = 0x80 | 0x4 | 0x8
const UNIFORM = 0x40 | 0x8
const COMPUTE = 0x4
const ENTRIES = ['clear_part', 'clear_out', 'render', 'energy', 'combine', 'peak', 'finish'] as const
type Entry = (typeof ENTRIES)[number]

/** A part: its stream's inputs' index range where blake3.wgsl hashes them, else its words from the host. */
type Part = { text: number; share: number } & ({ first: number; inputs: number } | { stream: Uint32Array })

export class GpuEncoder3 {
  private readonly layout: GPUBindGroupLayout
  private readonly pipelines: Record<Entry, GPUComputePipeline>
  private readonly hashLayout: GPUBindGroupLayout
  private readonly hash: { chain: GPUComputePipeline; xof: GPUComputePipeline }
  private readonly table: GPUBuffer
  private readonly part: GPUBuffer
  private readonly out: GPUBuffer
  private streams?: GPUBuffer
  /** The call in progress: calls take turns, as they share the scratch buffers (part, out, streams, sum). */
  private turn: Promise<unknown> = Promise.resolve()
  private destroyed = false

  /**
   * `sum`: n*n f32, where encode leaves the texts' superposition. `maxBytes`: the largest streams
   * buffer to make, the device's limits unless given (a test gives less, to upload parts in groups).
   */
  constructor(
    private readonly gpu: GpuContext,
    private readonly sum: GPUBuffer,
    radiusCells: number,
    private readonly maxBytes?: number,
  ) {
    const { device, n } = gpu
    const layouts = encoderLayouts(device)
    this.layout = layouts.layout
    this.hashLayout = layouts.hashLayout
    this.hash = { chain: pipelineOf(device, ENCODE_KERNELS.chain), xof: pipelineOf(device, ENCODE_KERNELS.xof) }
    this.pipelines = Object.fromEntries(ENTRIES.map((e) => [e, pipelineOf(device, ENCODE_KERNELS[e])])) as Record<Entry, GPUComputePipeline>
    const words = weightTable(radiusCells)
    this.table = device.createBuffer({ size: words.byteLength, usage: STORAGE })
    gpu.transfers.write(this.table, 0, words)
    this.part = device.createBuffer({ size: 4 * (n + 4) ** 2, usage: STORAGE })
    this.out = device.createBuffer({ size: 4 * n * n, usage: STORAGE })
  }

  /**
   * Each text's wavefront copied on the device into `into[k]` (n*n f32 from 0; none where undefined),
   * and sum = sum of importance x wavefront (left in `sum`); nothing comes back but the parts'
   * energies, one read a call. `then` adds commands after the last text's (the field's
   * superposition). Calls at once run one after another: a later call's uploads went ahead of an
   * earlier one's commands and gave it the wrong wavefronts (recall makes its patterns at once).
   */
  encodeInto(
    texts: readonly Text3[],
    into: readonly (GPUBuffer | undefined)[],
    then?: (pass: GPUComputePassEncoder) => void,
  ): Promise<void> {
    const run = this.turn.then(() => this.encodeNow(texts, into, then))
    this.turn = run.catch(() => {})
    return run
  }

  /** Each text's wavefront read back, in order (the tests hold them to the twin's): a read a text more. */
  async encode(texts: readonly Text3[]): Promise<Float32Array[]> {
    const { device, transfers, n } = this.gpu
    const into = texts.map(() => device.createBuffer({ size: 4 * n * n, usage: STORAGE }))
    try {
      await this.encodeInto(texts, into)
      return await Promise.all(
        into.map(
          async (b) => new Float32Array(await transfers.read(b, 0, 4 * n * n, device.createCommandEncoder(), () => this.gpu.failure())),
        ),
      )
    } finally {
      for (const b of into) b.destroy()
    }
  }

  private async encodeNow(
    texts: readonly Text3[],
    into: readonly (GPUBuffer | undefined)[],
    then?: (pass: GPUComputePassEncoder) => void,
  ): Promise<void> {
    // a call that waited its turn past destroy() would use freed buffers on a device other engines share
    if (this.destroyed) throw new CrystalError('backend_unavailable', 'the GPU engine was closed while a text was being encoded')
    const { device, transfers, n } = this.gpu
    const words = 2 * sourceCount(n)
    const subs = Math.ceil(words / MAX_WORDS_PER_CALL)
    // each part's stream hashed here where every one of its inputs is one blake3 chunk, else on the host
    const chunks: Uint8Array[] = []
    const parts: Part[] = await Promise.all(
      texts.flatMap((t, text) =>
        t.inputs.map(async (input, p) => {
          const mine = Array.from({ length: subs }, (_, c) => oneChunk(streamInput(input, c)))
          const share = t.shares[p]
          if (mine.some((b) => !b)) return { text, share, stream: await blake3Words(input, words) }
          chunks.push(...(mine as Uint8Array[]))
          return { text, share, first: chunks.length - subs, inputs: subs }
        }),
      ),
    )
    if (!parts.length) return
    // as many parts' streams on the device at once as one binding holds (all of them, but for long texts at large N)
    const { limits } = device
    const room = this.maxBytes ?? Math.min(limits.maxStorageBufferBindingSize, limits.maxBufferSize)
    const perGroup = Math.max(1, Math.min(parts.length, Math.floor(room / (4 * words))))
    if (!this.streams || this.streams.size < 4 * words * perGroup) {
      this.streams?.destroy()
      this.streams = device.createBuffer({ size: 4 * words * perGroup, usage: STORAGE })
    }
    const { lo, hi } = gridRange(n)
    const uniforms = device.createBuffer({ size: 2 * SLOT * parts.length, usage: UNIFORM })
    const sums = device.createBuffer({ size: 4 * (2 * parts.length + 1), usage: STORAGE })
    const scales = device.createBuffer({ size: 4 * parts.length, usage: STORAGE })
    const bytes = new ArrayBuffer(2 * SLOT * parts.length)
    parts.forEach((p, j) => {
      const first = 'first' in p ? p.first : 0
      const stream_at = (j % perGroup) * words
      packStruct(BLAKE3_LAYOUT, { first, inputs: 'first' in p ? p.inputs : 0, count: words, stream_at }, bytes, (parts.length + j) * SLOT)
      packStruct(
        ENCODE3_LAYOUT,
        {
          n,
          stride: n + 4,
          sources: words / 2,
          lo,
          span: hi - lo,
          stream_at,
          part: j,
          peak_at: 2 * parts.length,
          importance: texts[p.text].importance,
        },
        bytes,
        j * SLOT,
      )
    })
    transfers.write(uniforms, 0, bytes)
    // the inputs' bytes in whole blocks, and where each lies; both go up once
    const descs = new Uint32Array(2 * Math.max(1, chunks.length))
    let at = 0
    chunks.forEach((b, k) => {
      descs.set([at / 4, b.length], 2 * k)
      at += 64 * Math.max(1, Math.ceil(b.length / 64))
    })
    const packed = new Uint8Array(Math.max(64, at))
    chunks.forEach((b, k) => packed.set(b, 4 * descs[2 * k]))
    const inputs = device.createBuffer({ size: packed.byteLength, usage: STORAGE })
    const places = device.createBuffer({ size: descs.byteLength, usage: STORAGE })
    const roots = device.createBuffer({ size: 128 * Math.max(1, chunks.length), usage: STORAGE })
    if (chunks.length) {
      transfers.write(inputs, 0, packed)
      transfers.write(places, 0, descs)
    }
    const hashGroup = device.createBindGroup({
      layout: this.hashLayout,
      entries: [
        { binding: 0, resource: { buffer: uniforms, size: BLAKE3_LAYOUT.length * 4 } },
        { binding: 1, resource: { buffer: inputs } },
        { binding: 2, resource: { buffer: places } },
        { binding: 3, resource: { buffer: roots } },
        { binding: 4, resource: { buffer: this.streams } },
      ],
    })
    const res = (binding: number, buffer: GPUBuffer) => ({ binding, resource: { buffer } })
    const group = device.createBindGroup({
      layout: this.layout,
      entries: [
        { binding: 0, resource: { buffer: uniforms, size: ENCODE3_LAYOUT.length * 4 } },
        res(1, this.table),
        res(2, this.streams),
        res(3, this.part),
        res(4, sums),
        res(5, scales),
        res(6, this.out),
        res(7, this.sum),
      ],
    })

    // a pass that uploads the streams of part j's group first where they are not on the device
    let resident = -1
    let encoder = device.createCommandEncoder()
    encoder.clearBuffer(sums)
    let pass = encoder.beginComputePass()
    const needs = (j: number) => {
      const g = Math.floor(j / perGroup)
      if (g === resident) return
      if (resident >= 0) {
        pass.end()
        transfers.submit(encoder)
        encoder = device.createCommandEncoder()
        pass = encoder.beginComputePass()
      }
      for (let j = g * perGroup; j < Math.min(parts.length, (g + 1) * perGroup); j++) {
        const p = parts[j]
        if ('stream' in p) transfers.write(this.streams!, 4 * (j % perGroup) * words, p.stream)
        else {
          pass.setBindGroup(0, hashGroup, [(parts.length + j) * SLOT])
          pass.setPipeline(this.hash.chain)
          transfers.dispatch(pass, Math.ceil(p.inputs / 64))
          pass.setPipeline(this.hash.xof)
          const blocks = Math.ceil(words / 16 / 64)
          transfers.dispatch(pass, Math.min(blocks, 65535), Math.ceil(blocks / 65535))
        }
      }
      resident = g
    }
    const run = (entry: Entry, j: number, count: number) => {
      pass.setPipeline(this.pipelines[entry])
      pass.setBindGroup(0, group, [j * SLOT])
      const groups = Math.ceil(count / 256)
      transfers.dispatch(pass, Math.min(groups, 65535), Math.ceil(groups / 65535))
    }
    const stride2 = (n + 4) ** 2
    const render = (j: number) => {
      needs(j)
      run('clear_part', j, stride2)
      run('render', j, words / 2)
    }
    const finish = () => {
      pass.end()
      return encoder
    }

    try {
      parts.forEach((_, j) => {
        render(j)
        run('energy', j, n * n)
      })
      const energies = new Uint32Array(await transfers.read(sums, 0, 8 * parts.length, finish(), () => this.gpu.failure()))
      // s_p in float64 as text3.ts takes it (energy: the exact sum, rounded once)
      const s = Float32Array.from(parts, (p, j) => {
        const e = energies[2 * j + 1] * 2 ** 32 + energies[2 * j]
        return e ? Math.sqrt(p.share / (e / (n * n))) : 0
      })
      transfers.write(scales, 0, s)

      encoder = device.createCommandEncoder()
      encoder.clearBuffer(this.sum)
      pass = encoder.beginComputePass()
      let j = 0
      for (const [t] of texts.entries()) {
        run('clear_out', j, n * n)
        const first = j
        for (; j < parts.length && parts[j].text === t; j++) {
          render(j)
          run('combine', j, n * n)
        }
        run('peak', first, n * n)
        run('finish', first, n * n)
        if (t === texts.length - 1) then?.(pass)
        // out is the next text's scratch: its wavefront is copied before the next pass clears it
        const dest = into[t]
        if (dest) {
          finish().copyBufferToBuffer(this.out, 0, dest, 0, 4 * n * n)
          pass = encoder.beginComputePass()
        }
      }
      transfers.submit(finish())
      this.gpu.check()
    } finally {
      for (const b of [uniforms, sums, scales, inputs, places, roots]) b.destroy()
    }
  }

  destroy(): void {
    this.destroyed = true
    for (const b of [this.table, this.part, this.out, this.streams]) b?.destroy()
  }
}

/** The encoder's bind group layouts, made once per device (context.ts perDevice). */
function encoderLayouts(device: GPUDevice) {
  return perDevice(device, 'encode3/layouts', () => {
    // the bindings in shaders/encode3.wgsl's order; the uniform takes a part's slot by dynamic offset
    const types: GPUBufferBindingType[] = [
      'uniform',
      'read-only-storage',
      'read-only-storage',
      'storage',
      'storage',
      'read-only-storage',
      'storage',
      'storage',
    ]
    const layoutOf = (of: GPUBufferBindingType[]) =>
      device.createBindGroupLayout({
        entries: of.map((type, binding) => ({
          binding,
          visibility: COMPUTE,
          buffer: binding ? { type } : { type, hasDynamicOffset: true },
        })),
      })
    // shaders/blake3.wgsl's: the uniform, the inputs and where each lies, the roots, the streams
    return { layout: layoutOf(types), hashLayout: layoutOf(types.slice(0, 5)) }
  })
}

const encoderKernel = (entryPoint: string, blake3: boolean): Kernel => ({
  key: `encode3:${entryPoint}`,
  describe: (device) => {
    const layouts = encoderLayouts(device)
    const module = blake3
      ? perDevice(device, 'encode3/blake3', () => device.createShaderModule({ code: wgslStruct('Blake3', BLAKE3_LAYOUT) + SHADERS.blake3 }))
      : perDevice(device, 'encode3/module', () => kernelModule(device, wgslStruct('Encode3', ENCODE3_LAYOUT), SHADERS.encode3))
    const layout = device.createPipelineLayout({ bindGroupLayouts: [blake3 ? layouts.hashLayout : layouts.layout] })
    return { layout, compute: { module, entryPoint } }
  },
})

/** The encoder's kernels (context.ts Kernel), made once a device, in the order a text uses them: blake3's, then encode3's. */
export const ENCODE_KERNELS = {
  chain: encoderKernel('chain', true),
  xof: encoderKernel('xof', true),
  ...(Object.fromEntries(ENTRIES.map((e) => [e, encoderKernel(e, false)])) as Record<Entry, Kernel>),
}
