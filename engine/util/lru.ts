// A keyed cache bounded by bytes, least recently used first out: recall's kept wavefronts and
// patterns on the host (engine/recall/recall.ts) and their copies on a device (engine/gpu/adjoint.ts).

export class ByteLru<K, V> {
  // a Map iterates in insertion order, so putting an entry back on each use keeps the least recent first
  private readonly entries = new Map<K, { value: V; bytes: number }>()
  private held = 0

  /**
   * `bound`: the bytes kept at most, read at each `set` (recall's follows the field's size; a device's,
   * the sweep's). `dropped`: told of each value that leaves (evicted, replaced by another value,
   * cleared, or refused as larger than the bound), e.g. to free a GPU buffer.
   */
  constructor(
    private readonly bound: () => number,
    private readonly dropped?: (value: V, key: K) => void,
  ) {}

  /** The bytes kept now. */
  get bytes(): number {
    return this.held
  }

  get size(): number {
    return this.entries.size
  }

  /** Whether `key` is kept (not a use: its place in the order stays). */
  has(key: K): boolean {
    return this.entries.has(key)
  }

  /** The value kept under `key`, now the most recently used. */
  get(key: K): V | undefined {
    const entry = this.entries.get(key)
    if (!entry) return undefined
    this.entries.delete(key)
    this.entries.set(key, entry)
    return entry.value
  }

  /**
   * Keeps `value` (`bytes` of it) under `key` as the most recently used, then drops the least recently
   * used until the bytes kept are within the bound, passing over the keys `spare` names (the patterns
   * a device's sweep in progress uses: those may take the cache past its bound). A value larger than
   * the bound on its own is not kept, unless spared.
   */
  set(key: K, value: V, bytes: number, spare?: (key: K) => boolean): void {
    const old = this.entries.get(key)
    if (old) {
      this.entries.delete(key)
      this.held -= old.bytes
      if (old.value !== value) this.dropped?.(old.value, key)
    }
    const bound = this.bound()
    if (bytes > bound && !spare?.(key)) {
      this.dropped?.(value, key)
      return
    }
    this.entries.set(key, { value, bytes })
    this.held += bytes
    for (const [k, entry] of this.entries) {
      if (this.held <= bound) break
      if (spare?.(k)) continue
      this.entries.delete(k)
      this.held -= entry.bytes
      this.dropped?.(entry.value, k)
    }
  }

  /** Drops everything, least recently used first. */
  clear(): void {
    const all = [...this.entries]
    this.entries.clear()
    this.held = 0
    for (const [k, { value }] of all) this.dropped?.(value, k)
  }
}
