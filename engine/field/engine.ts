// The engine object (STYLE.md): construct it with what it needs, then write, pulse, step and read.
// It owns one backend (GPU or CPU), the material and conditions, the step count, the memories
// written, and the energy books: a timeline sampled every `timeline_interval` steps.
import { stabilityMargin, type Material } from '../contracts/material.js'
import { CrystalError, requireFinite } from '../errors.js'
import { PulseSchema } from '../contracts/registry.js'
import { addPulse, type Pulse } from '../encode/pulse.js'
import { ENCODING_VERSION, textWavefront, type EncodingVersion } from '../encode/text.js'
import type {
  DreamOps,
  EditOutcome,
  FieldBackend,
  HeldKind,
  HeldSums,
  FieldEdit,
  KernelWork,
  LedgerSample,
  TransferCounts,
  PerturbationQuery,
  PerturbationSums,
  WindowRecorder,
  WindowRecording,
} from './backend.js'
import { MaterialCatalog } from './materials.js'
import type { FieldMotion } from './motion.js'
import { drawTable, stepParams, stepTable, type Rerun, type StepParams } from './params.js'
import { selectBackend } from '../backends/select.js'
import { saturationPotential } from '../cpu/field_step.js'
import { erasePlan, type PlannedErasure, requirePlanSums } from '../detect/erase_plan.js'
import { ENCODINGS, FIELD_SIZE } from '../contracts/api.js'
import type { DreamMode } from '../contracts/registry.js'
import { dream, type DreamReport } from '../dream/dream.js'
import type { ProbeResult, RecallResult } from '../contracts/api.js'
import { MemoryReader } from '../recall/recall.js'
import { openAdjoint } from '../recall/runner.js'
import { HostDreamOps } from '../cpu/dream.js'
import { HostRecorder } from '../cpu/record.js'
import { rms } from '../util/vector.js'
import type { EnergyBooks, Engine, EngineOptions, HistoryEvent, Memory, Moment, MomentReading, SavedField } from './engine_api.js'

export const MIN_SIZE = FIELD_SIZE.minimum
export const MAX_SIZE = FIELD_SIZE.maximum
/** Timeline points kept per field; older ones are dropped first. */
export const TIMELINE_CAP = 20_000
/**
 * The most sampled runs whose timeline samples wait for a later read (samplingLater): the next run reads
 * them first. A dream makes 11; the server's step chunks may make thousands, each holding a copy.
 */
export const SAMPLES_WAITING_MAX = 16
/**
 * Longer runs read their samples as they go even within samplingLater (the GPU's a submit or two
 * behind): such a run keeps the device busy between its reads, and its samples would wait in a copy a submit.
 */
export const SAMPLES_LATER_MAX_STEPS = 1024

/** Scalings kept in the history (each is n*n floats); older ones are dropped first. */
export const SCALE_HISTORY_CAP = 256
/** Bytes of field states kept in the history of a saturating material (docs/recall.md); older ones are dropped first. */
export const STATE_HISTORY_BYTES = 64 * 2 ** 20

export type { EnergyBooks, Engine, EngineOptions, HistoryEvent, Memory, SavedField } from './engine_api.js'

function requireInteger(field: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new CrystalError('bad_argument', `${field} must be a whole number from ${min} to ${max}, got ${String(value)}`, { field })
  }
  return value
}

/** A text encoding this build reads, or a refusal naming them. */
function requireEncoding(value: unknown): EncodingVersion {
  if (!ENCODINGS.includes(value as EncodingVersion))
    throw new CrystalError(
      'bad_argument',
      `encoding must be a text encoding this build reads (${ENCODINGS.join(' or ')}), got ${JSON.stringify(value)}`,
      { field: 'encoding' },
    )
  return value as EncodingVersion
}

/** A material whose dephasing at this temperature would make the step unstable is refused. */
function requireStable(material: Material, temperature_k: number): void {
  if (stabilityMargin(material, temperature_k) < 0) {
    throw new CrystalError(
      'bad_argument',
      `${material.name} is unstable at ${temperature_k} K: its dephasing raises the viscosity past the step's stability bound (docs/physics.md)`,
      { field: 'temperature_k' },
    )
  }
}

