// Things of a size kept for the next request of about that size: a device's staging buffers for
// read-backs and the buffers an engine holds for its life (engine/gpu/transfers.ts), and the host
// memory evolve reads its windows into (engine/detect/spectra.ts reusedFloats). Making either anew,
// and the first touch of its memory, cost more than the copy it holds.

/** A new one's size for `bytes`: an eighth of slack (256-byte steps), so that the next slightly larger request finds it. */
export const withSlack = (bytes: number): number => bytes + Math.ceil(bytes / 8 / 256) * 256

export interface FreeListLimits {
  /** Things kept at most. */
  count: number
  /** Bytes kept at most, all together. */
  bytes: number
  /** A request of at most this many bytes takes any kept thing up to it (a small one is no waste). */
  small?: number
  /** Only a thing of exactly the bytes asked for is taken (one bound whole must not be larger). */
  exact?: boolean
  /** A thing kept this long without being taken leaves (memory not held after the work that used it ends). */
  idleMs?: number
}

export class FreeList<T> {
  private free: { t: T; since: number }[] = []
  private sweep: ReturnType<typeof setTimeout> | undefined

  /**
   * `sizeOf`: a thing's bytes; `drop`: told of each one that leaves (past `count` kept or `bytes` in all,
   * the oldest first; one larger than `bytes` is not kept; one idle past `idleMs`).
   */
  constructor(
    private readonly sizeOf: (t: T) => number,
    private readonly drop: (t: T) => void,
    private readonly limits: FreeListLimits,
  ) {}

  /** The smallest kept thing that holds `bytes` and is at most twice that (or `small`; exactly `bytes` where `exact`), now no longer kept. */
  take(bytes: number): T | undefined {
    this.expire()
    const most = this.limits.exact ? bytes : Math.max(2 * bytes, this.limits.small ?? 0)
    let best: { t: T; since: number } | undefined
    for (const kept of this.free) {
      const size = this.sizeOf(kept.t)
      if (size >= bytes && size <= most && (best === undefined || size < this.sizeOf(best.t))) best = kept
    }
    if (best === undefined) return undefined
    this.free = this.free.filter((k) => k !== best)
    return best.t
  }

  /** Keeps `t` for a later take (nothing may use it meanwhile). */
  give(t: T): void {
    if (this.free.some((k) => k.t === t)) return
    if (this.sizeOf(t) > this.limits.bytes) {
      this.drop(t)
      return
    }
    this.free.push({ t, since: performance.now() })
    while (this.free.length > this.limits.count || this.free.reduce((a, k) => a + this.sizeOf(k.t), 0) > this.limits.bytes)
      this.drop(this.free.shift()!.t)
    this.expire()
  }

  /** Things kept now. */
  get size(): number {
    return this.free.length
  }

  /** Drops the things idle past idleMs, and looks again when the oldest left will be (a timer that keeps no process alive). */
  private expire(): void {
    const { idleMs } = this.limits
    if (idleMs === undefined) return
    const now = performance.now()
    for (const k of this.free.filter((k) => now - k.since >= idleMs)) this.drop(k.t)
    this.free = this.free.filter((k) => now - k.since < idleMs)
    clearTimeout(this.sweep)
    this.sweep = undefined
    if (!this.free.length) return
    const timer = setTimeout(() => this.expire(), this.free[0].since + idleMs - now)
    ;(timer as { unref?: () => void }).unref?.()
    this.sweep = timer
  }
}
