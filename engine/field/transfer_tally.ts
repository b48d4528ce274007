// What GPU engines moved between the host and the device, summed a shape (N, fields) at a time:
// `crystal --debug`'s lines at exit, and `crystal --debug serve`'s for each evolve job and program its
// workers run (docs/gpu.md, "The transfer counter").
import type { TransferCounts } from './backend.js'
import type { Engine } from './engine.js'

type Shape = { size: number; fields: number; engines: number; counts: TransferCounts }

const n = (v: number) => v.toLocaleString('en-US')

/**
 * The engines it tracks, all that each moved since it opened, taken as each is destroyed (the counts
 * outlive the device), so that no engine is held until the end (explore opens engines for days;
 * evolve one a generation). Engines on the CPU backend count nothing.
 */
export class TransferTally {
  private readonly shapes = new Map<string, Shape>()
  /** The tracked engines not yet destroyed. */
  private readonly live = new Set<Engine>()

  /** Counts all `engine`'s transfers (since it opened); returns it. */
  track(engine: Engine): Engine {
    const destroy = engine.destroy.bind(engine)
    this.live.add(engine)
    engine.destroy = () => {
      if (this.live.delete(engine)) book(this.shapes, engine)
      destroy()
    }
    return engine
  }

  /** A line a shape: the destroyed engines' counts and the open ones' as they stand now. */
  lines(): string[] {
    const shapes = new Map([...this.shapes].map(([key, s]) => [key, { ...s, counts: { ...s.counts } }]))
    for (const engine of this.live) book(shapes, engine)
    return [...shapes.values()].map(line)
  }
}

function book(shapes: Map<string, Shape>, engine: Engine): void {
  const t = engine.transfers()
  if (!t) return
  const key = `${engine.size}x${engine.fields}`
  const shape = shapes.get(key) ?? { size: engine.size, fields: engine.fields, engines: 0, counts: zeroCounts() }
  shape.engines++
  for (const k of Object.keys(t) as (keyof TransferCounts)[]) shape.counts[k] += t[k]
  shapes.set(key, shape)
}

const zeroCounts = (): TransferCounts => ({ bytes_read: 0, reads: 0, bytes_written: 0, writes: 0, submits: 0, dispatches: 0 })

function line({ size, fields, engines, counts: t }: Shape): string {
  const shape = `N = ${size}, ${fields} field${fields === 1 ? '' : 's'}${engines === 1 ? '' : `, ${n(engines)} engines`}`
  return `gpu transfers (${shape}): read back ${n(t.bytes_read)} bytes in ${n(t.reads)} reads, wrote ${n(t.bytes_written)} bytes in ${n(t.writes)} writes, ${n(t.dispatches)} dispatches in ${n(t.submits)} submits`
}