export async function createEngine(o: EngineOptions = {}): Promise<Engine> {
  const size = requireInteger('size', o.size ?? 128, MIN_SIZE, MAX_SIZE)
  const fields = requireInteger('fields', o.fields ?? 1, 1, 65535)
  const seed = requireInteger('seed', o.seed ?? 1, 0, 2 ** 32 - 1)
  const interval = requireInteger('timeline_interval', o.timeline_interval ?? 10, 0, 1_000_000)
  const catalog = o.materials ?? new MaterialCatalog()
  const resolve = (m: Material | string) => (typeof m === 'string' ? catalog.get(m) : m)
  const material = resolve(o.material ?? 'ideal_resonator')
  const temperature = requireFinite('temperature_k', o.temperature_k ?? material.temperature_k, 0, 10000)
  const noise = requireFinite('noise', o.noise ?? 0, 0, 1)
  if (o.rerun && fields < 2)
    throw new CrystalError('bad_argument', `a rerun runs a batch's first fields again: it needs 2 fields at least, got ${fields}`, {
      field: 'rerun',
    })
  const rerun = o.rerun && {
    from: requireInteger('rerun.from', o.rerun.from, Math.ceil(fields / 2), fields - 1),
    noise: requireFinite('rerun.noise', o.rerun.noise, 0, 1),
  }
  if (o.draws !== undefined && (!Array.isArray(o.draws) || o.draws.length !== fields)) {
    const given = Array.isArray(o.draws) ? `${o.draws.length}` : JSON.stringify(o.draws)
    throw new CrystalError('bad_argument', `draws names the field each of the ${fields} fields draws: got ${given}`, { field: 'draws' })
  }
  // a cell's draw is a u32 index over the fields (drawn field x cells + cell)
  o.draws?.forEach((d, k) => requireInteger(`draws[${k}]`, d, 0, Math.floor(2 ** 32 / (size * size)) - 1))
  const draws = drawTable(fields, rerun?.from ?? fields, o.draws)
  if (o.rest_until_injected !== undefined && typeof o.rest_until_injected !== 'boolean')
    throw new CrystalError('bad_argument', `rest_until_injected must be true or false, got ${JSON.stringify(o.rest_until_injected)}`, {
      field: 'rest_until_injected',
    })
  const encoding = requireEncoding(o.encoding ?? ENCODING_VERSION)
  const recallCache =
    o.recall_cache_bytes === undefined ? undefined : requireInteger('recall_cache_bytes', o.recall_cache_bytes, 0, Number.MAX_SAFE_INTEGER)
  if (o.recall_history !== undefined && typeof o.recall_history !== 'boolean')
    throw new CrystalError('bad_argument', `recall_history must be true or false, got ${JSON.stringify(o.recall_history)}`)
  requireStable(material, temperature)
  const selected = await selectBackend({
    backend: o.backend ?? 'auto',
    n: size,
    fields,
    gpu: o.gpu,
    subgroups: o.gpu_subgroups,
    stepsPerDispatch: o.gpu_steps_per_dispatch,
    sampling: interval > 0,
    threads: o.threads,
    spawnThread: o.spawnThread,
  })
  o.report?.(selected.reason)
  // another engine on the same kind of backend (the same device), as this one was opened but for `other`
  const open = (other: EngineOptions) => createEngine({ ...o, backend: selected.backend.kind, report: undefined, ...other })
  return new FieldEngine(
    selected.backend,
    selected.reason,
    seed,
    interval,
    material,
    temperature,
    noise,
    rerun,
    draws,
    encoding,
    resolve,
    open,
    recallCache,
    o.recall_history ?? true,
    o.rest_until_injected ?? false,
  )
}

class FieldEngine implements Engine {
  step_count = 0
  revision = 0
  readonly memories: Memory[] = []
  readonly history: HistoryEvent[] = []
  private readonly injected: Float64Array
  /** Saturation potential put in (or taken out) by writes, pulses and edits: the step's ledger never sees it. */
  private readonly deposited: Float64Array
  private readonly timelines: EnergyBooks[][]
  private params: StepParams
  private readonly reader: MemoryReader
  private readonly dreamOps: DreamOps
  private readonly recorder: WindowRecorder
  /** Changes booked from sums the backend still holds: their fields and slots (before, kept, left, after; -1: none). */
  private pending: { fields: number[]; slots: number[] }[] = []
  /** Work waiting for values that ride on a later read (held sums released by booksLater or a sampled step, a dream's samples): settle does it first. */
  private deferred: (() => Promise<unknown>) | undefined
  /**
   * A sampled run's timeline samples are recorded once a later read brings them (within samplingLater,
   * on a backend that reads back). The whole engine's while its work runs: its callers do one thing at a
   * time (the server's queue, the tab's worker), so no other step runs meanwhile.
   */
  private samplesLater = false
  /** Runs whose samples wait for a later read (at most SAMPLES_WAITING_MAX): counted up to the chain's last taking. */
  private samplesWaiting = 0
  /** Per field, whether it rests (EngineOptions.rest_until_injected, or sent back by rest); none where no field ever rested. */
  private resting: boolean[] | undefined
  readonly rested: Uint32Array
  /** The step's table (params.ts stepTable): `draws`, the resting fields marked, and the steps each rested. */
  private table: Uint32Array

  constructor(
    private readonly core: FieldBackend,
    readonly backend_reason: string,
    readonly seed: number,
    readonly timeline_interval: number,
    public material: Material,
    public temperature_k: number,
    public noise: number,
    readonly rerun: Rerun | undefined,
    readonly draws: Uint32Array,
    public encoding: EncodingVersion,
    private readonly resolve: (m: Material | string) => Material,
    private readonly open: (o: EngineOptions) => Promise<Engine>,
    recallCache: number | undefined,
    /** The history recall's sweep replays is kept (EngineOptions.recall_history). */
    private readonly recallHistory: boolean,
    /** Every field rests until its first injection (EngineOptions.rest_until_injected). */
    resting: boolean,
  ) {
    this.resting = resting ? Array<boolean>(core.fields).fill(true) : undefined
    this.rested = new Uint32Array(core.fields)
    this.table = stepTable(draws, this.resting, this.rested)
    // where the writes make their wavefronts on the device (encoding 3 on the GPU), recall's patterns are made and kept there too
    this.reader = new MemoryReader(
      this,
      (field, params, patterns, readings, path, kept) => openAdjoint(this.core, field, params, patterns, readings, path, kept),
      recallCache,
      Boolean(core.superpose3),
    )
    this.injected = new Float64Array(core.fields)
    this.deposited = new Float64Array(core.fields)
    this.timelines = Array.from({ length: core.fields }, () => [])
    this.params = this.conditions()
    if (core.dream && core.recorder) [this.dreamOps, this.recorder] = [core.dream, core.recorder]
    else {
      const host = new HostDreamOps(core)
      ;[this.dreamOps, this.recorder] = [host, new HostRecorder(core, () => host.sums())]
    }
  }

