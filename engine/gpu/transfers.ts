// Every byte between the host and the GPU goes through here, and every submit and kernel dispatch
// is counted here, so the backend can say what a dream or a recall cost in traffic (`--debug`, the
// benchmarks, and the tests that hold the GPU paths to "the report only" and "the scores only").
import { CrystalError } from '../errors.js'
import type { TransferCounts } from '../field/backend.js'
import { FreeList, withSlack } from '../util/free_list.js'

const MAP_READ = 0x1
const COPY_SRC = 0x4
const COPY_DST = 0x8

/**
 * Buffers kept per device and usage between reads and between engines (evolve opens two a generation;
 * engine/util/free_list.ts), each list dropping what stays unused IDLE_MS:
 * - mappable ones for read-backs: making one anew for each read, and the first touch of its memory, cost
 *   more than the copy itself (64 MB on SwiftShader: 60 to 68 ms with a new buffer, 26 to 50 ms with a
 *   kept one). At most 32 (an evolve generation reads back some 12 sizes) and 2 GiB kept (population
 *   1,000 read some 700 MB a generation before 11-28, 160 MB now); reads up to 64 KiB share small ones.
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

/** A buffer that work handed over (submitWithNext) uses: the whole of it, or the bytes [offset, offset + size). */
export type BufferUse = GPUBuffer | { buffer: GPUBuffer; offset: number; size: number }

/**
 * Uniform slots taken in turn, `count` at a time, from 0 again where they would not fit: work handed
 * over (submitWithNext) keeps its slots until later work's come round to them, and a write there
 * submits it first, so the next work's write need not wait for it.
 */
export class SlotRing {
  private next = 0
  constructor(private readonly capacity: number) {}

  /** The first of `count` slots in a row. */
  claim(count: number): number {
    if (this.next + count > this.capacity) this.next = 0
    const first = this.next
    this.next += count
    return first
  }
}

/**
 * Command buffers handed over (submitWithNext) that go in one submit once this many wait: short runs of
 * steps and the frames and samples taken between them (evolve's window: 32 runs of 4 steps, each with a
 * frame) go in a few submits, not one a run, and the device is fed at least every so many.
 */
export const DEFERRED_MAX = 16

/** Bytes of a buffer to read back. */
export interface ReadRange {
  src: GPUBuffer
  offset: number
  bytes: number
}

/** Bytes copied aside to come back with a later read (Transfers.ride), whose copy `owner` handed over, and who waits for them. */
interface Ride {
  owner: Transfers
  aside: GPUBuffer
  bytes: number
  done: (back: ArrayBuffer | Error) => void
}

/**
 * The rides waiting, per device: a device has one queue, so a read of any engine on it brings back
 * every ride that fits, whichever engine's (evolve's gather, made on a batch, comes back with the
 * perturbation's read, made on a batch extracted from it: docs/detection.md).
 */
const waiting = new WeakMap<GPUDevice, Ride[]>()
function ridesOf(device: GPUDevice): Ride[] {
  let rides = waiting.get(device)
  if (!rides) waiting.set(device, (rides = []))
  return rides
}

export class Transfers implements TransferCounts {
  bytes_read = 0
  reads = 0
  bytes_written = 0
  writes = 0
  submits = 0
  dispatches = 0

  /** Bytes copied aside (ride) to come back with the device's next read, and who waits for them: this device's. */
  private readonly rides: Ride[]
  /** Work handed over by `submitWithNext`, and the buffers it uses. */
  private deferred: GPUCommandBuffer[] = []
  /** Per buffer, the byte ranges of it that work handed over uses ([0, its size) where it uses the whole). */
  private deferredUses = new Map<GPUBuffer, [number, number][]>()

  constructor(private readonly device: GPUDevice) {
    this.rides = ridesOf(device)
  }

  /**
   * `bytes` of `src` at `offset`, as they are once the work queued so far is done, brought back with
   * the device's next read (this one's, or another's on the device) rather than on a read of their
   * own: copied aside on the device, with the next submit (that read's; submitWithNext; another's read
   * submits it first). Returns how to take them: as that read brought them, or, where none has come
   * yet, by a read of their own then (so nothing waits for a read that may never come).
   */
  ride(src: GPUBuffer, offset: number, bytes: number, failure: () => string | undefined): () => Promise<ArrayBuffer> {
    return this.rideSpans(src, [[offset, bytes]], failure)
  }

