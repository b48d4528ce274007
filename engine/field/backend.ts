// What the engine asks of a compute backend. The GPU (WGSL) and CPU (WASM SIMD) backends implement
// it over the same kernels; engine/cpu/field_step.ts is the oracle both are tested against.
import type { WindowReads } from '../detect/detect.js'
import type { PlannedErasure } from '../detect/erase_plan.js'
import type { PlaneSource } from '../detect/spectra.js'
import { CrystalError } from '../errors.js'
import type { FieldMotion } from './motion.js'
import type { StepParams } from './params.js'

/** One timeline sample: for each field, the energy and the ledger totals after `step` steps. */
export interface LedgerSample {
  step: number
  /** Per field: [energy, bulk, boundary, saturation, noise]. */
  fields: Float64Array[]
}

export interface StepRequest {
  steps: number
  /** Absolute number of steps already taken: keys the noise and places the samples. */
  first_step: number
  seed: number
  /** Take a sample after every step whose absolute number is a multiple of this (0: never). */
  sample_interval: number
  params: StepParams
  /**
   * The step's table (params.ts stepTable, 2 words a field): the field whose random numbers each field
   * draws, RESTING set where it rests, then the steps each rested; where not given, its own (or a rerun's
   * first run's), none resting.
   */
  draws?: Uint32Array
}