  get backend() {
    return this.core.kind
  }
  get size() {
    return this.core.n
  }
  get fields() {
    return this.core.fields
  }

  /** The step's constants; refused where the material's dephasing at this temperature would make the step unstable. */
  private conditions(material = this.material, temperature_k = this.temperature_k): StepParams {
    requireStable(material, temperature_k)
    return stepParams({ n: this.core.n, fields: this.core.fields, material, temperature_k, noise: this.noise, rerun: this.rerun })
  }

  /** New constants from now on; a change goes into the history, for the recall sweep to replay. */
  private apply(params: StepParams): void {
    const before = this.params
    this.params = params
    if (Object.keys(params).some((k) => k !== 'noise_key' && params[k as keyof StepParams] !== before[k as keyof StepParams]))
      this.history.push({ kind: 'conditions', step: this.step_count, before })
  }

  private field(field: number): number {
    return requireInteger('field', field, 0, this.core.fields - 1)
  }

  async inject(wave: Float32Array, field = 0): Promise<void> {
    this.field(field)
    if (wave.length !== this.core.n * this.core.n)
      throw new CrystalError('bad_argument', `a wave for this field has ${this.core.n ** 2} cells, got ${wave.length}`)
    await this.booked([field], () => this.core.inject([field], [wave]))
    this.wake([field])
  }

  /** The fields injected into rest no more: the next step draws their noise and steps them. */
  private wake(fields: readonly number[]): void {
    if (!this.resting || !fields.some((f) => this.resting![f])) return
    for (const f of fields) this.resting[f] = false
    this.table = stepTable(this.draws, this.resting, this.rested)
  }

  /**
   * `steps` more rested by each field that rests: its own steps stay those it took (its noise's keys).
   * The table takes them as it wakes (a resting field draws nothing), so it goes up at injections only.
   */
  private restedFor(steps: number): void {
    this.resting?.forEach((rests, f) => {
      if (rests) this.rested[f] += steps
    })
  }

  async injectMany(waves: readonly (Float32Array | undefined)[]): Promise<void> {
    if (waves.length !== this.core.fields)
      throw new CrystalError('bad_argument', `injectMany here takes ${this.core.fields} waves (one per field), got ${waves.length}`)
    const cells = this.core.n * this.core.n
    const fields = waves.flatMap((w, f) => (w ? [f] : []))
    for (const f of fields)
      if (waves[f]!.length !== cells)
        throw new CrystalError('bad_argument', `a wave for this field has ${cells} cells, got ${waves[f]!.length} (field ${f})`)
    if (!fields.length) return
    await this.booked(fields, () =>
      this.core.inject(
        fields,
        fields.map((f) => waves[f]!),
      ),
    )
    this.wake(fields)
  }

  /**
   * The perturbation's kick (docs/detection.md): `pattern` (n*n) scaled to each listed field's rms of
   * u and added to its u and u_prev, booked as an injection. The rms is taken where the fields live
   * (engine/field/kick.ts), so nothing is read back for it.
   */
  async kick(pattern: Float32Array, fields: readonly number[]): Promise<void> {
    const cells = this.core.n * this.core.n
    if (pattern.length !== cells)
      throw new CrystalError('bad_argument', `a kick's pattern for this field has ${cells} cells, got ${pattern.length}`)
    const listed = this.distinct(fields, 'a kick')
    if (!listed.length) return
    const inverseRms = Math.fround(1 / (rms(pattern) || 1))
    await this.booked(listed, () => this.core.kick(listed, pattern, inverseRms))
  }

  async erase(plans: readonly PlannedErasure[]): Promise<void> {
    const n = this.core.n
    const fields = this.distinct(
      plans.map(({ field }) => field),
      'an erasure',
    )
    for (const { field, sums } of plans) requirePlanSums(field, n, sums)
    if (!plans.length) return
    await this.booked(fields, async () => {
      await this.core.erase(plans)
      // recall's sweep runs back through it as through a scaling by 0 there (a kick, added, needs
      // nothing); recorded as `scale` records it, before the state after it
      if (this.recallHistory)
        for (const { field, sums } of plans) {
          const mask = new Float32Array(n * n).fill(1)
          for (const c of erasePlan(n, sums).erased) mask[c] = 0
          this.history.push({ kind: 'scale', step: this.step_count, field, mask })
        }
    })
    this.trimHistory()
  }

  async rest(fields: readonly number[]): Promise<void> {
    const listed = this.distinct(fields, 'a rest')
    if (!listed.length) return
    const cells = this.core.n * this.core.n
    await this.booked(
      listed,
      async () => {
        await this.core.clear(listed)
        // recall's sweep runs back through it as through a scaling by 0 (erase's record of it)
        if (this.recallHistory)
          for (const field of listed) this.history.push({ kind: 'scale', step: this.step_count, field, mask: new Float32Array(cells) })
      },
      true,
    )
    this.trimHistory()
    this.resting ??= Array<boolean>(this.core.fields).fill(false)
    for (const f of listed) this.resting[f] = true
    this.table = stepTable(this.draws, this.resting, this.rested)
  }

  /** `fields` copied, each a field of this engine and listed once (`what` names the call in the error). */
  private distinct(fields: readonly number[], what: string): number[] {
    fields.forEach((f) => this.field(f))
    if (new Set(fields).size !== fields.length)
      throw new CrystalError('bad_argument', `${what} lists a field twice (${fields.join(', ')}): list each field once`)
    return [...fields]
  }

