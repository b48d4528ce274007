// The server's one engine and the work around it: mutations are serialized through one queue, big
// step counts run in chunks that let other requests in between, the state is snapshotted after each
// change (its books, and the field averaged where it lives onto each side asked for lately) so reads
// seldom wait, evolve jobs and .crystal programs run in worker threads (a bounded
// number at once; finished jobs are pruned), and every change goes out on the feed.
import { setImmediate as yieldToLoop } from 'node:timers/promises'
import { Worker } from 'node:worker_threads'
import { progressed, runningJob, type BooksType, type Job } from '../../engine/contracts/api.js'
import type { Material } from '../../engine/contracts/material.js'
import type { Engine } from '../../engine/field/engine.js'
import { fieldState, momentOf, type FieldMoment } from '../../engine/field/state.js'
import type { EngineSettings, WorkSettings } from '../../engine/config.js'
import { CrystalError } from '../../engine/errors.js'
import type { RegistryLimits } from '../../engine/registry/registry.js'
import type { TraceEntry } from '../../engine/lang/interpret.js'
import type { EvolveMessage, EvolveWork } from './evolve_worker.js'
import type { RunOutcome, RunWork } from './run_worker.js'
import type { WorkerEngineSettings } from './worker_engines.js'

/** Steps run between two looks at the event loop (about 6 ms at N = 128 on one core). */
export const STEP_CHUNK = 100
/** The feed sends a state at most this often. */
export const FEED_INTERVAL_MS = 100
/** A state's side asked for within this long is averaged with each change's snapshot (a poller's), as an open feed's is. */
export const WATCHED_MS = 10_000
/** At most this many sides are averaged with each snapshot (open feeds' first, then the latest asked): any other is averaged as it is asked. */
export const WATCHED_MAX = 4

export type FeedEvent = { event: 'state'; version: number } | { event: 'job'; job: Job }

export interface ServiceOptions {
  engine: Engine
  dataDir: string
  backend: Engine['backend']
  registryLimits: RegistryLimits
  /** How much long work may run at once, and how long a finished job stays readable. */
  work: WorkSettings
  /** What the environment sets of the engines that programs and evolve jobs open (recall's caches, the GPU step). */
  engineSettings: EngineSettings
  /** Where the GPU transfers of each job's and program's engines go, a line a shape as it ends (`crystal --debug serve`); not counted without it. */
  transfersTo?: (line: string) => void
}

interface Snapshot extends FieldMoment {
  version: number
}

export class CrystalService {
  readonly jobs = new Map<string, Job>()
  private readonly workers = new Map<string, Worker>()
  private readonly listeners = new Set<(e: FeedEvent) => void>()
  private readonly stateCache = new Map<number, string>()
  /** The sides states were asked at, and when last (the latest last). */
  private readonly asked = new Map<number, number>()
  /** The sides of the open feeds, and how many are open at each. */
  private readonly feeds = new Map<number, number>()
  private queue: Promise<unknown> = Promise.resolve()
  private snapshot!: Snapshot
  private version = 0
  private jobSerial = 0
  private readonly runs = new Set<Worker>()

  private constructor(
    readonly engine: Engine,
    private readonly o: ServiceOptions,
  ) {}

  static async start(o: ServiceOptions): Promise<CrystalService> {
    const s = new CrystalService(o.engine, o)
    await s.takeSnapshot()
    return s
  }

  /** Runs `work` on the engine after everything queued before it (reads that must not interleave with a change). */
  exclusive<T>(work: (e: Engine) => Promise<T>): Promise<T> {
    const run = this.queue.then(() => work(this.engine))
    this.queue = run.catch(() => undefined)
    return run
  }

  /**
   * Runs `change` in turn, then snapshots the state and tells the feed. Its runs' timeline samples ride
   * on the snapshot's read (samplingLater): on the GPU a step of 1,000 reads once, where each chunk read.
   */
  mutate<T>(change: (e: Engine) => Promise<T>): Promise<T> {
    return this.exclusive((e) =>
      e.samplingLater(async () => {
        let result: T
        try {
          result = await change(e)
        } catch (error) {
          // a change that failed part way may have moved the field: the snapshot follows it, so that the
          // live field is the last snapshot's between changes (state's averaging of a side relies on it)
          await this.takeSnapshot().catch(() => undefined)
          throw error
        }
        await this.takeSnapshot()
        return result
      }),
    )
  }

