// Encoding version 3's wavefronts made on the device (shaders/encode3.wgsl), so that a write uploads
// its texts' streams (2 words a source) rather than a float per cell, and its superposition goes into
// the field there. Two submits a call: every part of every text is rendered and its exact energy
// summed (one read of 8 bytes a part); the host takes s_p = sqrt(share_p / (E_p / n^2)) in float64 as
// text3.ts does; then each text's parts are rendered again and combined in order, divided by the peak
// and added, times the text's importance, into `sum`; each text's wavefront comes back in one read
// (recall keeps it: docs/recall.md). CPU twin: engine/encode/text3.ts; test: ./encode3.test.ts.
import { CrystalError } from '../errors.js'
import { packStruct, wgslStruct } from '../field/params.js'
import { gridRange, type Text3, weightTable } from '../encode/text3.js'
import { kernelModule, type GpuContext } from './context.js'
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

const SLOT = 256
const STORAGE = 0x80 | 0x4 | 0x8
const UNIFORM = 0x40 | 0x8
const COMPUTE = 0x4
const ENTRIES = ['clear_part', 'clear_out', 'render', 'energy', 'combine', 'peak', 'finish'] as const
type Entry = (typeof ENTRIES)[number]

export class GpuEncoder3 {
  private readonly layout: GPUBindGroupLayout
  private readonly pipelines: Record<Entry, GPUComputePipeline>
  private readonly table: GPUBuffer
  private readonly part: GPUBuffer
  private readonly out: GPUBuffer
  private streams?: GPUBuffer

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
    const entry = (binding: number, type: GPUBufferBindingType): GPUBindGroupLayoutEntry => ({
      binding,
      visibility: COMPUTE,
      buffer: binding ? { type } : { type, hasDynamicOffset: true },
    })
    this.layout = device.createBindGroupLayout({
      entries: [
        entry(0, 'uniform'),
        entry(1, 'read-only-storage'),
        entry(2, 'read-only-storage'),
        entry(3, 'storage'),
        entry(4, 'storage'),
        entry(5, 'read-only-storage'),
        entry(6, 'storage'),
        entry(7, 'storage'),
      ],
    })
    const module = kernelModule(device, wgslStruct('Encode3', ENCODE3_LAYOUT), SHADERS.encode3)
    const layout = device.createPipelineLayout({ bindGroupLayouts: [this.layout] })
    this.pipelines = Object.fromEntries(
      ENTRIES.map((e) => [e, device.createComputePipeline({ layout, compute: { module, entryPoint: e } })]),
    ) as Record<Entry, GPUComputePipeline>
    const words = weightTable(radiusCells)
    this.table = device.createBuffer({ size: words.byteLength, usage: STORAGE })
    gpu.transfers.write(this.table, 0, words)
    this.part = device.createBuffer({ size: 4 * (n + 4) ** 2, usage: STORAGE })
    this.out = device.createBuffer({ size: 4 * n * n, usage: STORAGE })
  }

  /**
   * Each text's wavefront (returned, in order) and sum = sum of importance x wavefront (left in `sum`);
   * `then` adds commands after the last text's, before its read (the field's superposition).
   */
  async encode(texts: readonly Text3[], then?: (pass: GPUComputePassEncoder) => void): Promise<Float32Array[]> {
    const { device, transfers, n } = this.gpu
    const parts = texts.flatMap((t, text) => t.streams.map((stream, p) => ({ stream, text, share: t.shares[p] })))
    if (!parts.length) return []
    const words = parts[0].stream.length
    if (parts.some((p) => p.stream.length !== words))
      throw new CrystalError('internal', `encoding 3 on the GPU: every part of a call has ${words} stream words`)
    // as many parts' streams on the device at once as one binding holds (all of them, but for long texts at large N)
    const { limits } = device
    const room = this.maxBytes ?? Math.min(limits.maxStorageBufferBindingSize, limits.maxBufferSize)
    const perGroup = Math.max(1, Math.min(parts.length, Math.floor(room / (4 * words))))
    if (!this.streams || this.streams.size < 4 * words * perGroup) {
      this.streams?.destroy()
      this.streams = device.createBuffer({ size: 4 * words * perGroup, usage: STORAGE })
    }
    const { lo, hi } = gridRange(n)
    const uniforms = device.createBuffer({ size: SLOT * parts.length, usage: UNIFORM })
    const sums = device.createBuffer({ size: 4 * (2 * parts.length + 1), usage: STORAGE })
    const scales = device.createBuffer({ size: 4 * parts.length, usage: STORAGE })
    const bytes = new ArrayBuffer(SLOT * parts.length)
    parts.forEach((p, j) =>
      packStruct(
        ENCODE3_LAYOUT,
        {
          n,
          stride: n + 4,
          sources: words / 2,
          lo,
          span: hi - lo,
          stream_at: (j % perGroup) * words,
          part: j,
          peak_at: 2 * parts.length,
          importance: texts[p.text].importance,
        },
        bytes,
        j * SLOT,
      ),
    )
    transfers.write(uniforms, 0, bytes)
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
      const chunk = new Uint32Array(words * Math.min(perGroup, parts.length - g * perGroup))
      for (let k = 0; k * words < chunk.length; k++) chunk.set(parts[g * perGroup + k].stream, k * words)
      transfers.write(this.streams!, 0, chunk)
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
      const waves: Float32Array[] = []
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
        waves.push(new Float32Array(await transfers.read(this.out, 0, 4 * n * n, finish(), () => this.gpu.failure())))
        encoder = device.createCommandEncoder()
        pass = encoder.beginComputePass()
      }
      pass.end()
      this.gpu.check()
      return waves
    } finally {
      uniforms.destroy()
      sums.destroy()
      scales.destroy()
    }
  }

  destroy(): void {
    for (const b of [this.table, this.part, this.out, this.streams]) b?.destroy()
  }
}
