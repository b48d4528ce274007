// A recorded window kept on the GPU and reduced there: each captured frame of u is added into the
// window's planes by shaders/spectra.wgsl (sum u, sum |u|, the windowed DFT sums; no frame is kept
// or read back), and the planes come back with the stability sums (the dream's, shaders/dream.wgsl
// accumulate) and u as it is then, in one read, or one per maxBufferSize of planes for a very large
// batch. CPU twin: engine/cpu/record.ts; tests: engine/detect/spectra.test.ts, engine/discovery/record.test.ts.
import type { WindowRecorder, WindowRecording } from '../field/backend.js'
import { PlaneArray, windowCoefficients, windowPlanes } from '../detect/spectra.js'
import { CrystalError } from '../errors.js'
import { kernelModule, type GpuContext } from './context.js'
import { SHADERS } from './shaders.gen.js'

const STORAGE = 0x80 | 0x4 | 0x8 // STORAGE | COPY_SRC | COPY_DST
const UNIFORM = 0x40 | 0x8
const WG = 256
/** The uniform's slots, one per chunk of planes, at the 256-byte offsets a dynamic offset needs. */
const SLOT = 256

export class GpuRecorder implements WindowRecorder {
  /** Buffers of whole planes; the last holds the stability sums and u after its planes. */
  private chunks: GPUBuffer[] = []
  private perChunk = 1
  private frames = 0
  /** The window's factors and the uniform's slots, made with its chunks; the kernel, made once. */
  private window: { coef: GPUBuffer; uniform: GPUBuffer; pipeline: GPUComputePipeline } | undefined
  private pipeline: GPUComputePipeline | undefined

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

  /** Chunks for a window `frames` long (its planes, then the sums and u), each within the device's limits. */
  private allocate(frames: number): void {
    this.release()
    const { device } = this.gpu
    const bytes = this.planeBytes
    this.frames = frames
    const limit = this.maxBytes ?? Math.min(device.limits.maxBufferSize, device.limits.maxStorageBufferBindingSize)
    // two planes' room in every chunk, so that the last (sums and u after its planes) fits as the others do
    this.perChunk = Math.max(1, Math.floor(limit / bytes) - 2)
    const count = Math.max(1, Math.ceil(this.planes / this.perChunk))
    this.chunks = Array.from({ length: count }, (_, c) => {
      const held = c < count - 1 ? this.perChunk : this.planes - c * this.perChunk
      return device.createBuffer({ size: (held + (c === count - 1 ? 2 : 0)) * bytes, usage: STORAGE })
    })
    const factors = windowCoefficients(Math.max(1, frames))
    const coef = device.createBuffer({ size: factors.byteLength, usage: STORAGE })
    this.gpu.transfers.write(coef, 0, factors.buffer as ArrayBuffer)
    const uniform = device.createBuffer({ size: count * SLOT, usage: UNIFORM })
    this.pipeline ??= device.createComputePipeline({
      layout: 'auto',
      compute: { module: kernelModule(device, '', SHADERS.spectra), entryPoint: 'accumulate' },
    })
    this.window = { coef, uniform, pipeline: this.pipeline }
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

  async collect(full: boolean): Promise<WindowRecording> {
    if (!this.chunks.length) this.allocate(0)
    const bytes = this.planeBytes
    const floats = bytes / 4
    const planes = new Float32Array(full ? this.planes * floats : 0)
    const last = this.chunks.length - 1
    let tail = new Float32Array(0)
    for (const [c, chunk] of this.chunks.entries()) {
      if (!full && c < last) continue
      const held = c < last ? this.perChunk : this.planes - last * this.perChunk
      const encoder = this.gpu.device.createCommandEncoder()
      if (c === last) {
        encoder.copyBufferToBuffer(this.sums(), 0, chunk, held * bytes, bytes)
        encoder.copyBufferToBuffer(this.gpu.state().u, 0, chunk, (held + 1) * bytes, bytes)
      }
      // without the planes, the sums alone
      const from = full ? 0 : held * bytes
      const end = (c === last ? (full ? held + 2 : held + 1) : held) * bytes
      const back = new Float32Array(await this.gpu.transfers.read(chunk, from, end - from, encoder, () => this.gpu.failure()))
      if (full) planes.set(back.subarray(0, held * floats), c * this.perChunk * floats)
      if (c === last) tail = back.slice(full ? held * floats : 0)
    }
    this.gpu.check()
    const cells = this.gpu.n * this.gpu.n
    return {
      frames: this.frames,
      window: (f) => new PlaneArray(planes, f * cells, floats),
      sums: tail.subarray(0, floats),
      u: full ? tail.subarray(floats) : new Float32Array(0),
    }
  }

  private release(): void {
    for (const b of this.chunks) b.destroy()
    this.window?.coef.destroy()
    this.window?.uniform.destroy()
    this.chunks = []
    this.window = undefined
  }

  destroy(): void {
    this.release()
    this.frames = 0
  }
}
