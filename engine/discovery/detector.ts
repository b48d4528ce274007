// Where a generation's detection runs (docs/discovery.md, "Detection in parallel"): on the thread that
// holds the windows (IN_THREAD, the browser's), or on a pool of worker threads (engine/discovery/pool.node.ts
// in Node), each sent a field's window as data on shared memory (engine/detect/spectra.ts PlaneData)
// and running the same functions on it, so that both give the same structures.
import type { Genome } from '../contracts/registry.js'
import { FramePlanes } from '../cpu/spectra.js'
import { cellsRead, detect, holdMeasured, measuredOf, type PackedMeasured, type Structure } from '../detect/detect.js'
import { HeldPlanes, type PlaneData, WindowSpectra } from '../detect/spectra.js'
import { addPulse } from '../encode/pulse.js'
import { CrystalError } from '../errors.js'

/** A field's window (its spectra) and the stability map of the later window. */
export interface Window {
  spectra: WindowSpectra
  later: Float32Array
}

export interface Detector {
  /** Per window, the cells whose planes detect(spectra, later, limit) reads beyond the stability map (detect.ts cellsRead). */
  cellsRead(windows: readonly Window[], limit: number): Promise<Int32Array[]>
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

/** What a worker is sent: windows to detect on, or waves to make. */
export type WorkerTask = { op: DetectOp; jobs: DetectJob[] } | { op: 'waves'; jobs: WaveJob[] }

/** A window as a worker is sent it. */
export interface DetectJob {
  n: number
  dt: number
  frames: number
  source: PlaneData
  later: Float32Array
  limit: number
  /** What the window's cells job measured of its stability map: a first job takes it instead of measuring again. */
  measured?: PackedMeasured
}

/** A worker's answer to a cells job: the cells, and what it measured of the map on the way. */
export interface CellsAnswer {
  cells: Int32Array
  measured: PackedMeasured | undefined
}

/** On memory of its own, a view is sent whole (its buffer with it): then only its own floats go. */
const sendable = (a: Float32Array) => (typeof SharedArrayBuffer === 'function' && a.buffer instanceof SharedArrayBuffer ? a : a.slice())

export function jobOf(w: Window, limit: number, measured?: PackedMeasured): DetectJob {
  const { n, dt, frames, source } = w.spectra
  const data = source.data?.()
  if (!data) throw new CrystalError('internal', 'this recorded window cannot be sent to a worker thread (its planes have no data form)')
  const planes: PlaneData =
    data.kind === 'frames'
      ? { kind: 'frames', frames: data.frames.map(sendable) }
      : { ...data, stability: sendable(data.stability), gathered: sendable(data.gathered) }
  return { n, dt, frames, source: planes, later: sendable(w.later), limit, measured }
}

/**
 * What a worker does with a job: the same as IN_THREAD with the window rebuilt from its data. A cells
 * job answers with what it measured of the stability map too, so that the window's first job, likely on
 * another thread, does not measure the same components again (some 1.3 ms of a window's 8 on the GPU
 * path, docs/gpu.md).
 */
export async function runJob(op: DetectOp, job: DetectJob): Promise<CellsAnswer | Structure | undefined> {
  const source = job.source.kind === 'frames' ? new FramePlanes(job.source.frames) : HeldPlanes.of(job.source)
  const spectra = new WindowSpectra(job.n, job.dt, job.frames, source)
  if (job.measured) holdMeasured(spectra.stability(), job.n, job.measured)
  const w = { spectra, later: job.later }
  if (op === 'first') return (await IN_THREAD.first([w], job.limit))[0]
  const cells = (await IN_THREAD.cellsRead([w], job.limit))[0]
  return { cells, measured: measuredOf(spectra.stability()) }
}

/** A worker's task, each job's answer in order (a wave's is made in place: it answers nothing). */
export async function runTask(task: WorkerTask): Promise<unknown[]> {
  if (task.op === 'waves') return task.jobs.map((j) => void waveOf(j, j.n, j.into))
  const results = []
  for (const job of task.jobs) results.push(await runJob(task.op, job))
  return results
}
