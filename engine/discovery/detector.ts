// Where a generation's detection runs (docs/discovery.md, "Detection in parallel"): on the thread that
// holds the windows (IN_THREAD, the browser's), or on a pool of worker threads (engine/discovery/pool.node.ts
// in Node), each sent a field's window as data on shared memory (engine/detect/spectra.ts PlaneData)
// and running the same functions on it, so that both give the same structures.
import type { Genome } from '../contracts/registry.js'
import { FramePlanes } from '../cpu/spectra.js'
import { NO_CANDIDATES } from '../detect/candidates.js'
import type { Candidates } from '../detect/sums.js'
import {
  cellsRead,
  detect,
  holdMeasured,
  type Later,
  measuredOf,
  numbers,
  type PackedMeasured,
  type Structure,
  type WindowReads,
} from '../detect/detect.js'
import { HeldPlanes, type PlaneData, type PlaneSource, WindowSpectra } from '../detect/spectra.js'
import { addPulse } from '../encode/pulse.js'
import { CrystalError } from '../errors.js'

/** A field's window (its spectra) and the later window's sums. */
export interface Window {
  spectra: WindowSpectra
  later: Later
}

export interface Detector {
  /** Per window, what detect(spectra, later, limit) reads beyond the stability map: cells and modal maps' windows (detect.ts cellsRead). */
  cellsRead(windows: readonly Window[], limit: number): Promise<WindowReads[]>
  /**
   * Per window, the parts its perturbation may act on, as the device listed them where it ranked the
   * map's parts (FieldTop's candidates; none where the window came without): on the thread that holds the windows.
   */
  candidates(windows: readonly Window[]): Candidates[]
  /** Per window, the first structure detect(spectra, later, limit) finds. */
  first(windows: readonly Window[], limit: number): Promise<(Structure | undefined)[]>
  /**
   * Per genome, its pulses added into a field of side n: what evaluate injects, made before a
   * generation's fields start (0.3 s of one thread at population 1,000, N = 96), where detection runs.
   */
  waves(genomes: readonly Pick<Genome, 'pulses'>[], n: number): Promise<Float32Array[]>
}

/** A genome's pulses added into `into`, a field of side n. */
export function waveOf(g: Pick<Genome, 'pulses'>, n: number, into: Float32Array = new Float32Array(n * n)): Float32Array {
  for (const p of g.pulses) addPulse(into, n, p)
  return into
}

export const IN_THREAD: Detector = {
  cellsRead: (windows, limit) => Promise.resolve(windows.map((w) => cellsRead(w.spectra, w.later, limit))),
  candidates: (windows) => windows.map((w) => w.spectra.source.top?.()?.candidates ?? NO_CANDIDATES),
  first: (windows, limit) => Promise.all(windows.map(async (w) => (await detect(w.spectra, w.later, limit))[0])),
  waves: (genomes, n) => Promise.resolve(genomes.map((g) => waveOf(g, n))),
}

export type DetectOp = 'cells' | 'first'

/** A genome's wave as a worker is sent it: made into `into`, on memory the caller shares (sharedFloats). */
export interface WaveJob {
  pulses: Genome['pulses']
  n: number
  into: Float32Array
}

/** Made-up windows of side n (`frames` frames, `dt` steps apart) for a worker to practise detection on (practice.ts). */
export interface PracticeTask {
  op: 'practise'
  n: number
  frames: number
  dt: number
}

/** What a worker is sent: windows to detect on, waves to make, or a round of practice. */
export type WorkerTask = { op: DetectOp; jobs: DetectJob[] } | { op: 'waves'; jobs: WaveJob[] } | PracticeTask

/** A task whose answers a call waits for: all but practice. */
export type WorkTask = Exclude<WorkerTask, PracticeTask>

/** A window as a worker is sent it. */
export interface DetectJob {
  n: number
  dt: number
  frames: number
  source: PlaneData
  /** The later window's sums, and the samples they took. */
  later: Float32Array
  taken: number
  limit: number
  /** What the window's cells job measured of its stability map: a first job takes it instead of measuring again. */
  measured?: PackedMeasured
}

/**
 * A first job's structure as it crosses threads: its cells and signature typed. As arrays of numbers
 * (some 4,400 cells a structure at N = 96) they took the thread receiving them 0.07 to 0.12 ms a window
 * to deserialize, typed 0.01 to 0.02, and 0.02 to 0.05 made arrays again (`received`): at population
 * 1,000 the main thread receives 2,000 a generation, while the device waits on it.
 */
