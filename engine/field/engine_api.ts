// The engine's interface (what dream, recall, discovery and the edges program against), apart from
// its implementation in engine.ts, so that the parts the engine uses do not import the engine back.
// Its reports are the wire types (engine/contracts/api.ts), which dream and recall return.
import type { DreamReport, ProbeResult, RecallResult } from '../contracts/api.js'
import type { Material } from '../contracts/material.js'
import type { DreamMode } from '../contracts/registry.js'
import type { Pulse } from '../encode/pulse.js'
import type { EncodingVersion } from '../encode/text.js'
import type {
  BackendChoice,
  EditMask,
  EditOutcome,
  FieldEdit,
  KernelWork,
  SavedState,
  ThreadSpawner,
  TransferCounts,
  PerturbationQuery,
  PerturbationSums,
  WindowRecording,
} from './backend.js'
import type { Rerun, StepParams } from './params.js'
import type { FieldMotion } from './motion.js'
import type { PlannedErasure } from '../detect/erase_plan.js'
import type { MaterialCatalog } from './materials.js'

export interface EngineOptions {
  backend?: BackendChoice
  /** Side N of each field (16..4096). */
  size?: number
  /** Independent fields stepped together (a population); 1 for the service's medium. */
  fields?: number
  material?: Material | string
  materials?: MaterialCatalog
  seed?: number
  /** Defaults to the material's temperature_k. */
  temperature_k?: number
  /** Extra noise amplitude (the language's NOISE). */
  noise?: number
  /**
   * Fields from `rerun.from` on run the fields before them again with `rerun.noise` more noise: field f
   * as field f - from would run in an engine of its own opened with that much more noise, to the bit
   * (engine/field/params.ts Rerun). At most as many as there are before them.
   */
  rerun?: Rerun
  /**
   * The field whose random numbers (thermal noise, a dream's mutations) each field draws, one a field:
   * its own (or a rerun's first run's) where not given. Engine.extract gives its batch its fields'
   * fields in the engine they came from, so they step on as they would have there.
   */
  draws?: readonly number[]
  /**
   * Every field rests until its first injection: held at 0, with no thermal noise and no work, where it
   * was stepped under noise before. Evolve's batches: a genome injected later than another then starts
   * from the same quiet field as it would in a batch of its own, and the steps before it cost nothing
   * (docs/discovery.md, "A genome's field rests until it is injected").
   */
  rest_until_injected?: boolean
  /** Steps between energy timeline samples (0: no timeline). */
  timeline_interval?: number
  /** The text encoding writes and recall use (ENCODING_VERSION unless given; a resumed field brings its own). */
  encoding?: EncodingVersion
  gpu?: () => Promise<GPU | undefined>
  /** false: the GPU step sums its tiles through shared memory even where the adapter offers subgroups (the bench's control). */
  gpu_subgroups?: boolean
  /**
   * Steps a dispatch of the GPU step where no timeline is sampled: 1 (the default), or 4
   * (shaders/field_steps.wgsl: the halo's extra cells, 31% more updates, for a quarter of the
   * dispatches; on the H200 evolve's defaults were no faster at 4, docs/gpu.md).
   */
  gpu_steps_per_dispatch?: number
  threads?: number
  spawnThread?: ThreadSpawner
  /** Told once which backend runs and why (the CLI prints it on stderr). */
  report?: (line: string) => void
  /**
   * Bytes of patterns recall keeps between questions in each of its caches, on the host and on the
   * device (SVC_CRYSTAL_RECALL_CACHE_MB at the edges); default 256 MiB, or 64 patterns where that is
   * more (keptPatternBytes in engine/field/backend.ts).
   */
  recall_cache_bytes?: number
  /**
   * false: the engine keeps no history for recall's sweep (no dream masks, no saved states of a
   * saturating field, no scalings), and recall, probe and readAt refuse. For a batch of fields no one
   * asks, a search's (evolve): at population 1,000 a dream made 1,000 masks and an edit 1,000 saved
   * states on the device, nearly all dropped at once. Default true.
   */
  recall_history?: boolean
}

/** The energy books of one field. All in the units of the staggered energy (docs/physics.md). */
export interface EnergyBooks {
  step: number
  energy: number
  /** Taken by bulk damping and viscosity. */
  bulk_loss: number
  /** Leaked through the boundary sponge. */
  boundary_loss: number
  /** Held by the soft-saturation potential: what writes put in plus what the steps moved (near 0 once the field has decayed). */
  saturation: number
  /** Work done by thermal and added noise. */
  noise_work: number
  /** Added (or taken) from outside the step: writes, pulses, dream edits; wave energy plus saturation potential. */
  injected: number
}