export interface FieldBackend {
  readonly kind: 'gpu' | 'cpu'
  /** Words for people: the adapter or the thread count. */
  readonly description: string
  readonly n: number
  readonly fields: number
  step(req: StepRequest): Promise<LedgerSample[]>
  /**
   * step's run with its samples brought back by the device's next read (Transfers.ride: any engine's
   * there), where the backend reads back at all: the function takes them, by a read of their own where none came.
   */
  stepSamplesLater?(req: StepRequest): Promise<() => Promise<LedgerSample[]>>
  /**
   * Adds each wave (n*n) to u and u_prev of its field (waves[k] to fields[k], each field once): a
   * displacement at rest. The GPU backend sends them up and adds them in one submit a 64 MiB of waves.
   */
  inject(fields: readonly number[], waves: readonly Float32Array[]): Promise<void>
  /**
   * The perturbation's kick: `pattern` (n*n) times each listed field's rms of u times `inverseRms`
   * (float32; engine/field/kick.ts kickScale takes the factor) added to u and u_prev of that field, as
   * `inject` adds a wave; each field once. Where the fields live, so that u need not come back.
   */
  kick(fields: readonly number[], pattern: Float32Array, inverseRms: number): Promise<void>
  /**
   * The perturbation's erasure: u and u_prev of each plan's field set to 0 at the cells its part's sums
   * erase (engine/detect/erase_plan.ts erasePlan), each field once. Where the fields live: the sums go
   * up, and the device decides the cells as erasePlan does (shaders/erase.wgsl).
   */
  erase(plans: readonly PlannedErasure[]): Promise<void>
  /** u and u_prev of each field listed set to 0 (Engine.rest). */
  clear(fields: readonly number[]): Promise<void>
  /** Replaces the state of every field (n*n*fields each). */
  load(u: Float32Array, prev: Float32Array): Promise<void>
  /** Reads back u and u_prev of the fields asked for (all when omitted), n*n each, in field order. */
  read(fields?: number[]): Promise<{ u: Float32Array; prev: Float32Array }>
  /** u alone of the fields asked for (all when omitted): half read's bytes, where u_prev is not needed. */
  readU(fields?: number[]): Promise<Float32Array>
  /**
   * u of one field at the cells listed, as it is now, brought back with the device's next read (the
   * GPU: a copy of the runs of the cells listed that rides, cellSpans and Transfers.rideSpans; taken at
   * once elsewhere). The function takes them, in the order listed, by a read of its own where none came.
   */
  cellsLater(field: number, cells: readonly number[]): () => Promise<Float32Array>
  /**
   * One field's motion now (engine/field/motion.ts): sum u^2 and sum (u - u_prev)^2 over its cells, u and
   * u_prev at the cells listed (the GPU: summed and gathered there, one read of a few hundred bytes).
   */
  motion(field: number, cells: readonly number[]): Promise<FieldMotion>
  /** Sum of u^2 over each of `side` x `side` patches of one field, row-major (engine/field/motion.ts patchEnergy; the GPU: one read of side^2 floats). */
  patchEnergy(field: number, side: number): Promise<Float64Array>
  /** u of one field box-averaged onto `side` x `side`, row-major, as engine/util/downsample.ts averages it (the GPU: one read of side^2 floats). */
  downsampled(field: number, side: number): Promise<Float32Array>
  /**
   * Copies u and u_prev of `fields` into `target`'s fields, in order (it has as many), where both live
   * on one device, nothing read back (the GPU: copies on the queue, after the work either has queued);
   * false where it cannot (the caller reads and loads).
   */
  copyInto?(fields: readonly number[], target: FieldBackend): boolean
  /** Energy of each field now (or of the fields listed, in their order); c2 from params. */
  energy(params: StepParams, fields?: readonly number[]): Promise<Float64Array>
  /** Running totals per field, 4 each: bulk, boundary, saturation, noise. */
  ledger(): Promise<Float64Array>
  /** The saturation potential of each field (docs/physics.md) where the backend sums it itself; else the engine reads the field. */
  potential?(params: StepParams): Promise<Float64Array>
  /** The dream's kernels, where the backend has its own; else the CPU twin over read and load. */
  readonly dream?: DreamOps
  /**
   * Encoding version 3's wavefronts of `texts` made where the fields live, and their sum (each times its
   * importance) added to one field as `inject` adds a wave; each text's wavefront stays there, kept
   * (within `keptBytes`, as a sweep's kept patterns) for recall, which reads it as a `TextWave`. Else
   * the engine encodes on the host and injects.
   */
  superpose3?(field: number, texts: readonly { text: string; importance: number }[], keptBytes: number): Promise<void>
  /** Recorded windows kept where the fields live, where the backend can; else the CPU twin over read. */
  readonly recorder?: WindowRecorder
  /** Energy and potential sums kept where the fields live until the books need them (else each is read at once). */
  readonly held?: HeldSums
  /**
   * Recall's sweep on the backend, reading `patterns` (n*n each) at most `readings` times; else the
   * CPU twin. `path`: a saturating field's path, rerun on the backend (engine/recall/path.ts).
   * `kept`: the patterns the caller keeps unchanged between sweeps, which the backend may keep too.
   */
  adjoint?(
    field: number,
    params: StepParams,
    patterns: readonly PatternWave[],
    readings: number,
    path?: PathPlan,
    kept?: KeptPatterns,
  ): Promise<AdjointRunner>
  /** Frees a device mask the history no longer holds. */
  releaseMask?(mask: DeviceMask): void
  /** A copy of one field's u and u_prev kept on the device (released by releaseMask), so a saturating field's history costs no read-back. */
  snapshot?(field: number): DeviceMask
  /** Host-device traffic so far (GPU only). */
  readonly transfers?: TransferCounts
  /** Starts compiling the kernels `work` will use, in the background, in this order (the GPU backend). */
  compileAhead?(work: readonly KernelWork[]): void
  destroy(): void
}

/**
 * What an engine will be asked for, whose kernels a backend may compile ahead (Engine.compileAhead):
 * 'report' is a dream's report (its stability preview) beyond the dream; 'show' the field downsampled (Engine.downsampled).
 */
export type KernelWork = 'inject' | 'dream' | 'record' | 'perturb' | 'write' | 'recall' | 'report' | 'show'

/** Starts a thread that runs the WASM kernel on shared memory; the Node and browser entries differ. */
export type ThreadSpawner = (init: { module: WebAssembly.Module; memory: WebAssembly.Memory; job: number; go: number; thread: number }) => {
  terminate(): void
}

