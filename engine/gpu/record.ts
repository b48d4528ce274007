// A recorded window kept on the GPU and reduced there: each captured frame of u is added into the
// window's planes by shaders/spectra.wgsl (sum u, sum |u|, the windowed DFT sums; no frame is kept
// or read back). What comes back is what detection reads: the stability plane (sum |u|) of every
// cell with the stability sums (the dream's, shaders/dream.wgsl accumulate) and u, in one read;
// then every plane of the cells detection reads (shaders/gather.wgsl), in one more. CPU twin:
// engine/cpu/record.ts; tests: engine/detect/spectra.test.ts, engine/discovery/record.test.ts.
import type { WindowRecorder, WindowRecording } from '../field/backend.js'
import { giveBack, HeldPlanes, reusedFloats, windowCoefficients, windowPlanes } from '../detect/spectra.js'
import { CrystalError } from '../errors.js'
import { packStruct, wgslStruct } from '../field/params.js'
import { kernelModule, perDevice, type GpuContext } from './context.js'
import { SHADERS } from './shaders.gen.js'

const STORAGE = 0x80 | 0x4 | 0x8 // STORAGE | COPY_SRC | COPY_DST
const UNIFORM = 0x40 | 0x8
const WG = 256
/** The uniform's slots, one per chunk of planes, at the 256-byte offsets a dynamic offset needs. */
const SLOT = 256
/** shaders/gather.wgsl's uniform: cells listed, floats a plane, the chunk's first plane and planes held, planes a cell, the first listed cell. */
const GATHER_LAYOUT = [
  ['count', 'u32'],
  ['size', 'u32'],
  ['first', 'u32'],
  ['held', 'u32'],
  ['planes', 'u32'],
  ['base', 'u32'],
] as const
/** Planes of the tail read back first: the stability plane (sum |u|), the stability sums, u. */
const TAIL = 3

export class GpuRecorder implements WindowRecorder {
  /** Buffers of whole planes. */
  private chunks: GPUBuffer[] = []
  /** The planes read back first (TAIL), copied here from the chunks, the sums and u. */
  private tail: GPUBuffer | undefined
  private perChunk = 1
  private frames = 0
  /** The window's factors and the uniform's slots, made with its chunks; the kernel, made once. */
  private window: { coef: GPUBuffer; uniform: GPUBuffer; pipeline: GPUComputePipeline } | undefined

  constructor(
    private readonly gpu: GpuContext,
    private readonly sums: () => GPUBuffer,
    /** The largest buffer to make: the device's limits unless given (a test gives less, to make chunks). */
    private readonly maxBytes?: number,
  ) {}

  private get planeBytes(): number {
    return this.gpu.n * this.gpu.n * this.gpu.fields * 4
  }

  private get planes(): number {
    return windowPlanes(this.frames)
  }

  /** The largest buffer to make: the device's limits unless given. */
  private get limit(): number {
    const { limits } = this.gpu.device
    return this.maxBytes ?? Math.min(limits.maxBufferSize, limits.maxStorageBufferBindingSize)
  }

  /** Planes of the tail a read brings back: all of them unless they exceed the largest buffer. */
  private get perTail(): number {
    return Math.max(1, Math.floor(this.limit / this.planeBytes))
  }

  /** Chunks for a window `frames` long (its planes), each within the device's limits, and the tail. */
  private allocate(frames: number): void {
    this.release()
    const { device } = this.gpu
    const bytes = this.planeBytes
    this.frames = frames
    this.perChunk = Math.max(1, Math.floor(this.limit / bytes))
    const count = Math.max(1, Math.ceil(this.planes / this.perChunk))
    // kept between engines (Transfers.buffer): evolve opens two a generation, each with these 1.3 GB at population 1,000
    const { transfers } = this.gpu
    this.chunks = Array.from({ length: count }, (_, c) =>
      transfers.buffer(Math.min(this.perChunk, this.planes - c * this.perChunk) * bytes, STORAGE),
    )
    this.tail = transfers.buffer(Math.min(TAIL, this.perTail) * bytes, STORAGE)
    const factors = windowCoefficients(Math.max(1, frames))
    const coef = transfers.buffer(factors.byteLength, STORAGE)
    transfers.write(coef, 0, factors.buffer as ArrayBuffer)
    const uniform = transfers.buffer(count * SLOT, UNIFORM)
    const pipeline = perDevice(device, 'spectra:accumulate', () =>
      device.createComputePipeline({
        layout: 'auto',
        compute: { module: kernelModule(device, '', SHADERS.spectra), entryPoint: 'accumulate' },
      }),
    )
    this.window = { coef, uniform, pipeline }
  }