  /**
   * Books what `change` (injections, a dream edit) adds to the energy and potential of `fields` as
   * injected and deposited. Their sums are taken before and after (where the backend holds sums, every
   * field's, kept on it until the books are next needed: settle); else the listed fields' are read at once.
   * `cleared`: the change sets the fields to 0 (rest), so their sums after it are not taken on the host.
   */
  private async booked(fields: number[], edit: () => Promise<void>, cleared = false): Promise<void> {
    const change = async () => {
      await edit()
      this.revision++
    }
    const saturating = this.params.nonlinearity !== 0
    const held = this.core.held
    if (held) {
      // the energy and (saturating) the potential, before and after; -1: none held
      const kinds: HeldKind[] = saturating ? ['energy', 'potential'] : ['energy']
      const [before, kept = -1] = held.hold(kinds, this.params)
      await change()
      if (saturating) await this.remember(fields)
      const [after, left = -1] = held.hold(kinds, this.params)
      this.pending.push({ fields, slots: [before, kept, left, after] })
      return
    }
    const all = (k: Float64Array) => this.byField(fields, k)
    // only the fields changed: their books alone move (evolve injects a few fields of 1,000 at a time)
    const before = all(await this.core.energy(this.params, fields))
    const kept = all(await this.potential(fields))
    await change()
    if (cleared) {
      // nothing left to sum (two passes over the fields in JS): their energy and potential are 0
      await this.remember(fields)
      const none = new Float64Array(this.core.fields)
      this.book(fields, before, kept, none, none)
      return
    }
    const left = all(await this.potential(fields, true))
    this.book(fields, before, kept, left, all(await this.core.energy(this.params, fields)))
  }

  /** Values of the fields listed (in their order) placed by field, the others 0: what `book` indexes. */
  private byField(fields: readonly number[], listed: Float64Array): Float64Array {
    const out = new Float64Array(this.core.fields)
    fields.forEach((f, i) => (out[f] = listed[i]))
    return out
  }

  /** Per field (all four indexed by field): energy and potential before the change, potential and energy after. */
  private book(
    fields: readonly number[],
    before: ArrayLike<number>,
    kept: ArrayLike<number>,
    left: ArrayLike<number>,
    after: ArrayLike<number>,
  ): void {
    for (const f of fields) {
      this.deposited[f] += left[f] - kept[f]
      this.injected[f] += after[f] - before[f] + left[f] - kept[f]
    }
  }

  /** The books of the changes whose sums the backend still holds, all read back at once; returns every slot's values. */
  private async settle(): Promise<Float32Array> {
    const held = this.core.held
    if (!held) return new Float32Array(0)
    const values = await held.release()
    // books taken earlier (booksLater) are booked first, in order: that read brought them
    await this.deferred?.()
    this.bookPending(this.pending.splice(0), values)
    return values
  }

  /** The changes `pending` booked from the held sums' `values` (each slot `fields` long). */
  private bookPending(pending: readonly { fields: number[]; slots: number[] }[], values: Float32Array): void {
    const count = this.core.fields
    for (const { fields, slots } of pending) {
      const [before, kept, left, after] = slots.map((slot) =>
        slot < 0 ? new Float32Array(count) : values.subarray(slot * count, (slot + 1) * count),
      )
      this.book(fields, before, kept, left, after)
    }
  }

  /**
   * In a saturating material, the state of a field just after an injection or edit: from these the
   * recall sweep recomputes the path the saturation took, which the adjoint must follow (docs/recall.md).
   */
  /** `read`: the fields' u and u_prev already read back (in the order of `fields`), so they are not read twice. */
  private async remember(fields: readonly number[], read?: { u: Float32Array; prev: Float32Array }): Promise<void> {
    if (!this.params.nonlinearity || !this.recallHistory) return
    const step = this.step_count
    if (this.core.snapshot) for (const field of fields) this.history.push({ kind: 'state', step, field, saved: this.core.snapshot(field) })
    else {
      const { u, prev } = read ?? (await this.core.read([...fields]))
      const cells = this.core.n * this.core.n
      fields.forEach((field, k) =>
        this.history.push({
          kind: 'state',
          step,
          field,
          saved: { u: u.slice(k * cells, (k + 1) * cells), prev: prev.slice(k * cells, (k + 1) * cells) },
        }),
      )
    }
    this.trimHistory()
  }

  /**
   * The saturation potential held by the fields asked for (summed on the backend where it can, else read
   * back; docs/physics.md); `remember` keeps their state too.
   */
  private async potential(fields: number[], remember = false): Promise<Float64Array> {
    if (!this.params.nonlinearity) return new Float64Array(fields.length)
    if (this.core.potential) {
      if (remember) await this.remember(fields)
      const all = await this.core.potential(this.params)
      return Float64Array.from(fields, (f) => all[f])
    }
    const read = await this.core.read(fields)
    if (remember) await this.remember(fields, read)
    return saturationPotential(read.prev, read.u, this.params.nonlinearity, fields.length)
  }

  async write(text: string, importance = 1, field = 0): Promise<void> {
    await this.writeMany([{ text, importance }], field)
  }