  /** Steps in chunks, yielding to the event loop between them, so reads are served meanwhile. */
  step(steps: number): Promise<void> {
    return this.mutate(async (e) => {
      for (let done = 0; done < steps; done += STEP_CHUNK) {
        await e.step(Math.min(STEP_CHUNK, steps - done))
        if (done + STEP_CHUNK < steps) await yieldToLoop()
      }
    })
  }

  private async takeSnapshot(): Promise<void> {
    const moment = await momentOf(this.engine, this.watchedSides())
    this.snapshot = { version: ++this.version, ...moment }
    this.stateCache.clear()
    this.emit({ event: 'state', version: this.version })
  }

  get books(): BooksType {
    return this.snapshot.books
  }

  /**
   * The state as JSON text, downsampled to `size` (capped at the field's own size), cached per version.
   * A side the snapshot has no image at (none of its watched sides) is averaged in turn with the
   * changes: the live field is the last snapshot's whenever no change runs. Later snapshots take it
   * while it is one of the watched (watchedSides).
   */
  async state(size: number): Promise<string> {
    const side = Math.min(size, this.engine.size)
    this.asked.delete(side)
    this.asked.set(side, Date.now())
    const cached = this.stateCache.get(side)
    if (cached !== undefined) return cached
    let snapshot = this.snapshot
    if (!snapshot.images.has(side))
      snapshot = await this.exclusive(async (e) => {
        const now = this.snapshot
        if (!now.images.has(side)) now.images.set(side, await e.downsampled(side))
        return now
      })
    const body = JSON.stringify(fieldState(this.engine, snapshot, side, this.o.backend))
    if (snapshot === this.snapshot) this.stateCache.set(side, body)
    return body
  }

  /** The sides each snapshot averages the field onto: the open feeds', then those asked within WATCHED_MS, latest first; WATCHED_MAX at most. */
  private watchedSides(): number[] {
    const now = Date.now()
    for (const [side, at] of this.asked) if (now - at > WATCHED_MS) this.asked.delete(side)
    return [...new Set([...this.feeds.keys(), ...[...this.asked.keys()].reverse()])].slice(0, WATCHED_MAX)
  }

  /** Tells `listener` of every change; a feed's `side` (capped at the field's size) is averaged with every snapshot while it is open. */
  subscribe(listener: (e: FeedEvent) => void, side?: number): () => void {
    this.listeners.add(listener)
    const watched = side === undefined ? undefined : Math.min(side, this.engine.size)
    if (watched !== undefined) this.feeds.set(watched, (this.feeds.get(watched) ?? 0) + 1)
    return () => {
      this.listeners.delete(listener)
      if (watched === undefined) return
      const open = (this.feeds.get(watched) ?? 1) - 1
      if (open > 0) this.feeds.set(watched, open)
      else this.feeds.delete(watched)
    }
  }

  private emit(e: FeedEvent): void {
    for (const l of this.listeners) l(e)
  }

