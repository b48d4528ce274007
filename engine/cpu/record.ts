// The CPU twin of engine/gpu/record.ts: a recorded window over any backend's read, the frames copied
// as they are captured and reduced to the window's planes by the twin of shaders/spectra.wgsl
// (engine/cpu/spectra.ts) only where detection reads them; the stability sums are the host dream's
// (engine/cpu/dream.ts). Frames and sums are kept on shared memory, so that worker threads detect on
// them without a copy (engine/discovery/detector.ts).
import {
  type FieldBackend,
  NOTHING_HELD,
  type PerturbationQuery,
  type PerturbationSums,
  type WindowRecorder,
  type WindowRecording,
} from '../field/backend.js'
import { BASIN_SUMS, basinSums } from '../detect/basin.js'
import { erasePlan } from '../detect/erase_plan.js'
import { REGROWTH_SUMS, regrowthSums } from '../detect/regrowth.js'
import { sharedFloats } from '../detect/spectra.js'
import { CrystalError } from '../errors.js'
import { FramePlanes } from './spectra.js'

export class HostRecorder implements WindowRecorder {
  private frames: Float32Array[] = []
  /** The stability sums as holdSums found them. */
  private held: Float32Array | undefined

  constructor(
    private readonly core: FieldBackend,
    private readonly sums: () => Float32Array,
  ) {}

  async capture(slot: number, frames: number): Promise<void> {
    if (slot === 0) this.frames = Array.from({ length: frames })
    const u = await this.core.readU()
    const frame = sharedFloats(u.length)
    frame.set(u)
    this.frames[slot] = frame
  }

  async collect(): Promise<WindowRecording> {
    const held = this.sums()
    const sums = sharedFloats(held.length)
    sums.set(held)
    const cells = this.core.n * this.core.n
    const frames = this.frames
    const window = (f: number) => new FramePlanes(frames.map((u) => u.subarray(f * cells, (f + 1) * cells)))
    return { frames: frames.length, window, sums }
  }

  holdSums(sums?: Float32Array): Promise<void> {
    this.held = (sums ?? this.sums()).slice()
    return Promise.resolve()
  }

  copyHeld(fields: readonly number[], target: WindowRecorder): Promise<void> {
    const held = this.held
    if (!held) return Promise.resolve()
    const cells = this.core.n * this.core.n
    const sums = new Float32Array(fields.length * cells)
    fields.forEach((f, k) => sums.set(held.subarray(f * cells, (f + 1) * cells), k * cells))
    return target.holdSums(sums)
  }

  /** The twin of engine/gpu/record.ts perturbationSums: basinSums over each kicked field, regrowthSums over each erased one's disc. */
  async perturbationSums({ pattern, basins, erased }: PerturbationQuery): Promise<PerturbationSums> {
    const now = this.sums()
    const n = this.core.n
    const field = (a: Float32Array, f: number) => a.subarray(f * n * n, (f + 1) * n * n)
    const held = this.held
    if ((basins.length || erased.length) && !held) throw new CrystalError('bad_argument', NOTHING_HELD)
    const out = { basins: new Float32Array(BASIN_SUMS * basins.length), regrowths: new Float32Array(REGROWTH_SUMS * erased.length) }
    basins.forEach((f, k) => out.basins.set(basinSums(field(held!, f), pattern, field(now, f)), BASIN_SUMS * k))
    erased.forEach(({ field: f, sums }, k) =>
      out.regrowths.set(regrowthSums(field(held!, f), field(now, f), erasePlan(n, sums).window), REGROWTH_SUMS * k),
    )
    return out
  }

  /** perturbationSums made now: the fields are in host memory, nothing to ride on. */
  async perturbationSumsLater(query: PerturbationQuery): Promise<() => Promise<PerturbationSums>> {
    const sums = await this.perturbationSums(query)
    return async () => sums
  }

  destroy(): void {
    this.frames = []
    this.held = undefined
  }
}
