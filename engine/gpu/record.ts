// A recorded window kept on the GPU: each frame of u is copied on the device into a frame buffer as
// the batch steps (no read back), and the whole window comes back with the stability sums (the
// dream's, shaders/dream.wgsl accumulate) in one read, or one per maxBufferSize of frames for a very
// large batch. CPU twin: engine/cpu/record.ts; test: engine/discovery/record.test.ts.
import type { WindowRecorder } from '../field/backend.js'
import type { GpuContext } from './context.js'

const STORAGE = 0x80 | 0x4 | 0x8 // STORAGE | COPY_SRC | COPY_DST

export class GpuRecorder implements WindowRecorder {
  /** Buffers of whole frames; the last holds the stability sums after its frames. */
  private chunks: GPUBuffer[] = []
  private perChunk = 1
  private count = 0

  constructor(
    private readonly gpu: GpuContext,
    private readonly sums: () => GPUBuffer,
  ) {}

  private get frameBytes(): number {
    return this.gpu.n * this.gpu.n * this.gpu.fields * 4
  }

  /** Chunks for `frames` frames plus the sums, each at most the device's largest buffer. */
  private allocate(frames: number): void {
    for (const b of this.chunks) b.destroy()
    const bytes = this.frameBytes
    this.perChunk = Math.max(1, Math.floor(this.gpu.device.limits.maxBufferSize / bytes) - 1)
    const chunks = Math.max(1, Math.ceil(frames / this.perChunk))
    this.chunks = Array.from({ length: chunks }, (_, c) => {
      const held = c < chunks - 1 ? this.perChunk : frames - c * this.perChunk
      return this.gpu.device.createBuffer({ size: (held + (c === chunks - 1 ? 1 : 0)) * bytes, usage: STORAGE })
    })
    this.count = frames
  }

  capture(slot: number, frames: number): Promise<void> {
    if (slot === 0 && frames !== this.count) this.allocate(frames)
    const bytes = this.frameBytes
    const encoder = this.gpu.device.createCommandEncoder()
    const chunk = Math.floor(slot / this.perChunk)
    encoder.copyBufferToBuffer(this.gpu.state().u, 0, this.chunks[chunk], (slot - chunk * this.perChunk) * bytes, bytes)
    this.gpu.device.queue.submit([encoder.finish()])
    return Promise.resolve()
  }

  async collect(frames: boolean): Promise<{ frames: Float32Array; sums: Float32Array }> {
    if (!this.chunks.length) this.allocate(0)
    const bytes = this.frameBytes
    const floats = bytes / 4
    const out = new Float32Array(frames ? this.count * floats : 0)
    const last = this.chunks.length - 1
    let sums = new Float32Array(0)
    for (const [c, chunk] of this.chunks.entries()) {
      if (!frames && c < last) continue
      const held = c < last ? this.perChunk : this.count - last * this.perChunk
      const encoder = this.gpu.device.createCommandEncoder()
      if (c === last) encoder.copyBufferToBuffer(this.sums(), 0, chunk, held * bytes, bytes)
      const from = frames ? 0 : held * bytes
      const end = (c === last ? held + 1 : held) * bytes
      const back = new Float32Array(await this.gpu.transfers.read(chunk, from, end - from, encoder, () => this.gpu.failure()))
      if (frames) out.set(back.subarray(0, held * floats), c * this.perChunk * floats)
      if (c === last) sums = back.slice(back.length - floats)
    }
    this.gpu.check()
    return { frames: out, sums }
  }

  destroy(): void {
    for (const b of this.chunks) b.destroy()
    this.chunks = []
    this.count = 0
  }
}
