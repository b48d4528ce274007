// Detection of a generation's fields on a pool of worker threads (Node): each worker is sent chunks of
// the fields' windows as data on shared memory (detector.ts jobOf; nothing copied where the windows
// are on SharedArrayBuffers, as both recorders keep them) and runs detector.ts runJob on them.
import { availableParallelism } from 'node:os'
import { Worker } from 'node:worker_threads'
import type { Structure } from '../detect/detect.js'
import { CrystalError } from '../errors.js'
import { type DetectJob, type DetectOp, type Detector, jobOf, type Window } from './detector.js'

/** Chunks a worker is handed per call, so that a worker done early takes more (fields differ in cost). */
const CHUNKS_PER_WORKER = 4

interface Helper {
  worker: Worker
  /** The call waiting on it (one at a time). */
  pending?: { resolve: (r: unknown[]) => void; reject: (e: Error) => void }
}

export class DetectPool implements Detector {
  private helpers: Helper[] = []

  constructor(
    /** Worker threads: the cores unless given. */
    readonly size = availableParallelism(),
    /** The worker's script: detect_worker.js beside this module (built: dist/). */
    private readonly script: URL = new URL('./detect_worker.js', import.meta.url),
  ) {
    if (!Number.isInteger(size) || size < 1) throw new CrystalError('bad_argument', `a detection pool needs at least 1 thread, got ${size}`)
  }

  cellsRead(windows: readonly Window[], limit: number): Promise<number[][]> {
    return this.map('cells', windows, limit) as Promise<number[][]>
  }

  first(windows: readonly Window[], limit: number): Promise<(Structure | undefined)[]> {
    return this.map('first', windows, limit) as Promise<(Structure | undefined)[]>
  }

  /** Ends the workers (a later call starts new ones). */
  close(): void {
    for (const h of this.helpers) {
      h.pending?.reject(new CrystalError('internal', 'the detection pool was closed during a call'))
      void h.worker.terminate()
    }
    this.helpers = []
  }

  private async map(op: DetectOp, windows: readonly Window[], limit: number): Promise<unknown[]> {
    const jobs = windows.map((w) => jobOf(w, limit))
    const results = new Array<unknown>(jobs.length)
    const chunk = Math.max(1, Math.ceil(jobs.length / (this.size * CHUNKS_PER_WORKER)))
    let next = 0
    const helpers = this.start(Math.min(this.size, Math.ceil(jobs.length / chunk)))
    await Promise.all(
      helpers.map(async (h) => {
        while (next < jobs.length) {
          const from = next
          next += chunk
          const part = await this.call(h, op, jobs.slice(from, from + chunk))
          part.forEach((r, k) => (results[from + k] = r))
        }
      }),
    )
    return results
  }

  private start(count: number): Helper[] {
    while (this.helpers.length < count) {
      const h: Helper = { worker: new Worker(this.script) }
      h.worker.unref()
      h.worker.on('message', (m: { results?: unknown[]; error?: string }) => {
        const p = h.pending
        h.pending = undefined
        h.worker.unref()
        if (m.error !== undefined) p?.reject(new CrystalError('internal', `detection in a worker thread failed: ${m.error}`))
        else p?.resolve(m.results!)
      })
      const dead = (why: string) => {
        this.helpers = this.helpers.filter((x) => x !== h)
        h.pending?.reject(new CrystalError('internal', `a detection worker thread (${this.script.pathname}) stopped: ${why}`))
        h.pending = undefined
      }
      h.worker.on('error', (e) => dead(e.message))
      h.worker.on('exit', (code) => dead(`exit code ${code}`))
      this.helpers.push(h)
    }
    return this.helpers.slice(0, count)
  }

  private call(h: Helper, op: DetectOp, jobs: DetectJob[]): Promise<unknown[]> {
    return new Promise((resolve, reject) => {
      h.pending = { resolve, reject }
      // held while a call is out, so that the process waits for its answer
      h.worker.ref()
      h.worker.postMessage({ op, jobs })
    })
  }
}