  /** As `ride`, several spans of `src` ([offset, bytes] each), back one after another in one buffer. */
  rideSpans(src: GPUBuffer, spans: readonly (readonly [number, number])[], failure: () => string | undefined): () => Promise<ArrayBuffer> {
    const bytes = spans.reduce((sum, [, b]) => sum + b, 0)
    const aside = this.device.createBuffer({ size: Math.max(4, bytes), usage: COPY_SRC | COPY_DST })
    const encoder = this.device.createCommandEncoder()
    spans.reduce((at, [offset, b]) => {
      encoder.copyBufferToBuffer(src, offset, aside, at, b)
      return at + b
    }, 0)
    this.submitWithNext(encoder, [...spans.map(([offset, size]) => ({ buffer: src, offset, size })), aside])
    let ride: Ride | undefined
    const back = new Promise<ArrayBuffer>((resolve, reject) => {
      ride = {
        owner: this,
        aside,
        bytes,
        done: (b) => {
          // its copy may still wait (dropRides before any read)
          this.destroy(aside)
          b instanceof Error ? reject(b) : resolve(b)
        },
      }
    })
    this.rides.push(ride!)
    // handled here: a failed read rejects it whether or not it is ever taken
    back.catch(() => {})
    return async () => {
      // not yet on a read (one under way carries it already): a read of its own
      if (this.rides.includes(ride!)) await this.mapped([], this.device.createCommandEncoder(), failure, () => undefined)
      return back
    }
  }

  /** This one's rides still waiting end in failure (its backend is closing); other engines' wait on. */
  dropRides(): void {
    const mine = this.rides.filter((r) => r.owner === this)
    this.take(mine)
    for (const r of mine) r.done(new CrystalError('backend_unavailable', 'the GPU backend closed before its read came back'))
  }

  /** `rides` out of the device's waiting list. */
  private take(rides: readonly Ride[]): void {
    const left = this.rides.filter((r) => !rides.includes(r))
    this.rides.splice(0, this.rides.length, ...left)
  }

  write(buffer: GPUBuffer, offset: number, data: ArrayBuffer | ArrayBufferView, dataOffset = 0, size?: number): void {
    const bytes = size ?? data.byteLength - dataOffset
    // a write lands before the next submit: work handed over that uses those bytes goes first
    if (this.deferredUses.get(buffer)?.some(([from, to]) => from < offset + bytes && offset < to)) this.flush()
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
   * queue, before any later work) where `usage` lets it be cleared, else a new one; with `cleared`
   * false, a kept one as it was left (scratch its kernels write before they read). `keep` gives it back.
   */
  buffer(bytes: number, usage: number, { cleared = true }: { cleared?: boolean } = {}): GPUBuffer {
    const size = Math.max(16, Math.ceil(bytes / 4) * 4)
    const reused = usage & COPY_DST ? keptOf(this.device, usage).take(size) : undefined
    if (!reused) return this.device.createBuffer({ size, usage })
    if (!cleared) return reused
    const encoder = this.device.createCommandEncoder()
    encoder.clearBuffer(reused)
    this.submit(encoder)
    return reused
  }

  /**
   * `held` where it has `bytes`, else a larger buffer of `usage` in its place: work handed over that
   * binds the old one is submitted first, and the queue finishes what reads it.
   */
  room(held: GPUBuffer | undefined, bytes: number, usage: number): GPUBuffer {
    if (held && held.size >= bytes) return held
    if (held) this.destroy(held)
    return this.device.createBuffer({ size: Math.max(16, bytes), usage })
  }

  /** A buffer from `buffer` given back (nothing may use it after: work already queued on it runs first). */
  keep(buffer: GPUBuffer): void {
    if (this.deferredUses.has(buffer)) this.flush()
    if (buffer.usage & COPY_DST) keptOf(this.device, buffer.usage).give(buffer)
    else buffer.destroy()
  }

  /** `buffer` destroyed, after the work handed over that uses it is submitted (work submitted keeps it until done). */
  destroy(buffer: GPUBuffer): void {
    if (this.deferredUses.has(buffer)) this.flush()
    buffer.destroy()
  }

  /** Hands `encoder`'s work to the queue, counted (after any handed over by `submitWithNext`, in one submit). */
  submit(encoder: GPUCommandEncoder): void {
    this.submits++
    this.device.queue.submit([...this.takeDeferred(), encoder.finish()])
  }

  /**
   * Hands `encoder`'s work to the queue with the next submit (or read), ahead of that one's work, or
   * with others handed over once DEFERRED_MAX wait: a frame captured or a stability sample taken
   * between two steps rides with the steps after it, and short runs of steps with each other (a submit
   * of its own each cost evolve some 60 submits a generation of 165 at N = 32, then 67 of 95), and so
   * do the changes booked and their held sums (39 of 71 at the defaults). `uses`:
   * every buffer the work reads or writes, or the bytes of one (a uniform's slots). A write to them (or
   * the buffer's return to the kept ones, or its `destroy` here) first submits the work, so it still
   * sees them as they were when it was handed over. Its errors show at a check after that submit.
   */
  submitWithNext(encoder: GPUCommandEncoder, uses: readonly BufferUse[]): void {
    this.deferred.push(encoder.finish())
    for (const use of uses) {
      const [buffer, range] =
        'buffer' in use ? [use.buffer, [use.offset, use.offset + use.size] as [number, number]] : [use, [0, use.size] as [number, number]]
      const ranges = this.deferredUses.get(buffer)
      if (ranges) ranges.push(range)
      else this.deferredUses.set(buffer, [range])
    }
    if (this.deferred.length >= DEFERRED_MAX) this.flush()
  }