export type SentStructure = Omit<Structure, 'cells' | 'signature'> & { cells: Int32Array; signature: Float64Array }

/** A structure packed to cross threads (`received` unpacks it). */
export const sent = (s: Structure | undefined): SentStructure | undefined =>
  s && { ...s, cells: Int32Array.from(s.cells), signature: Float64Array.from(s.signature) }

/** A structure as detection made it on the other thread: the same keys in the same order, the same numbers. */
export const received = (s: SentStructure | undefined): Structure | undefined =>
  s && { ...s, cells: numbers(s.cells), signature: numbers(s.signature) }

/** A worker's answer to a cells job: what detection reads, and what it measured of the map on the way. */
export interface CellsAnswer {
  reads: WindowReads
  measured: PackedMeasured | undefined
}

/** On memory of its own, a view is sent whole (its buffer with it): then only its own floats go. */
export const sendable = (a: Float32Array) =>
  typeof SharedArrayBuffer === 'function' && a.buffer instanceof SharedArrayBuffer ? a : a.slice()

export function jobOf(w: Window, limit: number, measured?: PackedMeasured): DetectJob {
  const { n, dt, frames, source } = w.spectra
  const data = source.data?.()
  if (!data) throw new CrystalError('internal', 'this recorded window cannot be sent to a worker thread (its planes have no data form)')
  const planes: PlaneData =
    data.kind === 'frames'
      ? { kind: 'frames', frames: data.frames.map(sendable) }
      : { ...data, stability: sendable(data.stability), gathered: sendable(data.gathered) }
  return { n, dt, frames, source: planes, later: sendable(w.later.sums), taken: w.later.taken, limit, measured }
}

/**
 * What a worker does with a job: the same as IN_THREAD with the window rebuilt from its data. A cells
 * job answers with what it measured of the stability map too, so that the window's first job, likely on
 * another thread, does not measure the same components again (some 1.3 ms of a window's 8 on the GPU
 * path, docs/gpu.md).
 */
export async function runJob(op: DetectOp, job: DetectJob): Promise<CellsAnswer | SentStructure | undefined> {
  const source: PlaneSource = job.source.kind === 'frames' ? new FramePlanes(job.source.frames) : HeldPlanes.of(job.source)
  const spectra = new WindowSpectra(job.n, job.dt, job.frames, source)
  if (job.measured) holdMeasured(spectra.stability(), job.n, job.measured, source.listed?.(), source.top?.())
  const w = { spectra, later: { sums: job.later, taken: job.taken } }
  if (op === 'first') return sent((await IN_THREAD.first([w], job.limit))[0])
  const { lists, ends, modes, planned } = (await IN_THREAD.cellsRead([w], job.limit))[0]
  const m = measuredOf(spectra.stability())
  // on shared memory, the answer goes to the main thread and the measure on to the first job without a copy
  // (28.5 KB a window at N = 96: at population 1,000 the copies were some 110 MB a generation on the main thread)
  if (!m) {
    const [l, e, c] = onShared([lists, ends, modes] as const)
    return { reads: { lists: l, ends: e, modes: c, planned }, measured: undefined }
  }
  const [l, e, c, ...parts] = onShared([lists, ends, modes, m.cells, m.ends, m.masses, m.parts] as const)
  return {
    reads: { lists: l, ends: e, modes: c, planned },
    measured: { cells: parts[0], ends: parts[1], masses: parts[2], parts: parts[3] },
  }
}

/**
 * `arrays` copied onto one piece of memory the threads share, where the platform has it, each at a
 * multiple of 8 bytes: one SharedArrayBuffer an answer, not one an array (some 10,000 a generation at
 * population 1,000).
 */
export function onShared<T extends readonly (Int32Array | Float64Array)[]>(arrays: T): T {
  if (typeof SharedArrayBuffer !== 'function') return arrays
  const at: number[] = []
  let end = 0
  for (const a of arrays) {
    at.push(end)
    end += Math.ceil(a.byteLength / 8) * 8
  }
  const memory = new SharedArrayBuffer(end)
  return arrays.map((a, k) => {
    const out = new (a.constructor as new (b: SharedArrayBuffer, offset: number, length: number) => typeof a)(memory, at[k], a.length)
    out.set(a)
    return out
  }) as unknown as T
}

/** A worker's task, each job's answer in order (a wave is made in place: it answers nothing). */
export async function runTask(task: WorkTask): Promise<unknown[]> {
  if (task.op === 'waves') return task.jobs.map((j) => void waveOf(j, j.n, j.into))
  const results = []
  for (const job of task.jobs) results.push(await runJob(task.op, job))
  return results
}