  /**
   * Starts an evolve in a worker thread; progress and the outcome go to the job and the feed. The
   * material goes as it is (the worker has no catalog, so a user material file is honoured).
   */
  startEvolve(request: Job['request'], material: Material): Job {
    this.pruneJobs()
    const { max_jobs } = this.o.work
    if (this.workers.size >= max_jobs)
      throw busy(
        `${max_jobs} evolve job${max_jobs === 1 ? ' is' : 's are'} running, the most at once (SVC_CRYSTAL_MAX_JOBS)`,
        'follow them on the feed or GET /crystal/jobs/:id, and start this one when one ends',
      )
    const id = `job-${++this.jobSerial}`
    const job = runningJob(id, request)
    this.jobs.set(id, job)
    const work: EvolveWork = { request, material, dataDir: this.o.dataDir, limits: this.o.registryLimits, ...this.workerEngines() }
    const worker = new Worker(new URL('./evolve_worker.js', import.meta.url), { workerData: work })
    this.workers.set(id, worker)
    const finish = (status: Job['status'], error: string | null = null) => {
      if (job.finished_at) return
      job.status = status
      job.error = error
      job.finished_at = new Date().toISOString()
      this.workers.delete(id)
      this.emit({ event: 'job', job })
    }
    worker.on('message', (m: EvolveMessage) => {
      if (m.type === 'progress') {
        Object.assign(job, progressed(job, m.progress))
        this.emit({ event: 'job', job })
        return
      }
      this.reportTransfers(`evolve ${id}`, m.transfers)
      if (m.type === 'done') {
        job.registered = m.registered
        job.registered_archive = m.registered_archive
        finish('done')
      } else finish('failed', m.message)
    })
    worker.on('error', (e) => finish('failed', e.message))
    worker.on('exit', (code) => finish(code === 0 ? 'done' : 'cancelled'))
    this.emit({ event: 'job', job })
    return job
  }

  /** What every worker is handed of its engines. */
  private workerEngines(): WorkerEngineSettings {
    return { backend: this.o.backend, engineSettings: this.o.engineSettings, tallyTransfers: !!this.o.transfersTo }
  }

  private reportTransfers(whose: string, lines: readonly string[] = []): void {
    for (const line of lines) this.o.transfersTo?.(`crystal: ${whose}: ${line}`)
  }

  /** A job, unless it finished longer ago than the retention allows (then it is gone). */
  job(id: string): Job | undefined {
    this.pruneJobs()
    return this.jobs.get(id)
  }

  /** Forgets jobs that finished more than job_retention_s ago, so the map does not grow for ever. */
  private pruneJobs(): void {
    const before = Date.now() - this.o.work.job_retention_s * 1000
    for (const [id, job] of this.jobs) if (job.finished_at && Date.parse(job.finished_at) < before) this.jobs.delete(id)
  }

  /**
   * Runs a checked program in a worker thread (its own engine, off the event loop) when fewer than
   * max_runs are running; else refuses (429). The program's own errors come back as they were thrown.
   */
  runProgram(program: Pick<RunWork, 'commands' | 'size' | 'materials'>): Promise<TraceEntry[]> {
    const { max_runs } = this.o.work
    if (this.runs.size >= max_runs)
      throw busy(
        `${max_runs} program${max_runs === 1 ? ' is' : 's are'} running, the most at once (SVC_CRYSTAL_MAX_RUNS)`,
        'try again when one has finished',
      )
    const work: RunWork = { ...program, dataDir: this.o.dataDir, limits: this.o.registryLimits, ...this.workerEngines() }
    const worker = new Worker(new URL('./run_worker.js', import.meta.url), { workerData: work })
    this.runs.add(worker)
    return new Promise<TraceEntry[]>((resolve, reject) => {
      worker.once('message', (m: RunOutcome) => {
        this.reportTransfers('POST /crystal/run', m.transfers)
        if (m.type === 'done') resolve(m.trace)
        else if (m.type === 'failed') reject(new CrystalError(m.error.code, m.error.message, m.error.where, m.error.hint))
        else reject(new Error(`the program's worker failed: ${m.message}`))
      })
      worker.once('error', reject)
      worker.once('exit', (code) => reject(new Error(`the program's worker stopped (exit ${code})`)))
    }).finally(() => this.runs.delete(worker))
  }

  /** Cancels running jobs, lets queued changes finish, and releases the engine. */
  async close(): Promise<void> {
    for (const [id, w] of this.workers) {
      const job = this.jobs.get(id)!
      job.status = 'cancelled'
      job.finished_at = new Date().toISOString()
      await w.terminate()
    }
    for (const w of this.runs) await w.terminate()
    await this.queue
    this.engine.destroy()
  }
}

const busy = (message: string, hint: string) => new CrystalError('busy', message, {}, hint)