  async writeMany(items: readonly { text: string; importance?: number }[], field = 0): Promise<void> {
    this.field(field)
    items.forEach(({ importance = 1 }) => {
      requireFinite('importance', importance, -10, 10)
      // recall reads a memory's strength as its resonance over its importance: one of 0 could never be recalled
      if (importance === 0)
        throw new CrystalError('bad_argument', 'importance must not be 0: a memory written with none could never be recalled', {
          field: 'importance',
        })
    })
    // recall reads each memory by the pattern written: kept, it is not encoded again
    const superpose = this.encoding === 3 && this.core.superpose3?.bind(this.core)
    if (superpose) {
      // hashed, made, superposed and kept where the field lives; only the texts go up, nothing comes back
      // but each part's energy (docs/recall.md)
      const texts = items.map(({ text, importance = 1 }) => ({ text, importance }))
      await this.booked([field], () => superpose(field, texts, this.reader.keptBytes))
      // a write is an injection: a resting field takes it and steps on (else the next step held it at 0)
      this.wake([field])
    } else {
      const sum = new Float32Array(this.core.n * this.core.n)
      for (const { text, importance = 1 } of items) {
        const wave = await textWavefront(text, this.core.n, { version: this.encoding })
        // f32 operations, as the GPU's superposition (shaders/encode3.wgsl finish) does them
        const weight = Math.fround(importance)
        for (let i = 0; i < sum.length; i++) sum[i] += Math.fround(wave[i] * weight)
        this.reader.written(text, wave)
      }
      await this.inject(sum, field)
    }
    for (const { text, importance = 1 } of items) {
      this.history.push({ kind: 'write', step: this.step_count, field, memory: this.memories.length })
      this.memories.push({ text, importance, step: this.step_count, field })
    }
  }

  async scale(mask: Float32Array, field?: number): Promise<void> {
    const cells = this.core.n * this.core.n
    const fields = field === undefined ? [...Array(this.core.fields).keys()] : [this.field(field)]
    if (mask.length !== cells * fields.length)
      throw new CrystalError('bad_argument', `a scale mask here has ${cells * fields.length} cells, got ${mask.length}`)
    // on the host the potential is summed from the state read anyway; where the backend holds sums, the books stay there
    const host = !this.core.held
    let kept: ArrayLike<number> = []
    let left: ArrayLike<number> = []
    const apply = async () => {
      if (!host && this.dreamOps.scale) {
        // where the dream's kernels scale in place (the GPU), the field is not read back
        const whole = fields.length === this.core.fields ? mask : new Float32Array(cells * this.core.fields).fill(1)
        if (whole !== mask) whole.set(mask, fields[0] * cells)
        await this.dreamOps.scale(whole)
      } else {
        const { u, prev } = await this.core.read()
        if (host) kept = saturationPotential(prev, u, this.params.nonlinearity, this.core.fields)
        fields.forEach((f, k) => {
          for (let i = 0; i < cells; i++) {
            u[f * cells + i] *= mask[k * cells + i]
            prev[f * cells + i] *= mask[k * cells + i]
          }
        })
        await this.core.load(u, prev)
        if (host) left = saturationPotential(prev, u, this.params.nonlinearity, this.core.fields)
      }
      if (this.recallHistory)
        fields.forEach((f, k) =>
          this.history.push({ kind: 'scale', step: this.step_count, field: f, mask: mask.slice(k * cells, (k + 1) * cells) }),
        )
      this.revision++
    }
    if (!host) await this.booked(fields, apply)
    else {
      const energy = async () => this.byField(fields, await this.core.energy(this.params, fields))
      const before = await energy()
      await apply()
      await this.remember(fields)
      this.book(fields, before, kept, left, await energy())
    }
    this.trimHistory()
  }

  captureFrame(slot: number, frames: number): Promise<void> {
    requireInteger('frames', frames, 1, 65535)
    return this.recorder.capture(requireInteger('slot', slot, 0, frames - 1), frames)
  }

  collectRecording(): Promise<WindowRecording> {
    return this.recorder.collect()
  }

  async holdStability(sums?: Float32Array): Promise<void> {
    const floats = this.core.n * this.core.n * this.core.fields
    if (sums && sums.length !== floats)
      throw new CrystalError('bad_argument', `stability sums for these fields have ${floats} floats, got ${sums.length}`)
    return this.recorder.holdSums(sums)
  }

  async perturbationSums(query: PerturbationQuery): Promise<PerturbationSums> {
    this.requireQuery(query)
    return this.recorder.perturbationSums(query)
  }

  async perturbationSumsLater(query: PerturbationQuery): Promise<() => Promise<PerturbationSums>> {
    this.requireQuery(query)
    return this.recorder.perturbationSumsLater(query)
  }

  /** A perturbation's query refused where it does not fit these fields: the kick's cells, the fields, each once, and the plans' sums. */
  private requireQuery(query: PerturbationQuery): void {
    const cells = this.core.n * this.core.n
    if (query.pattern.length !== cells)
      throw new CrystalError('bad_argument', `a kick's pattern for this field has ${cells} cells, got ${query.pattern.length}`)
    query.basins.forEach((f) => this.field(f))
    if (new Set(query.basins).size !== query.basins.length)
      throw new CrystalError('bad_argument', `a perturbation lists a kicked field twice (${query.basins.join(', ')}): list each field once`)
    for (const { field, sums } of query.erased) requirePlanSums(this.field(field), this.core.n, sums)
  }

  async accumulateStability(reset: boolean): Promise<void> {
    await this.dreamOps.accumulateStability(reset)
  }

  stabilitySums(): Promise<Float32Array> {
    return this.dreamOps.stabilitySums()
  }