/** A dream's edit mask kept where the field lives (a GPU buffer the backend names), never copied to the host. */
export interface DeviceMask {
  readonly device_mask: number
}

/** A scaling of u and u_prev, as the history keeps it: on the host, or on the device. */
export type EditMask = Float32Array | DeviceMask

/** What a dream's edit does, by mode (docs/dream.md). */
export interface EditFactors {
  /** Cells below this stability percentile (0..1) are transients: multiplied by prune_factor. */
  prune_percentile: number
  prune_factor: number
  /** Cells at or above this percentile are persistent structure: multiplied by amplify_factor. */
  amplify_percentile: number
  amplify_factor: number
  /** Share of the persistent cells that get a kick, and the kick's size relative to the peak |u|. */
  mutate_fraction: number
  mutate_amplitude: number
}

/** One field's part of a dream edit. */
export interface FieldEdit extends EditFactors {
  /** Keys the hash that picks which cells get a kick, and the kick's sign and size. */
  key: number
}

/** What a dream edit did to one field: all that comes back from the device. */
export interface EditOutcome {
  /** The stability sums at the prune and amplify percentiles. */
  low: number
  high: number
  pruned: number
  amplified: number
  mutated: number
  /** The stability sums over side x side blocks (row-major), for the report's preview. */
  preview: Float64Array
}

/**
 * The dream's operations. The GPU backend runs them as kernels (shaders/dream.wgsl) and reads back
 * only the outcomes; engine/cpu/dream.ts is their CPU twin, over any backend's read and load.
 */
export interface DreamOps {
  /** Adds |u| of every field to the stability sums (cleared first when `reset`). */
  accumulateStability(reset: boolean): Promise<void>
  /** A copy of the stability sums, [field][cell] (on the GPU one read). */
  stabilitySums(): Promise<Float32Array>
  /**
   * Per field (null: left alone): the percentile thresholds of the stability sums, the prune/amplify
   * mask and the kicks, `passes` 3 x 3 box blurs of the mask, then u and u_prev scaled by it in
   * place and the kicks added. Returns each field's outcome and its smoothed mask: null for a field
   * left alone, and for the edited fields before the last `keep` (the history holds no more: a batch
   * of 1,000 fields made 1,000 device masks a dream, 744 of them dropped at once). The outcomes come
   * later: on the GPU with the next read (Transfers.ride), by a read of their own where none came.
   * Without `report` there are none (an empty list), the previews are not made and the GPU reads
   * nothing back for them (evolve's dreams).
   */
  edit(
    edits: readonly (FieldEdit | null)[],
    passes: number,
    side: number,
    keep: number,
    report: boolean,
  ): Promise<{ outcomes: () => Promise<EditOutcome[]>; masks: (EditMask | null)[] }>
  /**
   * u and u_prev of every field multiplied by `mask` ([field][cell]) in place, nothing read back (the
   * GPU's `apply` without kicks); absent where the engine scales the state it reads (the CPU: its
   * loop in engine.ts scale is the twin).
   */
  scale?(mask: Float32Array): Promise<void>
}

/**
 * A recorded window of every field kept where the fields live (evolve's evaluation, docs/discovery.md),
 * reduced there frame by frame to the planes detection reads (engine/detect/spectra.ts), then read
 * back at once with the stability sums (DreamOps.accumulateStability's) and u.
 * engine/cpu/record.ts is the CPU twin, engine/gpu/record.ts the GPU's.
 */
