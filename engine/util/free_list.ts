// Things of a size kept for the next request of about that size: a device's staging buffers for
// read-backs (engine/gpu/transfers.ts) and the host memory evolve reads its windows into
// (engine/detect/spectra.ts reusedFloats). Making either anew, and the first touch of its memory,
// cost more than the copy it holds.

/** A new one's size for `bytes`: an eighth of slack (256-byte steps), so that the next slightly larger request finds it. */
export const withSlack = (bytes: number): number => bytes + Math.ceil(bytes / 8 / 256) * 256

export class FreeList<T> {
  private free: T[] = []

  /**
   * `sizeOf`: a thing's bytes; `drop`: told of each one that leaves (past `count` kept or `bytes` in all,
   * the oldest first; one larger than `bytes` is not kept). A request of at most `small` bytes takes any
   * kept thing up to `small` (a small one is no waste).
   */
  constructor(
    private readonly sizeOf: (t: T) => number,
    private readonly drop: (t: T) => void,
    private readonly limits: { count: number; bytes: number; small?: number },
  ) {}

  /** The smallest kept thing that holds `bytes` and is at most twice that (or `small`), now no longer kept. */
  take(bytes: number): T | undefined {
    const most = Math.max(2 * bytes, this.limits.small ?? 0)
    let best: T | undefined
    for (const t of this.free) {
      const size = this.sizeOf(t)
      if (size >= bytes && size <= most && (best === undefined || size < this.sizeOf(best))) best = t
    }
    if (best !== undefined) this.free = this.free.filter((t) => t !== best)
    return best
  }

  /** Keeps `t` for a later take (nothing may use it meanwhile). */
  give(t: T): void {
    if (this.free.includes(t)) return
    if (this.sizeOf(t) > this.limits.bytes) {
      this.drop(t)
      return
    }
    this.free.push(t)
    while (this.free.length > this.limits.count || this.free.reduce((a, x) => a + this.sizeOf(x), 0) > this.limits.bytes)
      this.drop(this.free.shift()!)
  }
}
