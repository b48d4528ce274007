// Detection of a generation's fields on a pool of worker threads (Node): each worker is sent chunks of
// the fields' windows as data on shared memory (detector.ts jobOf; nothing copied where the windows
// are on SharedArrayBuffers, as both recorders keep them) and runs detector.ts runJob on them. The
// genomes' waves, made before the fields start, are made there too, into shared memory.
import { availableParallelism } from 'node:os'
import { Worker } from 'node:worker_threads'
import type { Genome } from '../contracts/registry.js'
import type { Candidates } from '../detect/sums.js'
import type { PackedMeasured, Structure, WindowReads } from '../detect/detect.js'
import { sharedFloats, type WindowSpectra } from '../detect/spectra.js'
import { CrystalError } from '../errors.js'
import { setImmediate as turn } from 'node:timers/promises'
import { RECORD_DT, RECORD_FRAMES } from './evaluate.js'
import {
  type CellsAnswer,
  type DetectOp,
  type Detector,
  IN_THREAD,
  jobOf,
  received,
  runTask,
  type SentStructure,
  type PracticeTask,
  type Window,
  type WorkerTask,
  type WorkTask,
} from './detector.js'

/** Chunks a worker is handed per call, so that a worker done early takes more (fields differ in cost). */
const CHUNKS_PER_WORKER = 4
/**
 * The fewest jobs a chunk holds: a small call goes to a few workers, the same ones each time, whose
 * compiled code is warm, not to every core for a window or two each. On the H200 (16 workers) the
 * defaults' 24 windows took 21 to 26 ms to name their cells and 15 to 22 ms to detect, a window a
 * worker; on one warm thread here they took some 19 and 8 ms.
 */
const MIN_CHUNK = 6
/**
 * Rounds a worker practises detection on made-up windows (practice.ts) while no call has work for it:
 * each round both windows' cells and first jobs. On the 2-core machine 10 rounds took 0.18 to 0.22 s
 * of a fresh thread, whose first 24 real windows then took 1.4 to 2.2 ms to name their cells where
 * they took 3.9 to 4.8, and 0.6 to 1.2 ms where 2.3 to 3.0 to detect (warm: 0.6 and 0.4).
 */
export const PRACTICE_ROUNDS = 10
/** The largest side practised at (evolve's default): compiled code does not depend on it. */
const PRACTICE_SIDE = 96

interface Task<M extends WorkerTask = WorkTask> {
  message: M
  resolve: (r: unknown[]) => void
  reject: (e: Error) => void
}

interface Helper {
  worker: Worker
  /** It has loaded its modules and takes tasks (detect_worker.ts says so). */
  ready: boolean
  /** Settles when it is ready, or has stopped before. */
  up: Promise<void>
  /** The task it is running (one at a time). */
  pending?: Task<WorkerTask>
  /** Rounds of practice still to run while nothing else waits (DetectPool.warm). */
  practice: PracticeTask[]
}

export class DetectPool implements Detector {
  /** Tasks handed to the workers so far, and run on the calling thread (a test tells by them where work went); practice tasks apart. */
  posted = 0
  ranHere = 0
  practised = 0
  /** A worker that stopped before it was ready: every call fails with it. */
  private broken: CrystalError | undefined
  private helpers: Helper[] = []
  /** Chunks waiting for a free worker, from every call in progress (two searches in one process ask at once). */
  private queue: Task[] = []
  /** Per window, what its cells job measured of its stability map: handed to its first job, on whichever thread. */
  private measured = new WeakMap<WindowSpectra, PackedMeasured>()

  constructor(
    /** Worker threads: the cores unless given. */
    readonly size = availableParallelism(),
    /** The worker's script: detect_worker.js beside this module (built: dist/). */
    private readonly script: URL = new URL('./detect_worker.js', import.meta.url),
  ) {
    if (!Number.isInteger(size) || size < 1) throw new CrystalError('bad_argument', `a detection pool needs at least 1 thread, got ${size}`)
  }

  async cellsRead(windows: readonly Window[], limit: number): Promise<WindowReads[]> {
    const answers = (await this.map('cells', windows, limit)) as CellsAnswer[]
    answers.forEach(({ measured }, k) => measured && this.measured.set(windows[k].spectra, measured))
    return answers.map((a) => a.reads)
  }

  candidates(windows: readonly Window[]): Candidates[] {
    return IN_THREAD.candidates(windows)
  }