export interface WindowRecording {
  /** Frames in the window. */
  frames: number
  /** Field f's window as its planes (engine/detect/spectra.ts). */
  window(field: number): PlaneSource
  /** The stability sums, [field][cell]. */
  sums: Float32Array
  /**
   * Where the planes stay where the fields live (the GPU): makes there, per field, the power sums of
   * the lists of cells and the cells at their mode's bin that detection reads (engine/detect/detect.ts
   * cellsRead), and settles once that is submitted with how to take them into the windows: they ride
   * on the device's next read (Transfers.ride), or come back on a read of their own where none has
   * come when taken. Until taken, a window answers plane 1 (sum |u|, the stability map) of every cell
   * and what came back with it, nothing else. Absent where every plane is at hand (the CPU).
   */
  gather?(reads: readonly WindowReads[]): Promise<() => Promise<void>>
  /**
   * The host memory the recording holds (its windows, sums and u) may be used again by a later one:
   * call it once nothing reads them any more (evolve, when a generation is evaluated). Absent where
   * the recording's memory is its own.
   */
  release?(): void
}

export interface WindowRecorder {
  /** Adds every field's u as it is now as frame `slot` of a window `frames` long (slot 0 starts a new one). */
  capture(slot: number, frames: number): Promise<void>
  /** The window and the sums, in one read back. */
  collect(): Promise<WindowRecording>
  /** Keeps a copy of the stability sums as they are now (or of `sums`), where they are: the window before a perturbation. */
  holdSums(sums?: Float32Array): Promise<void>
  /**
   * The stability sums held of `fields`, in order, as `target`'s held sums (Engine.extract; `target` a
   * recorder of the same kind, as many fields as listed): a copy where they are. None held, none given.
   */
  copyHeld(fields: readonly number[], target: WindowRecorder): Promise<void>
  /** What a perturbation's answers need of the stability sums now and those held, made where they are, in one read back. */
  perturbationSums(query: PerturbationQuery): Promise<PerturbationSums>
  /**
   * perturbationSums riding on the device's next read (Transfers.ride) where the fields live on one:
   * resolves once they are made, to how to take them (by a read of their own where none has come).
   */
  perturbationSumsLater(query: PerturbationQuery): Promise<() => Promise<PerturbationSums>>
  destroy(): void
}

/** Why a perturbation's sums are refused before any stability sums are held. */
export const NOTHING_HELD =
  'a basin or a regrowth compares with the stability sums held before the perturbation: hold them first (engine.holdStability)'

/**
 * What evolve's perturbation experiment reads of the stability sums (docs/detection.md): for each
 * kicked field its basin's sums, and for each erased one its regrowth's, over the disc its plan makes.
 */
export interface PerturbationQuery {
  /** The kick's pattern (n*n). */
  pattern: Float32Array
  /** The kicked fields: each one's basin sums (engine/detect/basin.ts basinSums) of the sums held, the pattern and the sums now. */
  basins: readonly number[]
  /** The erased fields: each one's regrowth sums (engine/detect/regrowth.ts regrowthSums) of the sums held and now over the disc of its plan (erasePlan's window). */
  erased: readonly PlannedErasure[]
}

export interface PerturbationSums {
  /** BASIN_SUMS floats a kicked field, in the order listed. */
  basins: Float32Array
  /** REGROWTH_SUMS floats an erased field, in the order listed. */
  regrowths: Float32Array
}

/**
 * Every field's energy or saturation potential of the state now, or the ledger's totals (four slots,
 * [column][field]), summed where the fields live into slots that stay there; `release` reads every
 * slot held at once ([slot][field]) and frees them. The values are those `energy`, `potential` and
 * `ledger` would read back at that moment.
 */
export type HeldKind = 'energy' | 'potential' | 'ledger'

export interface HeldSums {
  /** Holds each kind's per-field sums as the fields are now, in one submit; returns each one's (first) slot. */
  hold(kinds: readonly HeldKind[], params: StepParams): number[]
  release(): Promise<Float32Array>
  /** release's values as held now, brought back with the device's next read (Transfers.ride); the function takes them, by a read of their own if none came. */
  releaseLater(): () => Promise<Float32Array>
  destroy(): void
}

/**
 * Bytes of patterns recall keeps between questions in each of its caches, on the host and on each
 * device (a pattern is 4 n^2 bytes), least recently used dropped first: `setting` where one is given
 * (SVC_CRYSTAL_RECALL_CACHE_MB, the engine's `recall_cache_bytes`); else 256 MiB, or 64 patterns
 * where that is more, so that the 16 null patterns and a moment's memories do not push each other out
 * at every question at large N (N = 2048: 16 MiB a pattern, 1 GiB kept).
 */