  /** Submits the work `submitWithNext` handed over, if any. */
  flush(): void {
    if (!this.deferred.length) return
    this.submits++
    this.device.queue.submit(this.takeDeferred())
  }

  /** The work handed over is dropped unsubmitted (its backend is closing). */
  dropDeferred(): void {
    this.takeDeferred()
  }

  private takeDeferred(): GPUCommandBuffer[] {
    this.deferredUses.clear()
    return this.deferred.splice(0)
  }

  /** Queues one kernel launch on `pass`, counted. */
  dispatch(pass: GPUComputePassEncoder, x: number, y = 1, z = 1): void {
    this.dispatches++
    pass.dispatchWorkgroups(x, y, z)
  }

  /** Copies `bytes` of `src` at `offset` back to the host, after the work `encoder` holds. */
  read(src: GPUBuffer, offset: number, bytes: number, encoder: GPUCommandEncoder, failure: () => string | undefined): Promise<ArrayBuffer> {
    return this.mapped([{ src, offset, bytes }], encoder, failure, (range) => range.slice(0, bytes))
  }

  /**
   * Ranges of any buffers, as they are once the work queued so far is done, copied straight into one
   * staging buffer and read back at once (with the rides waiting); in as many reads as keep each within
   * the device's largest buffer. One array a range, in order.
   */
  async readRanges(ranges: readonly ReadRange[], failure: () => string | undefined): Promise<ArrayBuffer[]> {
    const room = this.device.limits.maxBufferSize
    const out: ArrayBuffer[] = []
    for (let from = 0, to = 0; from < ranges.length; from = to) {
      let total = ranges[from].bytes
      for (to = from + 1; to < ranges.length && total + ranges[to].bytes <= room; to++) total += ranges[to].bytes
      const group = ranges.slice(from, to)
      const parts = await this.mapped(group, this.device.createCommandEncoder(), failure, (range) => {
        let at = 0
        return group.map((r) => range.slice(at, (at += r.bytes)))
      })
      out.push(...parts)
    }
    return out
  }

  /** read's bytes copied straight into `into` (memory of the caller's, such as one shared with worker threads): one copy, not two. */
  readInto(
    src: GPUBuffer,
    offset: number,
    encoder: GPUCommandEncoder,
    failure: () => string | undefined,
    into: Float32Array,
  ): Promise<void> {
    return this.mapped([{ src, offset, bytes: into.byteLength }], encoder, failure, (range) =>
      into.set(new Float32Array(range, 0, into.length)),
    )
  }

  /** `ranges` (none: only the rides) and every ride waiting, copied into one staging buffer after `encoder`'s work, in one read. */
  private async mapped<T>(
    ranges: readonly ReadRange[],
    encoder: GPUCommandEncoder,
    failure: () => string | undefined,
    use: (range: ArrayBuffer) => T,
  ): Promise<T> {
    const bytes = ranges.reduce((sum, r) => sum + r.bytes, 0)
    // the rides that fit beside the read in one staging buffer; the others wait for the next
    const room = this.device.limits.maxBufferSize
    let total = bytes
    const rides = this.rides.filter((r) => (total + r.bytes <= room || total === 0 ? ((total += r.bytes), true) : false))
    this.take(rides)
    // another engine's copies aside go to the queue before this read's copies of them
    for (const owner of new Set(rides.map((r) => r.owner))) if (owner !== this) owner.flush()
    const buffer = staging(this.device, total)
    ranges.reduce((at, r) => {
      encoder.copyBufferToBuffer(r.src, r.offset, buffer, at, r.bytes)
      return at + r.bytes
    }, 0)
    rides.reduce((at, r) => {
      encoder.copyBufferToBuffer(r.aside, 0, buffer, at, r.bytes)
      return at + r.bytes
    }, bytes)
    this.submit(encoder)
    // the read is this one's; each ride's bytes are its owner's (evolve --debug counts an engine's own)
    this.bytes_read += bytes
    for (const r of rides) r.owner.bytes_read += r.bytes
    this.reads++
    let result: T
    try {
      await buffer.mapAsync(MAP_READ, 0, total)
      const range = buffer.getMappedRange(0, total)
      result = use(range)
      rides.reduce((at, r) => {
        r.done(range.slice(at, at + r.bytes))
        return at + r.bytes
      }, bytes)
    } catch (e) {
      buffer.destroy()
      const error = new CrystalError('backend_unavailable', `reading back from the GPU failed: ${failure() ?? (e as Error).message}`)
      for (const r of rides) r.done(error)
      throw error
    }
    keepStaging(this.device, buffer)
    return result
  }

  snapshot(): TransferCounts {
    const { bytes_read, reads, bytes_written, writes, submits, dispatches } = this
    return { bytes_read, reads, bytes_written, writes, submits, dispatches }
  }
}