  async first(windows: readonly Window[], limit: number): Promise<(Structure | undefined)[]> {
    // each chunk's made arrays as it comes, while the workers go on: all at the end, 2,000 structures
    // held this thread 80 to 150 ms after the last chunk (N = 96, here)
    return (await this.map('first', windows, limit, (sent) => (sent as (SentStructure | undefined)[]).map(received))) as (
      | Structure
      | undefined
    )[]
  }

  /**
   * Starts `count` workers now (all of them unless given), resolving once they are ready: evolve starts
   * them before it opens the device, so that they load their modules meanwhile. Rejects where one could
   * not start. With `practice` (the windows a generation will hand over: their side and recording, and
   * how many a call), the workers such a call goes to then practise detection on made-up windows
   * (practice.ts), PRACTICE_ROUNDS rounds each, whenever no call has work for them, one core left to
   * the calling thread: they detect at their compiled speed from the first generation on.
   */
  async warm(count = this.size, practice?: Omit<PracticeTask, 'op'> & { windows: number }): Promise<void> {
    this.start(Math.min(this.size, count))
    if (practice) {
      const { windows, n, ...of } = practice
      const workers = Math.min(this.workersFor(windows), availableParallelism() - 1)
      // compiled code does not depend on the side; memory and time do (32 frames at N = 2048 are 512 MB)
      const task: PracticeTask = { op: 'practise', n: Math.min(n, PRACTICE_SIDE), ...of }
      for (const h of this.helpers.slice(0, workers)) h.practice = Array.from({ length: PRACTICE_ROUNDS }, () => task)
      this.pump()
    }
    await Promise.all(this.helpers.map((h) => h.up))
    if (this.broken) throw this.broken
  }

  /** Ends the workers (a later call starts new ones). */
  close(): void {
    const closed = () => new CrystalError('internal', 'the detection pool was closed during a call')
    for (const h of this.helpers) {
      h.pending?.reject(closed())
      void h.worker.terminate()
    }
    for (const t of this.queue) t.reject(closed())
    this.helpers = []
    this.queue = []
  }

  async waves(genomes: readonly Pick<Genome, 'pulses'>[], n: number): Promise<Float32Array[]> {
    const all = sharedFloats(genomes.length * n * n)
    const jobs = genomes.map(({ pulses }, k) => ({ pulses, n, into: all.subarray(k * n * n, (k + 1) * n * n) }))
    await this.run(this.chunks(jobs).map((part) => ({ op: 'waves', jobs: part })))
    return jobs.map((j) => j.into)
  }

  private map(op: DetectOp, windows: readonly Window[], limit: number, each?: (results: unknown[]) => unknown[]): Promise<unknown[]> {
    const jobs = windows.map((w) => jobOf(w, limit, this.measured.get(w.spectra)))
    return this.run(
      this.chunks(jobs).map((part) => ({ op, jobs: part })),
      each,
    )
  }

  /** The jobs in chunks, CHUNKS_PER_WORKER a worker, of MIN_CHUNK jobs at least. */
  private chunks<J>(jobs: readonly J[]): J[][] {
    const size = this.chunkSize(jobs.length)
    const out: J[][] = []
    for (let from = 0; from < jobs.length; from += size) out.push(jobs.slice(from, from + size))
    return out
  }

  private chunkSize(jobs: number): number {
    return Math.max(MIN_CHUNK, Math.ceil(jobs / (this.size * CHUNKS_PER_WORKER)))
  }

  /** The workers a call of `jobs` windows goes to: one a chunk, the pool's size at most. */
  workersFor(jobs: number): number {
    return Math.min(this.size, Math.ceil(jobs / this.chunkSize(jobs)))
  }

  /**
   * Each message's results, in order, from whichever workers are free, and from this thread while no
   * worker is ready yet (at a search's start they are still loading their modules: on the H200 a first
   * generation waited 0.16 s for them).
   */
  private async run(messages: WorkTask[], each: (results: unknown[]) => unknown[] = (r) => r): Promise<unknown[]> {
    if (this.broken) throw this.broken
    this.start(Math.min(this.size, messages.length))
    const mine: Task[] = []
    const parts = messages.map((message) =>
      new Promise<unknown[]>((resolve, reject) => {
        const task = { message, resolve, reject }
        mine.push(task)
        this.queue.push(task)
      }).then(each),
    )
    this.pump()
    const here = this.runHere(mine)
    try {
      const results = (await Promise.all(parts)).flat()
      if (this.broken) throw this.broken
      return results
    } catch (e) {
      // a chunk failed: the call's others still waiting are not worth the workers' time, and those out
      // may be writing into its memory (waves): the call ends once they are done with it
      for (const t of this.queue.filter((t) => mine.includes(t))) t.reject(e as Error)
      this.queue = this.queue.filter((t) => !mine.includes(t))
      this.holdWhileAwaited()
      await Promise.allSettled(parts)
      throw e
    } finally {
      await here
    }
  }