  async dreamEdit(
    edits: readonly (FieldEdit | null)[],
    passes: number,
    side: number,
    report = true,
  ): Promise<() => Promise<EditOutcome[]>> {
    if (edits.length !== this.core.fields)
      throw new CrystalError('bad_argument', `a dream edit here has ${this.core.fields} fields, got ${edits.length}`)
    const all = [...Array(this.core.fields).keys()]
    let outcomes: () => Promise<EditOutcome[]> = async () => []
    await this.booked(all, async () => {
      // masks the history would drop at once are not made (a batch of 1,000 fields made 1,000 a dream)
      const edited = await this.dreamOps.edit(edits, passes, side, this.recallHistory ? SCALE_HISTORY_CAP : 0, report)
      outcomes = edited.outcomes
      for (const f of all) {
        const mask = edited.masks[f]
        if (mask) this.history.push({ kind: 'scale', step: this.step_count, field: f, mask })
      }
    })
    this.trimHistory()
    return outcomes
  }

  transfers(): TransferCounts | null {
    const t = this.core.transfers
    if (!t) return null
    const { bytes_read, reads, bytes_written, writes, submits, dispatches } = t
    return { bytes_read, reads, bytes_written, writes, submits, dispatches }
  }

  /** Keeps the newest SCALE_HISTORY_CAP scalings and STATE_HISTORY_BYTES of states (the writes are small and stay); a device mask dropped is freed. */
  private trimHistory(): void {
    let scales = this.history.filter((e) => e.kind === 'scale').length
    const stateBytes = 8 * this.core.n * this.core.n
    let bytes = this.history.reduce((s, e) => s + (e.kind === 'state' ? stateBytes : 0), 0)
    for (let i = 0; (scales > SCALE_HISTORY_CAP || bytes > STATE_HISTORY_BYTES) && i < this.history.length; ) {
      const e = this.history[i]
      if (e.kind === 'scale' && scales > SCALE_HISTORY_CAP) {
        if (!(e.mask instanceof Float32Array)) this.core.releaseMask?.(e.mask)
        this.history.splice(i, 1)
        scales--
      } else if (e.kind === 'state' && bytes > STATE_HISTORY_BYTES) {
        if (!('u' in e.saved)) this.core.releaseMask?.(e.saved)
        this.history.splice(i, 1)
        bytes -= stateBytes
      } else i++
    }
  }

  async pulse(p: Pulse, field = 0): Promise<void> {
    // a bad_argument error naming the first parameter that is not finite or out of range: the ranges are
    // the contract's (engine/contracts/registry.ts), the same the API and genomes obey
    for (const [name, range] of Object.entries(PulseSchema.properties))
      requireFinite(name, p[name as keyof Pulse], range.minimum!, range.maximum!)
    const wave = new Float32Array(this.core.n * this.core.n)
    addPulse(wave, this.core.n, p)
    await this.inject(wave, field)
  }

  async step(steps: number): Promise<void> {
    requireInteger('steps', steps, 0, 10_000_000)
    const every = this.timeline_interval
    const held = this.core.held
    const sampled = every > 0 && Math.floor((this.step_count + steps) / every) > Math.floor(this.step_count / every)
    // where the run takes a timeline sample, the changes' held sums before it ride with its samples' read:
    // one read, where settling after it read them on their own
    const settled = held && sampled ? this.settleLater(held, () => undefined) : () => this.settle()
    const req = { steps, first_step: this.step_count, seed: this.seed, sample_interval: every, params: this.params, draws: this.table }
    if (sampled && this.samplesLater && steps <= SAMPLES_LATER_MAX_STEPS && this.core.stepSamplesLater) {
      // a long row of runs (the server's step chunks) reads the waiting ones now and then: each holds a copy on the device
      if (this.samplesWaiting >= SAMPLES_WAITING_MAX) await this.deferred?.()
      const samples = await this.core.stepSamplesLater(req)
      this.step_count += steps
      this.restedFor(steps)
      this.revision++
      this.samplesWaiting++
      // recorded after what was taken before them (the held sums above among it), once a read brings them
      this.later(async () => {
        for (const s of await samples()) this.record(s)
      })
      return
    }
    const samples = await this.core.step(req)
    this.step_count += steps
    this.restedFor(steps)
    this.revision++
    if (samples.length) await settled()
    for (const s of samples) this.record(s)
  }

  private record(s: LedgerSample): void {
    s.fields.forEach((v, f) => {
      const line = this.timelines[f]
      line.push({
        step: s.step,
        energy: v[0],
        bulk_loss: v[1],
        boundary_loss: v[2],
        saturation: v[3] + this.deposited[f],
        noise_work: v[4],
        injected: this.injected[f],
      })
      if (line.length > TIMELINE_CAP) line.splice(0, line.length - TIMELINE_CAP)
    })
  }

  async books(): Promise<EnergyBooks[]> {
    const held = this.core.held
    // the host backend's are summed as they are asked for
    if (!held) return this.booksLater()()
    const slots = this.holdBooks(held)
    return this.heldBooks(slots, await this.settle(), this.step_count)
  }

  compileAhead(work: readonly KernelWork[]): void {
    this.core.compileAhead?.(work)
  }

  booksLater(): () => Promise<EnergyBooks[]> {
    const held = this.core.held
    if (!held) {
      // everything taken before anything else can run: the host backend sums as it is asked
      const [step, injected, deposited] = [this.step_count, this.injected.slice(), this.deposited.slice()]
      const now = Promise.all([this.core.energy(this.params), this.core.ledger()]).then(([e, l]) =>
        this.booksOf(e, l, step, { injected, deposited }),
      )
      now.catch(() => {})
      return () => now
    }
    const slots = this.holdBooks(held)
    const step = this.step_count
    return this.settleLater(held, (v) => this.heldBooks(slots, v, step))
  }

