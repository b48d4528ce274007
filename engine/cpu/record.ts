// The CPU twin of engine/gpu/record.ts: a recorded window over any backend's read, each frame added
// into the window's planes as it is captured (engine/cpu/spectra.ts, the twin of shaders/spectra.wgsl)
// and the stability sums taken from the host dream's (engine/cpu/dream.ts).
import type { FieldBackend, WindowRecorder, WindowRecording } from '../field/backend.js'
import { windowPlanes } from '../detect/spectra.js'
import { accumulateWindow } from './spectra.js'

export class HostRecorder implements WindowRecorder {
  private planes = new Float32Array(0)
  private frames = 0

  constructor(
    private readonly core: FieldBackend,
    private readonly sums: () => Float32Array,
  ) {}

  async capture(slot: number, frames: number): Promise<void> {
    const u = (await this.core.read()).u
    if (slot === 0) [this.frames, this.planes] = [frames, new Float32Array(windowPlanes(frames) * u.length)]
    accumulateWindow(this.planes, u, slot, frames)
  }

  async collect(full: boolean): Promise<WindowRecording> {
    const sums = this.sums().slice()
    if (!full) return { frames: this.frames, planes: new Float32Array(0), sums, u: new Float32Array(0) }
    return { frames: this.frames, planes: this.planes.slice(), sums, u: (await this.core.read()).u }
  }

  destroy(): void {
    this.planes = new Float32Array(0)
  }
}