  capture(slot: number, frames: number): Promise<void> {
    if (slot === 0 && frames !== this.frames) this.allocate(frames)
    if (!this.window) throw new CrystalError('bad_argument', `captureFrame: slot ${slot} of a window that slot 0 did not start`)
    const { coef, uniform: slots, pipeline } = this.window
    const { device, n, fields, transfers } = this.gpu
    const size = n * n * fields
    const uniform = new ArrayBuffer(this.chunks.length * SLOT)
    for (let c = 0; c < this.chunks.length; c++)
      new Uint32Array(uniform, c * SLOT, 5).set([
        size,
        slot,
        c * this.perChunk,
        Math.min(this.perChunk, this.planes - c * this.perChunk),
        this.planes,
      ])
    transfers.write(slots, 0, uniform)
    const encoder = device.createCommandEncoder()
    const pass = encoder.beginComputePass()
    pass.setPipeline(pipeline)
    const groups = Math.ceil(size / WG)
    for (const [c, chunk] of this.chunks.entries()) {
      const bound = Math.min(this.perChunk, this.planes - c * this.perChunk) * this.planeBytes
      const entries = [
        { binding: 0, resource: { buffer: slots, offset: c * SLOT, size: 32 } },
        { binding: 1, resource: { buffer: this.gpu.state().u } },
        { binding: 2, resource: { buffer: coef } },
        { binding: 3, resource: { buffer: chunk, size: bound } },
      ]
      pass.setBindGroup(0, device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries }))
      this.gpu.transfers.dispatch(pass, Math.min(groups, 65535), Math.ceil(groups / 65535))
    }
    pass.end()
    this.gpu.transfers.submit(encoder)
    return Promise.resolve()
  }

  /**
   * The stability plane, the stability sums and u (`full`; u unless `u` is false), or the sums alone,
   * in one read (one a plane where three planes exceed the largest buffer); the other planes stay on
   * the GPU until `gather` brings back those of the cells asked for. What comes back is on shared
   * memory (reusedFloats): worker threads detect on it without a copy, and `release` gives it back.
   */
  async collect(full: boolean, u = full): Promise<WindowRecording> {
    if (!this.chunks.length) this.allocate(0)
    const bytes = this.planeBytes
    const floats = bytes / 4
    const tail = this.tail!
    const withU = full && u
    // the planes in the order they come back: plane 1 (sum |u|) from the chunk that holds it, the sums, u
    const planes: [GPUBuffer, number][] = []
    if (full) planes.push([this.chunks[Math.floor(1 / this.perChunk)], (1 % this.perChunk) * bytes])
    planes.push([this.sums(), 0])
    if (withU) planes.push([this.gpu.state().u, 0])
    const back = reusedFloats(planes.length * floats)
    const used = [back]
    for (let first = 0; first < planes.length; first += this.perTail) {
      const group = planes.slice(first, first + this.perTail)
      const encoder = this.gpu.device.createCommandEncoder()
      group.forEach(([source, offset], k) => encoder.copyBufferToBuffer(source, offset, tail, k * bytes, bytes))
      const into = back.subarray(first * floats, (first + group.length) * floats)
      await this.gpu.transfers.readInto(tail, 0, encoder, () => this.gpu.failure(), into)
    }
    this.gpu.check()
    const cells = this.gpu.n * this.gpu.n
    const sums = full ? back.subarray(floats, 2 * floats) : back
    const held = Array.from({ length: full ? this.gpu.fields : 0 }, (_, f) => new HeldPlanes(f, back.subarray(f * cells, (f + 1) * cells)))
    return {
      frames: this.frames,
      window: (f) => {
        if (!held[f]) throw new CrystalError('bad_argument', `the recorded window of field ${f} was not asked for (collect(full))`)
        return held[f]
      },
      sums,
      u: withU ? back.subarray(2 * floats) : new Float32Array(0),
      gather: async (wanted) => {
        const gathered = await this.gather(wanted, held)
        if (gathered) used.push(gathered)
      },
      release: () => {
        for (const floats of used.splice(0)) giveBack(floats)
      },
    }
  }

  /**
   * Every plane of the cells listed for each field ([field][cells]) read back in one read (one more
   * for each maxBufferSize the planes of the cells take), into the fields' windows; returns the floats
   * they are held in (none where no cell is listed).
   */
  private async gather(wanted: readonly Int32Array[], held: HeldPlanes[]): Promise<Float32Array | undefined> {
    const { device, transfers } = this.gpu
    const cells = this.gpu.n * this.gpu.n
    const planes = this.planes
    const listed = new Uint32Array(wanted.reduce((a, w) => a + w.length, 0))
    // indexed loops: over a million cells at population 1,000, where for-of took 40 ms a gather
    for (let f = 0, j = 0; f < wanted.length; f++) {
      const w = wanted[f]
      for (let k = 0; k < w.length; k++) listed[j++] = f * cells + w[k]
    }
    if (!listed.length) return undefined
    const index = device.createBuffer({ size: listed.byteLength, usage: STORAGE })
    transfers.write(index, 0, listed)
    // the gathered planes of a read within one buffer
    const perRead = Math.max(1, Math.floor(this.limit / (planes * 4)))
    const uniform = device.createBuffer({ size: this.chunks.length * SLOT, usage: UNIFORM })
    const pipeline = perDevice(device, 'gather:gather', () =>
      device.createComputePipeline({
        layout: 'auto',
        compute: { module: kernelModule(device, wgslStruct('Gather', GATHER_LAYOUT), SHADERS.gather), entryPoint: 'gather' },
      }),
    )
    const size = cells * this.gpu.fields
    const gathered = reusedFloats(listed.length * planes)
    try {
      for (let base = 0; base < listed.length; base += perRead) {
        const count = Math.min(perRead, listed.length - base)
        const slots = new ArrayBuffer(this.chunks.length * SLOT)
        for (let c = 0; c < this.chunks.length; c++) {
          const first = c * this.perChunk
          packStruct(GATHER_LAYOUT, { count, size, first, held: Math.min(this.perChunk, planes - first), planes, base }, slots, c * SLOT)
        }
        transfers.write(uniform, 0, slots)
        const out = device.createBuffer({ size: count * planes * 4, usage: STORAGE })
        const encoder = device.createCommandEncoder()
        const pass = encoder.beginComputePass()
        pass.setPipeline(pipeline)
        const workgroups = Math.ceil(count / WG)
        for (const [c, chunk] of this.chunks.entries()) {
          const entries = [
            { binding: 0, resource: { buffer: uniform, offset: c * SLOT, size: GATHER_LAYOUT.length * 4 } },
            { binding: 1, resource: { buffer: index } },
            { binding: 2, resource: { buffer: chunk } },
            { binding: 3, resource: { buffer: out } },
          ]
          pass.setBindGroup(0, device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries }))
          transfers.dispatch(pass, Math.min(workgroups, 65535), Math.ceil(workgroups / 65535))
        }
        pass.end()
        try {
          const into = gathered.subarray(base * planes, (base + count) * planes)
          await transfers.readInto(out, 0, encoder, () => this.gpu.failure(), into)
        } finally {
          out.destroy()
        }
      }
    } finally {
      index.destroy()
      uniform.destroy()
    }
    this.gpu.check()
    let from = 0
    for (const [f, w] of wanted.entries()) {
      held[f].hold(w, gathered, from, planes)
      from += w.length * planes
    }
    return gathered
  }

  private release(): void {
    const { transfers } = this.gpu
    for (const b of [...this.chunks, this.tail, this.window?.coef, this.window?.uniform]) if (b) transfers.keep(b)
    this.tail = undefined
    this.chunks = []
    this.window = undefined
  }

  destroy(): void {
    this.release()
    this.frames = 0
  }
}
