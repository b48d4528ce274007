// Every byte between the host and the GPU goes through here, and every submit and kernel dispatch
// is counted here, so the backend can say what a dream or a recall cost in traffic (`--debug`, the
// benchmarks, and the tests that hold the GPU paths to "the report only" and "the scores only").
import { CrystalError } from '../errors.js'
import type { TransferCounts } from '../field/backend.js'
import { FreeList, withSlack } from '../util/free_list.js'

const MAP_READ = 0x1
const COPY_DST = 0x8

/**
 * Buffers kept per device and usage between reads and between engines (evolve opens two a generation;
 * engine/util/free_list.ts), each list dropping what stays unused IDLE_MS:
 * - mappable ones for read-backs: making one anew for each read, and the first touch of its memory, cost
 *   more than the copy itself (64 MB on SwiftShader: 60 to 68 ms with a new buffer, 26 to 50 ms with a
 *   kept one). At most 32 (an evolve generation reads back some 12 sizes) and 2 GiB kept (population
 *   1,000 reads some 700 MB a generation, in two batches at once); reads up to 64 KiB share small ones.
 * - an engine's buffers for its life (the recorder's planes, the dream's scratch: 2.3 GB an engine at
 *   population 1,000, N = 96, where making them took the host some 0.1 s a generation): exactly the
 *   size asked for, since such buffers are bound whole.
 */
const IDLE_MS = 10_000
const kept = new WeakMap<GPUDevice, Map<number, FreeList<GPUBuffer>>>()
function keptOf(device: GPUDevice, usage: number): FreeList<GPUBuffer> {
  let byUsage = kept.get(device)
  if (!byUsage) kept.set(device, (byUsage = new Map()))
  let list = byUsage.get(usage)
  if (!list) {
    const limits = usage & MAP_READ ? { count: 32, bytes: 2 * 2 ** 30, small: 64 << 10 } : { count: 64, bytes: 8 * 2 ** 30, exact: true }
    byUsage.set(
      usage,
      (list = new FreeList<GPUBuffer>(
        (b) => b.size,
        (b) => b.destroy(),
        { ...limits, idleMs: IDLE_MS },
      )),
    )
  }
  return list
}

function staging(device: GPUDevice, bytes: number): GPUBuffer {
  const size = Math.min(device.limits.maxBufferSize, Math.max(256, withSlack(bytes)))
  return keptOf(device, MAP_READ | COPY_DST).take(bytes) ?? device.createBuffer({ size, usage: MAP_READ | COPY_DST })
}

/** A staging buffer back to its device's kept ones, unmapped. */
function keepStaging(device: GPUDevice, buffer: GPUBuffer): void {
  buffer.unmap()
  keptOf(device, MAP_READ | COPY_DST).give(buffer)
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

  /**
   * A zero-filled buffer of `bytes` for an engine's life: one of the device's kept ones (cleared on the
   * queue, before any later work) where `usage` lets it be cleared, else a new one. `keep` gives it back.
   */
  buffer(bytes: number, usage: number): GPUBuffer {
    const size = Math.max(16, Math.ceil(bytes / 4) * 4)
    const reused = usage & COPY_DST ? keptOf(this.device, usage).take(size) : undefined
    if (!reused) return this.device.createBuffer({ size, usage })
    const encoder = this.device.createCommandEncoder()
    encoder.clearBuffer(reused)
    this.submit(encoder)
    return reused
  }

  /** A buffer from `buffer` given back (nothing may use it after: work already queued on it runs first). */
  keep(buffer: GPUBuffer): void {
    if (buffer.usage & COPY_DST) keptOf(this.device, buffer.usage).give(buffer)
    else buffer.destroy()
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
    const buffer = staging(this.device, bytes)
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
    keepStaging(this.device, buffer)
    return result
  }

  snapshot(): TransferCounts {
    const { bytes_read, reads, bytes_written, writes, submits, dispatches } = this
    return { bytes_read, reads, bytes_written, writes, submits, dispatches }
  }
}