  /**
   * The held sums released now (`settle`'s), booked once a later read brings them (Transfers.ride), after
   * the books taken before them; `then` makes what the caller takes from their values.
   */
  private settleLater<T>(held: HeldSums, then: (values: Float32Array) => T): () => Promise<T> {
    const pending = this.pending.splice(0)
    const values = held.releaseLater()
    return this.later(async () => {
      const v = await values()
      this.bookPending(pending, v)
      return then(v)
    })
  }

  /** `work` done once, after what was taken later before it (`deferred`), when settle or a caller asks for it. */
  private later<T>(work: () => Promise<T>): () => Promise<T> {
    const earlier = this.deferred
    let result: Promise<T> | undefined
    // done once: settle and the caller may both ask
    const take = () =>
      (result ??= (async () => {
        try {
          await earlier?.()
          return await work()
        } finally {
          // a failed read fails this call, not every later settle; the chain taken whole, no samples wait
          if (this.deferred === take) {
            this.deferred = undefined
            this.samplesWaiting = 0
          }
        }
      })())
    this.deferred = take
    return take
  }

  /** The energy and the ledger's totals of every field held now: their slots. */
  private holdBooks(held: HeldSums): { energy: number; ledger: number } {
    const [energy, ledger] = held.hold(['energy', 'ledger'], this.params)
    return { energy, ledger }
  }

  /** The books from the held slots' values (the held changes booked), as at `step`. */
  private heldBooks(slots: { energy: number; ledger: number }, values: Float32Array, step: number): EnergyBooks[] {
    const count = this.core.fields
    const columns = values.subarray(slots.ledger * count, (slots.ledger + 4) * count)
    return this.booksOf(
      Float64Array.from(values.subarray(slots.energy * count, (slots.energy + 1) * count)),
      Float64Array.from({ length: 4 * count }, (_, i) => columns[(i % 4) * count + Math.floor(i / 4)]),
      step,
    )
  }

  /** Every field's books from its energy and the ledger's totals ([field][column]), with what was injected and deposited (the engine's now unless given). */
  private booksOf(
    energy: Float64Array,
    ledger: Float64Array,
    step: number,
    { injected, deposited } = { injected: this.injected, deposited: this.deposited },
  ): EnergyBooks[] {
    return [...energy].map((e, f) => ({
      step,
      energy: e,
      bulk_loss: ledger[f * 4],
      boundary_loss: ledger[f * 4 + 1],
      saturation: ledger[f * 4 + 2] + deposited[f],
      noise_work: ledger[f * 4 + 3],
      injected: injected[f],
    }))
  }

  timeline(field = 0): readonly EnergyBooks[] {
    return this.timelines[this.field(field)]
  }

  read(fields?: number[]) {
    fields?.forEach((f) => this.field(f))
    return this.core.read(fields)
  }

  readU(fields?: number[]) {
    fields?.forEach((f) => this.field(f))
    return this.core.readU(fields)
  }

  cellsLater(cells: readonly number[], field = 0): () => Promise<Float32Array> {
    if (cells.length === 0) throw new CrystalError('bad_argument', 'cellsLater needs at least one cell')
    return this.core.cellsLater(this.cellsOf(cells, field), cells)
  }

  async motion(cells: readonly number[], field = 0): Promise<FieldMotion> {
    return this.core.motion(this.cellsOf(cells, field), cells)
  }

  async patchEnergy(side = 8, field = 0): Promise<Float64Array> {
    return this.core.patchEnergy(this.patchesOf(side, field), side)
  }

  async downsampled(side: number, field = 0): Promise<Float32Array> {
    return this.core.downsampled(this.patchesOf(side, field), side)
  }

  /** The field's index, once `side` patches a side fit it: at most a cell a side, so no patch is without cells. */
  private patchesOf(side: number, field: number): number {
    const f = this.field(field)
    requireInteger('side', side, 1, this.core.n)
    return f
  }

  /** The field's index, once every cell listed is one of its cells (row-major). */
  private cellsOf(cells: readonly number[], field: number): number {
    const f = this.field(field)
    const all = this.core.n * this.core.n
    const wrong = cells.find((c) => !Number.isInteger(c) || c < 0 || c >= all)
    if (wrong !== undefined) throw new CrystalError('bad_argument', `cell ${wrong} is outside field ${field}'s 0 to ${all - 1}`)
    return f
  }

  async samplingLater<T>(work: () => Promise<T>): Promise<T> {
    // within an outer one, whose end records them
    if (this.samplesLater) return work()
    this.samplesLater = true
    try {
      const result = await work()
      await this.deferred?.()
      return result
    } finally {
      this.samplesLater = false
    }
  }

  dream(modes: DreamMode | readonly (DreamMode | 'none')[], options?: { report?: boolean }): Promise<DreamReport[]> {
    // its runs' timeline samples come back with its later reads (the edit's, the books'), not each on a
    // read of its own that empties the device's queue: a light dream reads twice where 14
    return this.samplingLater(() => dream(this, modes, options))
  }

  probe(text: string, field = 0): Promise<ProbeResult> {
    return this.asked(() => this.reader.probe(text, this.field(field)))
  }

  recall(text: string, k: number, field = 0): Promise<RecallResult> {
    return this.asked(() => this.reader.recall(text, k, this.field(field)))
  }

  readAt(
    patterns: readonly Float32Array[],
    nulls: readonly Float32Array[],
    moments: readonly Moment[],
    field = 0,
  ): Promise<MomentReading[]> {
    return this.asked(() => this.reader.readAt(patterns, nulls, moments, this.field(field)))
  }