  /**
   * Runs the call's small chunks still waiting, one at a time on this thread, until none waits or a worker
   * is ready. Only then: a chunk here holds up this thread's other work (the device's next submits, the
   * workers' next chunks), and on the H200 taking chunks all along (32 windows each, some 0.15 s) made
   * population 1,000 0.6 s a generation slower.
   */
  private async runHere(mine: readonly Task[]): Promise<void> {
    for (;;) {
      // the workers' answers first: one that is free takes the next chunk
      await turn()
      if (this.helpers.some((h) => h.ready)) return
      const k = this.queue.findIndex((t) => mine.includes(t) && t.message.jobs.length <= MIN_CHUNK)
      if (k < 0) return
      const [task] = this.queue.splice(k, 1)
      this.holdWhileAwaited()
      this.ranHere++
      await runTask(task.message).then(task.resolve, task.reject)
    }
  }

  /** Hands waiting chunks to free workers, a chunk each; a worker nothing waits for, its next practice task. */
  private pump(): void {
    for (const h of this.helpers) {
      if (!h.ready || h.pending) continue
      const task = this.queue.shift()
      if (task) {
        h.pending = task
        this.posted++
      } else {
        const message = h.practice.shift()
        if (!message) continue
        // its answer is not waited for, and a failure is the real calls' to meet
        h.pending = { message, resolve: () => this.practised++, reject: () => {} }
      }
      h.worker.postMessage(h.pending.message)
    }
    this.holdWhileAwaited()
  }

  /**
   * The workers hold the process while it may wait on them: one still starting (`warm` waits for it),
   * one with a call's task out, and every one while a call's chunk waits in the queue (for a worker
   * starting, or busy with practice). Otherwise none does, practice or not: a process with nothing else
   * to do ends (a search ended with exit code 13, its top-level await unsettled, while its chunk waited
   * behind a practice round and no worker held the process).
   */
  private holdWhileAwaited(): void {
    const queued = this.queue.length > 0
    for (const h of this.helpers) {
      if (!h.ready || queued || (h.pending && h.pending.message.op !== 'practise')) h.worker.ref()
      else h.worker.unref()
    }
  }

  private start(count: number): void {
    while (this.helpers.length < count) {
      let up = () => {}
      // held until it is ready (holdWhileAwaited)
      const h: Helper = { worker: new Worker(this.script), ready: false, up: new Promise((resolve) => (up = resolve)), practice: [] }
      h.worker.on('message', (m: { ready?: true; results?: unknown[]; error?: string }) => {
        if (m.ready) {
          h.ready = true
          up()
          return this.pump()
        }
        const p = h.pending
        h.pending = undefined
        if (m.error !== undefined)
          p?.reject(
            new CrystalError(
              'internal',
              `${p.message.op === 'waves' ? 'making waves' : 'detection'} in a worker thread failed: ${m.error}`,
            ),
          )
        else p?.resolve(m.results!)
        this.pump()
      })
      const dead = (why: string) => {
        this.helpers = this.helpers.filter((x) => x !== h)
        const error = new CrystalError('internal', `a detection worker thread (${this.script.pathname}) stopped: ${why}`)
        // one that never started fails the calls, the later ones too, even where this thread did their chunks
        if (!h.ready) this.broken ??= error
        up()
        h.pending?.reject(error)
        h.pending = undefined
        // with no worker left, nothing would take what waits
        if (!this.helpers.length) for (const t of this.queue.splice(0)) t.reject(error)
        this.holdWhileAwaited()
      }
      h.worker.on('error', (e) => dead(e.message))
      h.worker.on('exit', (code) => dead(`exit code ${code}`))
      this.helpers.push(h)
    }
  }
}

/**
 * A pool for a search of generations of `population` genomes at side `size` (evolve's, explore's, the
 * server's jobs'), started now: its workers load their modules, and those a generation's call goes to
 * practise, while the search opens its device; a failure to start shows in the search's first call.
 */
export function searchPool(threads: number, { size, population }: { size: number; population: number }): DetectPool {
  const pool = new DetectPool(threads)
  // a generation's windows: its fields and their rerun under noise; the workers its calls go to (the
  // others start when a call needs them, as they did: 4 of 16 at the defaults)
  const windows = 2 * population
  pool.warm(pool.workersFor(windows), { n: size, frames: RECORD_FRAMES, dt: RECORD_DT, windows }).catch(() => {})
  return pool
}
