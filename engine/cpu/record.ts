// The CPU twin of engine/gpu/record.ts: a recorded window over any backend's read, the frames copied
// as they are captured and the stability sums taken from the host dream's (engine/cpu/dream.ts).
import type { FieldBackend, WindowRecorder } from '../field/backend.js'

export class HostRecorder implements WindowRecorder {
  private frames: Float32Array[] = []

  constructor(
    private readonly core: FieldBackend,
    private readonly sums: () => Float32Array,
  ) {}

  async capture(slot: number, frames: number): Promise<void> {
    if (slot === 0) this.frames = Array.from({ length: frames })
    this.frames[slot] = (await this.core.read()).u
  }

  collect(frames: boolean): Promise<{ frames: Float32Array; sums: Float32Array }> {
    const size = this.core.n * this.core.n * this.core.fields
    const out = new Float32Array(frames ? this.frames.length * size : 0)
    if (frames) this.frames.forEach((u, k) => out.set(u, k * size))
    return Promise.resolve({ frames: out, sums: this.sums().slice() })
  }

  destroy(): void {
    this.frames = []
  }
}