  /** A question of the field's past, refused where its history is not kept. */
  private async asked<T>(question: () => Promise<T>): Promise<T> {
    if (!this.recallHistory)
      throw new CrystalError('bad_argument', 'this engine keeps no history for recall (it was opened with recall_history: false)')
    return question()
  }

  twin(fields: number): Promise<Engine> {
    const quiet = { temperature_k: 0, noise: 0, rerun: undefined, draws: undefined, timeline_interval: 0, rest_until_injected: false }
    return this.open({ ...quiet, fields, material: this.material, encoding: this.encoding })
  }

  async extract(fields: readonly number[]): Promise<Engine> {
    if (!fields.length) throw new CrystalError('bad_argument', 'extract takes at least one field')
    fields.forEach((f) => this.field(f))
    const resting = fields.find((f) => this.resting?.[f])
    if (resting !== undefined)
      throw new CrystalError('bad_argument', `field ${resting} rests (rest_until_injected or rest): extract takes fields awake`)
    const rerun = fields.find((f) => this.rerun && f >= this.rerun.from)
    if (rerun !== undefined)
      throw new CrystalError('bad_argument', `field ${rerun} is a rerun's (its noise louder): extract takes fields of the first run`)
    const part = (await this.open({
      fields: fields.length,
      material: this.material,
      temperature_k: this.temperature_k,
      noise: this.noise,
      rerun: undefined,
      draws: fields.map((f) => this.draws[f]),
      // injected already (a resting field is refused above): each copy steps on as its field
      rest_until_injected: false,
      encoding: this.encoding,
      timeline_interval: 0,
      recall_history: false,
    })) as FieldEngine
    try {
      // the step the state is taken at; on one device copies there, else read and loaded
      const step = this.step_count
      if (!this.core.copyInto?.(fields, part.core)) {
        const { u, prev } = await this.core.read([...fields])
        await part.core.load(u, prev)
      }
      await this.recorder.copyHeld(fields, part.recorder)
      await part.resumed(step, [])
      // each copy keys its noise by its field's own steps, as there
      fields.forEach((f, k) => (part.rested[k] = this.rested[f]))
      part.table = stepTable(part.draws, undefined, part.rested)
      return part
    } catch (e) {
      part.destroy()
      throw e
    }
  }

  async resume(saved: SavedField): Promise<void> {
    const encoding = requireEncoding(saved.encoding ?? this.encoding)
    // a field holds one encoding: memories of two could not be read by one re-encoding of the query
    if (encoding !== this.encoding && this.memories.length)
      throw new CrystalError(
        'bad_argument',
        `a saved field of text encoding ${encoding} cannot join this engine's memories, written with encoding ${this.encoding}`,
        { field: 'encoding' },
      )
    if (this.step_count || this.memories.length || this.core.fields !== 1)
      throw new CrystalError('bad_argument', 'only a fresh one-field engine can resume a saved field')
    const cells = this.core.n * this.core.n
    if (saved.u.length !== cells || saved.prev.length !== cells)
      throw new CrystalError('bad_argument', `a saved field here has ${cells} cells, got ${saved.u.length}`)
    await this.settle()
    await this.core.load(saved.u, saved.prev)
    this.encoding = encoding
    await this.resumed(saved.step_count, saved.memories)
  }

  async fork(field = 0): Promise<Engine> {
    const f = this.field(field)
    // createEngine's own engine, whose core the copy goes into
    const twin = (await this.twin(1)) as FieldEngine
    try {
      // the step the state is taken at: a client's step may run while it is read
      const step = this.step_count
      // on one device a copy there; else (another device, the CPU) read and loaded
      if (!this.core.copyInto?.([f], twin.core)) {
        const { u, prev } = await this.core.read([f])
        await twin.core.load(u, prev)
      }
      await twin.resumed(step, [])
      return twin
    } catch (e) {
      twin.destroy()
      throw e
    }
  }

  /** The bookkeeping of a fresh engine whose state was just put in place (resume, fork, extract); `memories` go into field 0. */
  private async resumed(step: number, memories: readonly Omit<Memory, 'field'>[]): Promise<void> {
    this.revision++
    this.step_count = step
    const all = [...Array(this.core.fields).keys()]
    await this.remember(all)
    for (const m of memories) {
      this.history.push({ kind: 'write', step: m.step, field: 0, memory: this.memories.length })
      this.memories.push({ ...m, field: 0 })
    }
    // the energy held counts as injected, so the books of this session start balanced: booked as a
    // change from nothing to the state now (where the backend holds sums, read with the next books)
    const held = this.core.held
    if (held) {
      const [after, left = -1] = held.hold(this.params.nonlinearity ? ['energy', 'potential'] : ['energy'], this.params)
      this.pending.push({ fields: all, slots: [-1, -1, left, after] })
      return
    }
    const none = new Float64Array(all.length)
    this.book(all, none, none, await this.potential(all), await this.core.energy(this.params, all))
  }

  setMaterial(m: Material | string): void {
    const material = this.resolve(m)
    const params = this.conditions(material)
    this.material = material
    this.apply(params)
  }

  setTemperature(kelvin: number): void {
    const temperature_k = requireFinite('temperature_k', kelvin, 0, 10000)
    const params = this.conditions(this.material, temperature_k)
    this.temperature_k = temperature_k
    this.apply(params)
  }

  setNoise(amplitude: number): void {
    this.noise = requireFinite('noise', amplitude, 0, 1)
    this.apply(this.conditions())
  }

  destroy(): void {
    this.recorder.destroy()
    this.core.destroy()
  }
}