export const keptPatternBytes = (patternBytes: number, setting?: number): number => setting ?? Math.max(256 * 2 ** 20, 64 * patternBytes)

/** Throws unless every field listed is one of the backend's `count` (a read or energy of another would read past its fields). */
export function fieldsWithin(fields: readonly number[], count: number): void {
  const bad = fields.find((f) => !(Number.isInteger(f) && f >= 0 && f < count))
  if (bad !== undefined) throw new CrystalError('bad_argument', `field ${bad} is not one of this backend's fields 0..${count - 1}`)
}

/**
 * A text's encoding-3 wavefront where a backend that has `superpose3` makes it (the GPU's device),
 * named by its text alone (the wavefront is a function of the text, the size and the encoding): recall
 * there never holds it on the host, and the backend's sweep makes it, or finds it kept, where it runs.
 */
export class TextWave {
  constructor(readonly text: string) {}
}

/** A pattern recall reads: a wavefront on the host, or a text's made where the sweep runs. */
export type PatternWave = Float32Array | TextWave

/**
 * Of a sweep's patterns, those from `from` on are ones the caller keeps unchanged between sweeps (a
 * memory's, the null patterns): a backend may keep up to `bytes` of them where it runs, by identity,
 * and not send them again.
 */
export interface KeptPatterns {
  from: number
  bytes: number
}

/**
 * Recall's backward sweep over one field (docs/recall.md): the adjoint run back from the live
 * state, read against a fixed set of patterns at chosen moments. On the GPU the steps are queued
 * and nothing comes back until `results`.
 */
export interface AdjointRunner {
  /** One step back over the step from t to t + 1; t picks the secant k where the runner follows a saturating path (engine/recall/path.ts). */
  step(t?: number): void
  /** The constants of the steps run back from here on (a material or temperature change on the way forward). */
  setParams(p: StepParams): void
  /** The adjoint of a dream edit: the same scaling. */
  scale(mask: EditMask): void
  /**
   * Queues a reading of the patterns listed (indices into those the sweep was opened with; every
   * pattern when none are listed) against the readout a + b; returns its index. A runner may read
   * more than those listed; the rest read 0 or their true value.
   */
  read(patterns?: readonly number[]): number
  /**
   * Queues the rest products <Q w_of, w_p> (Q = -L with the zero border, no c^2) of pattern `of`
   * with each pattern listed: static, the same wherever the sweep stands; a reading like `read`'s,
   * the products in its row.
   */
  product(of: number, patterns: readonly number[]): number
  /** <a + b, w> of every reading and pattern, [reading][pattern] (a product's row: its products), once the sweep is done. */
  results(): Promise<Float64Array>
  destroy(): void
}

/** Bytes and operations between the host and a device since the backend was made. */
export interface TransferCounts {
  bytes_read: number
  reads: number
  bytes_written: number
  writes: number
  /** Command buffers handed to the queue. */
  submits: number
  /** Kernel launches queued. */
  dispatches: number
}

/** A field's state kept by the history: on the host, or on the device as a mask the backend keeps. */
export type SavedState = { u: Float32Array; prev: Float32Array } | DeviceMask

/** How to recompute the path: from `from`, run (steps to `to` under `params`, noise keyed by `seed`) or reset to a kept state. */
export interface PathPlan {
  from: number
  seed: number
  ops: ({ kind: 'run'; to: number; params: StepParams } | { kind: 'reset'; saved: SavedState })[]
}

/** Which backend to run on (DESIGN.md section 3); engine/backends/select.ts makes the choice. */
export type BackendChoice = 'auto' | 'gpu' | 'cpu'
export const BACKEND_CHOICES: readonly BackendChoice[] = ['auto', 'gpu', 'cpu']
