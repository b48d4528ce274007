// What GPU engines moved between the host and the device, summed a shape (N, fields) at a time (the
// engines made from one, an extract or a fork, in its shape's line):
// `crystal --debug`'s lines at exit, and `crystal --debug serve`'s for each evolve job and program its
// workers run (docs/gpu.md, "The transfer counter").
import type { TransferCounts } from './backend.js'
import type { Engine } from './engine.js'

/** `made`: engines made from the tracked ones (Engine.extract, fork, twin: evolve's perturbation, a fork's observation), counted in their line. */
type Shape = { size: number; fields: number; engines: number; made: number; counts: TransferCounts }

const n = (v: number) => v.toLocaleString('en-US')

/**
 * The engines it tracks, all that each moved since it opened, taken as each is destroyed (the counts
 * outlive the device), so that no engine is held until the end (explore opens engines for days;
 * evolve one a generation). Engines on the CPU backend count nothing.
 */
export class TransferTally {
  private readonly shapes = new Map<string, Shape>()
  /** The tracked engines not yet destroyed, each with the engine it was made from (none: opened). */
  private readonly live = new Map<Engine, Engine | undefined>()

  /**
   * Counts all `engine`'s transfers (since it opened), and those of the engines made from it, in its
   * shape's line; returns it.
   */
  track(engine: Engine, from?: Engine): Engine {
    if (this.live.has(engine)) return engine
    this.live.set(engine, from)
    const origin = from ?? engine
    const destroy = engine.destroy.bind(engine)
    engine.destroy = () => {
      if (this.live.delete(engine)) book(this.shapes, engine, from)
      destroy()
    }
    // fork makes its engine through twin: tracked once
    const [extract, fork, twin] = [engine.extract.bind(engine), engine.fork.bind(engine), engine.twin.bind(engine)]
    engine.extract = async (fields) => this.track(await extract(fields), origin)
    engine.fork = async (field) => this.track(await fork(field), origin)
    engine.twin = async (fields) => this.track(await twin(fields), origin)
    return engine
  }

  /** A line a shape: the destroyed engines' counts and the open ones' as they stand now. */
  lines(): string[] {
    return [...this.current().values()].map(line)
  }

  /** Everything the tracked engines moved so far, summed over the shapes; undefined where none moved anything (no GPU engine). */
  total(): TransferCounts | undefined {
    const shapes = [...this.current().values()]
    if (!shapes.length) return undefined
    const sum = zeroCounts()
    for (const { counts } of shapes) for (const k of Object.keys(sum) as (keyof TransferCounts)[]) sum[k] += counts[k]
    return sum
  }

  /** The shapes with the open engines' counts as they stand now. */
  private current(): Map<string, Shape> {
    const shapes = new Map([...this.shapes].map(([key, s]) => [key, { ...s, counts: { ...s.counts } }]))
    for (const [engine, from] of this.live) book(shapes, engine, from)
    return shapes
  }
}

/** `engine`'s counts into its line: its own shape's, or that of the engine it was made from. */
function book(shapes: Map<string, Shape>, engine: Engine, from: Engine | undefined): void {
  const t = engine.transfers()
  if (!t) return
  const { size, fields } = from ?? engine
  const key = `${size}x${fields}`
  const shape = shapes.get(key) ?? { size, fields, engines: 0, made: 0, counts: zeroCounts() }
  if (from) shape.made++
  else shape.engines++
  for (const k of Object.keys(t) as (keyof TransferCounts)[]) shape.counts[k] += t[k]
  shapes.set(key, shape)
}

const zeroCounts = (): TransferCounts => ({ bytes_read: 0, reads: 0, bytes_written: 0, writes: 0, submits: 0, dispatches: 0 })

function line({ size, fields, engines, made, counts: t }: Shape): string {
  const opened = engines === 1 ? '' : `, ${n(engines)} engines`
  const more = made ? `, ${n(made)} more made from ${engines === 1 ? 'it' : 'them'}` : ''
  const shape = `N = ${size}, ${fields} field${fields === 1 ? '' : 's'}${opened}${more}`
  return `gpu transfers (${shape}): read back ${n(t.bytes_read)} bytes in ${n(t.reads)} reads, wrote ${n(t.bytes_written)} bytes in ${n(t.writes)} writes, ${n(t.dispatches)} dispatches in ${n(t.submits)} submits`
}
