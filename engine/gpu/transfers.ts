// Every byte between the host and the GPU goes through here, and every submit and kernel dispatch
// is counted here, so the backend can say what a dream or a recall cost in traffic (`--debug`, the
// benchmarks, and the tests that hold the GPU paths to "the report only" and "the scores only").
import { CrystalError } from '../errors.js'
import type { TransferCounts } from '../field/backend.js'

const MAP_READ = 0x1
const COPY_DST = 0x8

/** Free staging buffers a device keeps at most (an evolve generation reads back some 12 sizes), and their bytes. */
const KEPT = 32
const KEPT_BYTES = 1 << 30
/** A read this small takes any free buffer up to this size (a small buffer is no waste). */
const SMALL = 64 << 10

/**
 * Mappable buffers for read-backs, kept per device between reads and between engines (evolve opens
 * two a generation): making one anew for each read, and the first touch of its memory, cost more than
 * the copy itself (64 MB on SwiftShader: 60 to 68 ms with a new buffer, 26 to 50 ms with a kept one).
 * The smallest free one that holds a read and is at most twice its size (or SMALL) is taken; a new one
 * has an eighth of slack, within the device's largest buffer, so that the next generation's slightly
 * larger read finds it; past KEPT or KEPT_BYTES the oldest go.
 */
class StagingBuffers {
  private free: GPUBuffer[] = []

  constructor(private readonly device: GPUDevice) {}

  take(bytes: number): GPUBuffer {
    let best: GPUBuffer | undefined
    for (const b of this.free) if (b.size >= bytes && b.size <= Math.max(2 * bytes, SMALL) && (!best || b.size < best.size)) best = b
    if (best) {
      this.free = this.free.filter((b) => b !== best)
      return best
    }
    const slack = Math.ceil(bytes / 8 / 256) * 256
    const size = Math.min(this.device.limits.maxBufferSize, Math.max(256, bytes + slack))
    return this.device.createBuffer({ size, usage: MAP_READ | COPY_DST })
  }

  give(buffer: GPUBuffer): void {
    buffer.unmap()
    if (buffer.size > KEPT_BYTES) {
      buffer.destroy()
      return
    }
    this.free.push(buffer)
    while (this.free.length > KEPT || this.free.reduce((a, b) => a + b.size, 0) > KEPT_BYTES) this.free.shift()!.destroy()
  }
}
const stagings = new WeakMap<GPUDevice, StagingBuffers>()
function stagingOf(device: GPUDevice): StagingBuffers {
  let s = stagings.get(device)
  if (!s) stagings.set(device, (s = new StagingBuffers(device)))
  return s
}

export class Transfers implements TransferCounts {
  bytes_read = 0
  reads = 0
  bytes_written = 0
  writes = 0
  submits = 0
  dispatches = 0

  constructor(private readonly device: GPUDevice) {}

  write(buffer: GPUBuffer, offset: number, data: ArrayBuffer | ArrayBufferView, dataOffset = 0, size?: number): void {
    const bytes = size ?? (ArrayBuffer.isView(data) ? data.byteLength : data.byteLength) - dataOffset
    this.bytes_written += bytes
    this.writes++
    const view = ArrayBuffer.isView(data)
      ? new Uint8Array(data.buffer, data.byteOffset + dataOffset, bytes)
      : new Uint8Array(data, dataOffset, bytes)
    // Dawn's Node binding takes no shared memory (the detection pool's threads make evolve's waves there): a copy goes up
    const from = view.buffer instanceof ArrayBuffer ? view : view.slice()
    this.device.queue.writeBuffer(buffer, offset, from.buffer, from.byteOffset, bytes)
  }

  /** Hands `encoder`'s work to the queue, counted. */
  submit(encoder: GPUCommandEncoder): void {
    this.submits++
    this.device.queue.submit([encoder.finish()])
  }

  /** Queues one kernel launch on `pass`, counted. */
  dispatch(pass: GPUComputePassEncoder, x: number, y = 1, z = 1): void {
    this.dispatches++
    pass.dispatchWorkgroups(x, y, z)
  }

  /** Copies `bytes` of `src` at `offset` back to the host, after the work `encoder` holds. */
  read(src: GPUBuffer, offset: number, bytes: number, encoder: GPUCommandEncoder, failure: () => string | undefined): Promise<ArrayBuffer> {
    return this.mapped(src, offset, bytes, encoder, failure, (range) => range.slice(0))
  }

  /** read's bytes copied straight into `into` (memory of the caller's, such as one shared with worker threads): one copy, not two. */
  readInto(
    src: GPUBuffer,
    offset: number,
    encoder: GPUCommandEncoder,
    failure: () => string | undefined,
    into: Float32Array,
  ): Promise<void> {
    return this.mapped(src, offset, into.byteLength, encoder, failure, (range) => into.set(new Float32Array(range)))
  }

  private async mapped<T>(
    src: GPUBuffer,
    offset: number,
    bytes: number,
    encoder: GPUCommandEncoder,
    failure: () => string | undefined,
    use: (range: ArrayBuffer) => T,
  ): Promise<T> {
    const staging = stagingOf(this.device)
    const buffer = staging.take(bytes)
    encoder.copyBufferToBuffer(src, offset, buffer, 0, bytes)
    this.submit(encoder)
    this.bytes_read += bytes
    this.reads++
    let result: T
    try {
      await buffer.mapAsync(MAP_READ, 0, bytes)
      result = use(buffer.getMappedRange(0, bytes))
    } catch (e) {
      buffer.destroy()
      throw new CrystalError('backend_unavailable', `reading back from the GPU failed: ${failure() ?? (e as Error).message}`)
    }
    staging.give(buffer)
    return result
  }

  snapshot(): TransferCounts {
    const { bytes_read, reads, bytes_written, writes, submits, dispatches } = this
    return { bytes_read, reads, bytes_written, writes, submits, dispatches }
  }
}