export interface Memory {
  text: string
  importance: number
  step: number
  field: number
}

/** A field as the persisted medium keeps it. */
export interface SavedField {
  u: Float32Array
  prev: Float32Array
  step_count: number
  memories: readonly Omit<Memory, 'field'>[]
  /** The text encoding its memories were written with; absent: the resuming engine's own. */
  encoding?: EncodingVersion
}

/**
 * What the recall sweep replays to run the live field back (docs/recall.md): writes, dream edits,
 * changes of the step's constants (material, temperature, noise; with the constants in force before)
 * and, in a saturating material, the state just after each injection or edit.
 */
export type HistoryEvent =
  | { kind: 'write'; step: number; field: number; memory: number }
  | { kind: 'scale'; step: number; field: number; mask: EditMask }
  | { kind: 'conditions'; step: number; before: StepParams }
  | { kind: 'state'; step: number; field: number; saved: SavedState }

/** A moment of a field's past: its step, and the history's length then (the edits kept after it are run back before it is read). */
export interface Moment {
  step: number
  mark: number
}

/** Patterns read at one moment: each one's score (over the energy it holds written there at rest), and the null patterns' RMS score. */
export interface MomentReading {
  scores: number[]
  sigma: number
}

export interface Engine {
  readonly backend: 'gpu' | 'cpu'
  readonly backend_reason: string
  readonly size: number
  readonly fields: number
  readonly seed: number
  readonly material: Material
  readonly temperature_k: number
  readonly noise: number
  /** EngineOptions.rerun, where the engine was opened with one. */
  readonly rerun: Rerun | undefined
  /** The field whose random numbers each field draws (EngineOptions.draws made whole: engine/field/params.ts drawTable). */
  readonly draws: Uint32Array
  /**
   * The steps each field rested (EngineOptions.rest_until_injected, Engine.rest; 0 where none): its
   * own steps, by which its random numbers are keyed, are step_count less these.
   */
  readonly rested: Uint32Array
  readonly step_count: number
  /** The text encoding of this engine's memories: writes, recall and probe encode texts with it. */
  readonly encoding: EncodingVersion
  /** Bumped once every change of a field's state is done (steps, injections, edits, loads): recall keeps what it read of a field until it moves on. */
  readonly revision: number
  readonly memories: readonly Memory[]
  readonly timeline_interval: number
  write(text: string, importance?: number, field?: number): Promise<void>
  /** Many writes superposed in one injection (same result as writing them one by one, faster). */
  writeMany(items: readonly { text: string; importance?: number }[], field?: number): Promise<void>
  pulse(p: Pulse, field?: number): Promise<void>
  /** Adds any n x n pattern to a field (u and u_prev alike: a displacement at rest). */
  inject(wave: Float32Array, field?: number): Promise<void>
  /** One wave per field (undefined: left alone), all injected at once: the books take one sum before and one after. */
  injectMany(waves: readonly (Float32Array | undefined)[]): Promise<void>
  /** The perturbation's kick: `pattern` scaled to each listed field's rms of u, added to it as a wave (taken where the fields live: nothing read back). */
  kick(pattern: Float32Array, fields: readonly number[]): Promise<void>
  /**
   * The perturbation's erasure: u and u_prev of each plan's field (each field once) set to 0 at the
   * cells its part's sums erase (engine/detect/erase_plan.ts erasePlan), booked as a change; on the GPU
   * only the sums go up, 56 bytes a field (where a scale sends a mask of every cell of every field: 37
   * MB at 1,000 fields of 96^2), and the device decides the cells as erasePlan does.
   */
  erase(plans: readonly PlannedErasure[]): Promise<void>
  /**
   * The fields listed sent back to rest: u and u_prev set to 0, booked as a change, then held at 0 with
   * no noise and no work (as rest_until_injected holds a field) until their next injection or write.
   * Evolve's CPU path rests the fields its in-place perturbation does not touch (docs/discovery.md);
   * the GPU path perturbs a batch extracted instead.
   */
  rest(fields: readonly number[]): Promise<void>
  /**
   * Runs `steps` steps. On the GPU it may resolve while the last are still queued there (a few calls'
   * worth at most): whatever is read afterwards (read, books, recall) sees them.
   */
  step(steps: number): Promise<void>
  /**
   * Multiplies u and u_prev cell by cell (a dream's pruning and amplifying): `mask` is n*n for one
   * field, or n*n*fields for all. Kept in the edit history, which recall runs back through.
   */
  scale(mask: Float32Array, field?: number): Promise<void>
  /** Adds |u| of every field to stability sums kept where the field lives (cleared first when `reset`): a dream's observation. */
  accumulateStability(reset: boolean): Promise<void>
  /** Those sums as they are now, [field][cell]: a copy, read back once (observeStability's window). */
  stabilitySums(): Promise<Float32Array>
  /**
   * A dream's edit of every field from those sums (null: left alone), in place where the field lives
   * (engine/field/backend.ts DreamOps); booked like a scaling and kept in the history. The function
   * returned has the outcomes, brought back with the device's next read on the GPU (the dream's books
   * after, or any engine's read there), by a read of their own where none came. `report: false`: no outcomes (an empty list), and
   * the GPU reads nothing back for them.
   */
  dreamEdit(edits: readonly (FieldEdit | null)[], passes: number, side: number, report?: boolean): Promise<() => Promise<EditOutcome[]>>
  /**
   * Adds every field's u as frame `slot` of a recorded window `frames` long, where the fields live
   * (slot 0 starts a new window); `collectRecording` reads the window's stability plane back with the
   * stability sums at once (what detection reads of the other planes where the recording's `gather`
   * names it; docs/discovery.md, evolve's evaluation).
   */
  captureFrame(slot: number, frames: number): Promise<void>
  collectRecording(): Promise<WindowRecording>
  /**
   * Keeps a copy of the stability sums as they are now where they live (the window before a
   * perturbation), or of `sums` ([field][cell], a stability map from elsewhere); `perturbationSums`
   * then makes there, from them and the sums of a later window, what the perturbation's answers need
   * (docs/detection.md): each kicked field's basin sums (engine/detect/basin.ts) and each erased
   * field's regrowth sums over its plan's disc (engine/detect/regrowth.ts), in one read back. The
   * sums held stay until held again: every later perturbationSums compares with them.
   */
  holdStability(sums?: Float32Array): Promise<void>
  perturbationSums(query: PerturbationQuery): Promise<PerturbationSums>
  /**
   * perturbationSums, riding on the device's next read (any engine's on it) on the GPU backend: resolves
   * once they are made, to how to take them (a read of their own where none has come by then).
   */
  perturbationSumsLater(query: PerturbationQuery): Promise<() => Promise<PerturbationSums>>
  /** Host-device traffic so far; null on the CPU backend, whose fields are in host memory. */
  transfers(): TransferCounts | null
  /**
   * Starts compiling, in the background, the kernels `work` will use (the GPU backend; nothing
   * elsewhere), so that a first use does not compile them on this thread (docs/gpu.md, "Compiling ahead").
   */
  compileAhead(work: readonly KernelWork[]): void
  /** Writes, scalings and their steps, oldest first (recall's adjoint run walks it backwards). */
  readonly history: readonly HistoryEvent[]
  /** The books now, per field. */
  books(): Promise<EnergyBooks[]>
  /**
   * The books as they are now, taken where the fields live and brought back with the engine's next
   * read where the backend holds its sums (the GPU: a read fewer; at once elsewhere). The function
   * returned has them: as that read brought them, or by a read of their own where none has come.
   */
  booksLater(): () => Promise<EnergyBooks[]>
  /** Timeline of one field, oldest first. */
  timeline(field?: number): readonly EnergyBooks[]
  /** u (and u_prev) of the fields asked for, n*n each. */
  read(fields?: number[]): Promise<{ u: Float32Array; prev: Float32Array }>
  /** u alone of the fields asked for: half read's bytes (a picture, a stability sample, a patch's energy). */
  readU(fields?: number[]): Promise<Float32Array>
  /**
   * u of one field at the cells listed (row-major indices), as it is now, brought back with the
   * device's next read (any engine's there) where the fields live on a device (a sample a step apart need not empty the
   * queue: phi's window, docs/consciousness.md). The function returned has them, in the order listed.
   */
  cellsLater(cells: readonly number[], field?: number): () => Promise<Float32Array>
  /**
   * One field's motion now (engine/field/motion.ts): sum u^2 and sum (u - u_prev)^2 over its cells, and u
   * and u_prev at the cells listed, summed and gathered where the field lives (the consciousness
   * publisher's period: one read of a few hundred bytes on the GPU, not the field's u and u_prev).
   */
  motion(cells: readonly number[], field?: number): Promise<FieldMotion>
  /**
   * Sum of u^2 over each of side x side (default 8 x 8) patches of one field, row-major: cell (x, y) is
   * in patch (floor(x side / n), floor(y side / n)). Summed where the field lives (the GPU: one read of
   * side^2 floats; float32 sums, each lane adding a patch's cells / 256 of them, so a large patch, one
   * side at N = 4096, is good to some 1e-4). The consciousness publisher's dream counts use it.
   */
  patchEnergy(side?: number, field?: number): Promise<Float64Array>
  /**
   * u of one field box-averaged onto side x side (1 to N), row-major, as engine/util/downsample.ts
   * averages it: what the Observatory shows. Averaged where the field lives (the GPU: one read of side^2
   * floats, the same f32 sums in the same order, so equal to the CPU's on an adapter that divides
   * exactly) where reading u and averaging it on the host read N^2 (16 MB at N = 2048).
   */
  downsampled(side: number, field?: number): Promise<Float32Array>
  /**
   * Runs `work` (this engine's steps, dreams, reads, one after another) with the timeline samples of its
   * runs brought back by its later reads where the fields live on a device (the GPU), not each by a read
   * of its own that empties the device's queue (runs of up to SAMPLES_LATER_MAX_STEPS steps; a longer one
   * reads its own as it goes); all recorded by the time it returns. Until then the
   * timeline lags (what reads the books, books or booksLater, brings it up to date). A dream does it itself;
   * the server's changes do (docs/gpu.md, "Timeline samples ride").
   */
  samplingLater<T>(work: () => Promise<T>): Promise<T>
  /**
   * Consolidates every field (docs/dream.md); one report per field. `report: false`: the same
   * consolidation with no reports (an empty list), so nothing is read back for them (evolve's batches).
   */
  dream(modes: DreamMode | readonly (DreamMode | 'none')[], options?: { report?: boolean }): Promise<DreamReport[]>
  /** How strongly a text resonates with the field, compared like with like in time (docs/recall.md). */
  probe(text: string, field?: number): Promise<ProbeResult>
  /** The k memories of a field that resonate most with the text, above the noise floor (docs/recall.md). */
  recall(text: string, k: number, field?: number): Promise<RecallResult>
  /**
   * Any n x n patterns read at moments of a field's past by recall's sweep (docs/recall.md), beside
   * `nulls` for chance; one reading per moment, in the order given. For callers that write their own
   * wavefronts (the station's medium).
   */
  readAt(
    patterns: readonly Float32Array[],
    nulls: readonly Float32Array[],
    moments: readonly Moment[],
    field?: number,
  ): Promise<MomentReading[]>
  /**
   * A quiet twin: a new engine on the same kind of backend with the same size and material, no
   * noise, no timeline, and `fields` fields (the consciousness publisher renders memories alone in one).
   */
  twin(fields: number): Promise<Engine>
  /**
   * A quiet one-field twin (as `twin`) holding this engine's field now: its u and u_prev copied where
   * the fields live (nothing read back on one device), at this engine's step, no memories, its books
   * balanced from there. The consciousness publisher observes phi's window in one, and STABILIZE
   * perturbs each structure it found in one.
   */
  fork(field?: number): Promise<Engine>
  /**
   * The fields listed (of the first run, where there is a rerun), in their order, as a batch of its
   * own that steps on as they would here, to the bit: the same material, temperature, noise and seed,
   * each field drawing its random numbers here (EngineOptions.draws), at this engine's step, its state
   * and the stability sums held (holdStability) copied where the fields live, no timeline and no
   * history for recall, its books balanced from there. Evolve perturbs again in one only the fields
   * whose stability maps guessed wrong, where the whole batch stepped again before. A field listed
   * twice is copied twice, each copy stepping on as the field would (a field with two parts to
   * perturb, each in a copy of its own: docs/detection.md item 6).
   */
  extract(fields: readonly number[]): Promise<Engine>
  /**
   * Continues a saved field in this fresh engine: its state, step count and the memories written
   * into field 0 (at their steps, with no dream edits since), and the encoding they were written with
   * where the saved field names one. The persisted medium uses it.
   */
  resume(saved: SavedField): Promise<void>
  setMaterial(material: Material | string): void
  setTemperature(kelvin: number): void
  setNoise(amplitude: number): void
  destroy(): void
}
