// The CPU twin of engine/gpu/record.ts: a recorded window over any backend's read, the frames copied
// as they are captured and reduced to the window's planes by the twin of shaders/spectra.wgsl
// (engine/cpu/spectra.ts) only where detection reads them; the stability sums are the host dream's
// (engine/cpu/dream.ts). Frames and sums are kept on shared memory, so that worker threads detect on
// them without a copy (engine/discovery/detector.ts).
import type { FieldBackend, WindowRecorder, WindowRecording } from '../field/backend.js'
import { sharedFloats } from '../detect/spectra.js'
import { FramePlanes } from './spectra.js'

export class HostRecorder implements WindowRecorder {
  private frames: Float32Array[] = []

  constructor(
    private readonly core: FieldBackend,
    private readonly sums: () => Float32Array,
  ) {}

  async capture(slot: number, frames: number): Promise<void> {
    if (slot === 0) this.frames = Array.from({ length: frames })
    const { u } = await this.core.read()
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

  destroy(): void {
    this.frames = []
  }
}
