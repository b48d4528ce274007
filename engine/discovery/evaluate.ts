// Evaluating genomes (docs/discovery.md): the whole population as one batch of fields. Each genome is
// injected so that it has resonated exactly its own number of steps when the batch ends; then each
// field dreams in its genome's mode, a window of the field is recorded and a later window's stability
// observed, and the dominant structure is detected and classed from its dynamics. The same genomes
// again in the same batch, a rerun under added noise, give the noise tolerance. Beside them each
// genome's noise alone (its steps and dream, nothing injected): a structure stands out of it or is none.
import type { Genome } from '../contracts/registry.js'
import type { Material } from '../contracts/material.js'
import { BASIN_SUMS, basinFrom } from '../detect/basin.js'
import {
  aboveNoise,
  CLASS_RULES,
  type Later,
  persistenceFrom,
  persistenceOf,
  withResponse,
  type Response,
  shapeSums,
  type Structure,
  type WindowReads,
} from '../detect/detect.js'
import { CrystalError } from '../errors.js'
import { WindowSpectra } from '../detect/spectra.js'
import type { Candidates, PlanSums } from '../detect/sums.js'
import { REGROWTH_SUMS, regrowthFrom } from '../detect/regrowth.js'
import { addPulse } from '../encode/pulse.js'
import { DREAM_STEPS, observeHeld } from '../dream/dream.js'
import type { PerturbationQuery, PerturbationSums } from '../field/backend.js'
import type { EnergyBooks, Engine, EngineOptions } from '../field/engine.js'
import { rng } from '../util/rng.js'
import { cosine } from '../util/vector.js'
import { meanOf } from '../cpu/dream.js'
import { type Detector, IN_THREAD, type Window } from './detector.js'
import { randomPulse } from './genome.js'

/**
 * The recorded window: 32 frames of u, 4 steps apart (128 steps). Structures' dominant frequencies
 * measured with 2 steps apart were all below 0.02 cycles per step, far under this Nyquist limit
 * (1/8). The frames are reduced where the fields live as they are taken (engine/detect/spectra.ts).
 */
export const RECORD_FRAMES = 32
export const RECORD_DT = 4
/** The later window whose stability says what the structure kept. */
export const OBSERVE_STEPS = 100
export const OBSERVE_SAMPLES = 10
/** Noise amplitude added for the noise-tolerance run. */
export const NOISE_PROBE = 0.003

export interface EvaluationConditions {
  size: number
  material: Material
  seed: number
  /** Opens an engine (the Node or the browser one) with the given options. */
  open: (o: EngineOptions) => Promise<Engine>
  /** Where the fields' structures are detected (detector.ts): on this thread unless given. */
  detector?: Detector
  /** Told where the evaluation's time went, once it is done (evolve --debug). */
  onTimes?: (t: EvaluationTimes) => void
}

/**
 * The phases of a batch, in the GPU backend's order (the CPU backend detects before it perturbs): its engine opened (the device's buffers made); injections and steps
 * to the batch's end; the dreams; the window recorded, observed and read back (the clean fields'
 * books with it, taken as it ends); what is left of taking the books; detection naming the cells whose
 * planes it reads (where the planes stay on the device; on the GPU the candidates' perturbation runs
 * meanwhile); the perturbation experiment (its waits: the fields extracted, steps, its window read
 * back, the classing; on the GPU it runs first, on each field's candidates and the parts planned past
 * them, and what detection named rides on its read); what detection named taken (on the GPU, what is
 * left of it); the structures detected; on the GPU, the perturbation again where a structure was
 * none of the parts perturbed (perturbedFirst).
 */
export const BATCH_PHASES = ['open', 'resonate', 'dream', 'record', 'books', 'cells', 'perturb', 'gather', 'detect', 'again'] as const
export type BatchPhase = (typeof BATCH_PHASES)[number]
/** A batch's wall milliseconds per phase, the phases it ran, in the order each first ran. */
export type BatchTimes = Partial<Record<BatchPhase, number>>

/**
 * Where an evaluation's time went, in wall milliseconds: the genomes' waves, the batch's phases (the
 * ones it ran), and the whole. The waves are made while the batch's engine opens, so the two overlap.
 */
export interface EvaluationTimes {
  waves: number
  batch: BatchTimes
  total: number
}

/** A batch's clock: each lap adds the time since the last one to its phase. */
class Laps {
  readonly ms: BatchTimes = {}
  private last = performance.now()

  /** The next lap counts from now (time spent waiting on something else is nobody's). */
  restart(): void {
    this.last = performance.now()
  }

  /** `work` awaited, its wait counted to `phase`. */
  async timed<T>(phase: BatchPhase, work: Promise<T>): Promise<T> {
    const done = await work
    this.lap(phase)
    return done
  }

  lap(phase: BatchPhase): void {
    const now = performance.now()
    this.ms[phase] = (this.ms[phase] ?? 0) + now - this.last
    this.last = now
  }
}

export interface Evaluation {
  structure: Structure | undefined
  persistence: number
  noise_tolerance: number
  /** Energy at the end over energy injected. */
  energy_retention: number
}

/**
 * Per field of the engine: a recorded window (RECORD_FRAMES frames, RECORD_DT steps apart), then the
 * stability map of a later window. The window is reduced to its spectra where the fields live
 * (engine.captureFrame); its stability map and the sums come back in one read, then, where the planes
 * stay on the device, what detect(spectra, later, limit) reads of the other planes in one more
 * (engine/detect/detect.ts cellsRead, found by `detector`). `release` lets a later recording use their
 * memory (nothing may read the windows after it).
 */
export async function recordWindows(
  engine: Engine,
  limit = Infinity,
  options: { detector?: Detector; laps?: Laps } = {},
): Promise<{ windows: Window[]; release: () => void }> {
  const { windows, release, naming } = await recorded(engine, limit, options)
  if (naming !== undefined) {
    const { submitted } = await naming
    options.laps?.lap('cells')
    await (await submitted)()
    options.laps?.lap('gather')
  }
  return { windows, release }
}

/**
 * What detection names beyond the windows (`reads`), and its submit: `submitted` settles once that is
 * made and its ride is waiting (the engine may close after), to what takes it into the windows (it
 * rides on the device's next read, or is read alone where none has come).
 */
interface Naming {
  reads: WindowReads[]
  submitted: Promise<() => Promise<void>>
}

/**
 * recordWindows up to the window's read; `naming`, what detection names and submits, runs on from
 * there while the caller queues more (none where every plane is at hand, the CPU, which names nothing).
 */
async function recorded(
  engine: Engine,
  limit: number,
  {
    detector = IN_THREAD,
    laps,
    books = false,
    quiet = [0, 0],
  }: { detector?: Detector; laps?: Laps; books?: boolean; quiet?: [from: number, to: number] },
): Promise<{
  windows: Window[]
  release: () => void
  naming: Promise<Naming> | undefined
  books: (() => Promise<EnergyBooks[]>) | undefined
}> {
  const n = engine.size
  const cells = n * n
  for (let t = 0; t < RECORD_FRAMES; t++) {
    await engine.step(RECORD_DT)
    await engine.captureFrame(t, RECORD_FRAMES)
  }
  const taken = await observeHeld(engine, OBSERVE_STEPS, OBSERVE_SAMPLES)
  // the books as the windows end, where asked: taken before the window's read, which brings them back
  // (on the GPU; where the device read what detection reads of every field's structure, that read is
  // the batch's last before the perturbation's)
  const booksLater = books ? engine.booksLater() : undefined
  const recording = await engine.collectRecording()
  // the later windows as summed: detection reads their sums, and the means where it needs a map (laterAt)
  const windows = Array.from({ length: engine.fields }, (_, f) => ({
    spectra: new WindowSpectra(n, RECORD_DT, RECORD_FRAMES, recording.window(f)),
    later: { sums: recording.sums.subarray(f * cells, (f + 1) * cells), taken },
  }))
  laps?.lap('record')
  if (books) laps?.lap('books')
  const release = () => recording.release?.()
  const gather = recording.gather
  if (!gather) return { windows, release, naming: undefined, books: booksLater }
  // the fields of noise alone are only recorded: detection names none of their cells
  const [from, to] = quiet
  const nothing: WindowReads = { lists: new Int32Array(0), ends: new Int32Array(0), modes: new Int32Array(0) }
  const naming = detector.cellsRead([...windows.slice(0, from), ...windows.slice(to)], limit).then((named) => {
    const reads = [...named.slice(0, from), ...windows.slice(from, to).map(() => nothing), ...named.slice(from)]
    // submitted now (once its kernels are compiled), ahead of the work queued after it, whose read it rides
    const submitted = gather(reads)
    // handled here, awaited by the caller: it failing while the caller queues more must not end the process
    submitted.catch(() => {})
    return { reads, submitted }
  })
  naming.catch(() => {})
  return { windows, release, naming, books: booksLater }
}

/** Steps between a perturbation and the window that sees what came back. */
export const RECOVERY_STEPS = 100
/** The kick: random pulses from a fixed seed, the same for every field and run (part of the measurement, not of the noise). */
const KICK_PULSES = 3
const KICK_SEED = 7

interface Batch {
  /** Per genome: the clean field's recorded window and later window's stability map. */
  windows: Window[]
  /** Per genome: the window of its noise alone (noiseAlone), recorded as its own. */
  quiet: Window[]
  /** Per genome: the clean field's dominant structure as detected, and as classed after the perturbation (the same without one). */
  found: (Structure | undefined)[]
  answered: (Structure | undefined)[]
  /** Per genome: the dominant structure of its rerun under noise, as detected. */
  shaken: (Structure | undefined)[]
  /** Per genome: the clean field's energy at the end over energy injected. */
  retention: number[]
  /** Gives the windows' memory back for a later batch's (recordWindows' release). */
  release: () => void
  /** Where its time went (EvaluationTimes). */
  times: BatchTimes
}

/** A perturbation of one field: a kick, or the half of a disc erased as the part's sums plan it (erasePlan), its regrowth measured over the disc. */
type Plan = { kicked: true } | { kicked: false; sums: PlanSums }

/** A field perturbed in a batch extracted for it, as `plan` says; `root`: the smallest cell of the part planned for, where a candidate. */
interface Copy {
  field: number
  plan: Plan
  root?: number
}

/**
 * The plan for a part: a field-wide one (area >= 20%) is kicked; a smaller one has the half of a disc
 * round its centroid erased, on one side of its principal axis (erasePlan, from its sums: the cells
 * are decided where the fields live).
 */
function planFor(area: number, sums: PlanSums): Plan {
  return area >= CLASS_RULES.field_wide ? { kicked: true } : { kicked: false, sums }
}

/** The plan for a structure found (its cells in index order, as detection gives them). */
function planOf(n: number, s: Structure): Plan {
  return planFor(s.features.area, shapeSums(s.cells, n))
}

/**
 * The perturbation experiment (docs/detection.md), on every field at once: a field-wide structure is
 * kicked by random pulses as strong (rms) as the field; a smaller one has the half of it on one side
 * of its principal axis erased (u and u_prev zeroed within twice its mean radius). RECOVERY_STEPS
 * later a stability window says whether the field went back to its pattern (basin) or the structure
 * regrew (regrowth), and the structure is classed again with that answer. The windows' later maps are
 * the stability map before.
 */
export async function perturb(
  engine: Engine,
  found: readonly (Structure | undefined)[],
  windows: readonly Window[],
): Promise<(Structure | undefined)[]> {
  const plans = plansOf(engine.size, found)
  return answeredBy(found, plans, await perturbPlans(engine, plans, windows, 'maps'))
}

/** Per field, the plan for the structure found there (none where none was). */
function plansOf(n: number, found: readonly (Structure | undefined)[]): (Plan | undefined)[] {
  return found.map((s) => s && planOf(n, s))
}

/** The structures found, each perturbed classed again with its field's response. */
function answeredBy(
  found: readonly (Structure | undefined)[],
  plans: readonly (Plan | undefined)[],
  response: ReadonlyMap<number, Response>,
): (Structure | undefined)[] {
  return found.map((s, f) => (s && plans[f] ? withResponse(s, response.get(f)!) : s))
}

/** A batch extracted and perturbed (perturbedApart): how to take its answers per copy, and to close it where they are never taken. */
interface Perturbed {
  take: () => Promise<Response[]>
  close: () => void
}

/**
 * The experiment as `copies` say, in a batch of their own (engine.extract: each field's state, the
 * stability sums held and the noise it draws here, so the same answers, bit for bit, as perturbing it
 * where it is; a field twice, twice): neither the fields left alone nor a rerun's step with them, and
 * the engine itself stays as it was, to extract from again. Its held sums must be the stability map
 * before (engine.holdStability). Resolves once the answers are made: read at once, after `readAfter`
 * settles (what is to ride on that read is waiting by then), or with `ride`, riding on the device's
 * next read (Engine.perturbationSumsLater); the batch closes once they are taken.
 */
async function perturbedApart(
  engine: Engine,
  copies: readonly Copy[],
  windows: readonly Window[],
  { ride = false, readAfter }: { ride?: boolean; readAfter?: Promise<unknown> } = {},
): Promise<Perturbed> {
  if (!copies.length) return { take: async () => [], close: () => {} }
  const part = await engine.extract(copies.map((c) => c.field))
  let open = true
  const close = () => {
    if (open) part.destroy()
    open = false
  }
  try {
    const made = await perturbFields(
      part,
      copies.map((c) => c.plan),
      copies.map((c) => windows[c.field]),
      'held',
    )
    await readAfter
    // every copy has a plan, so the fields were perturbed (made)
    let sums: () => Promise<PerturbationSums>
    if (ride) sums = await part.perturbationSumsLater(made!.query)
    else {
      const read = await part.perturbationSums(made!.query)
      sums = async () => read
    }
    const take = async () => {
      try {
        const response = made!.responses(await sums())
        return copies.map((_, k) => response.get(k)!)
      } finally {
        close()
      }
    }
    return { take, close }
  } catch (e) {
    close()
    throw e
  }
}

/**
 * The experiment as `plans` say, per field (none: left alone); per field perturbed, its response.
 * `before`: where the stability map before comes from: the windows' later maps ('maps', sent up), or
 * the engine holds it already ('held': held there, or copied into a batch extracted).
 */
async function perturbPlans(
  engine: Engine,
  plans: readonly (Plan | undefined)[],
  windows: readonly Window[],
  before: 'maps' | 'held',
): Promise<Map<number, Response>> {
  const made = await perturbFields(engine, plans, windows, before)
  return made ? made.responses(await engine.perturbationSums(made.query)) : new Map()
}

/**
 * perturbPlans up to its answers: the fields perturbed, stepped and observed; what the answers are made
 * of (Engine.perturbationSums' query), and how they become each field's response. None where no field
 * has a plan.
 */
async function perturbFields(
  engine: Engine,
  plans: readonly (Plan | undefined)[],
  windows: readonly Window[],
  before: 'maps' | 'held',
): Promise<{ query: PerturbationQuery; responses: (sums: PerturbationSums) => Map<number, Response> } | undefined> {
  const n = engine.size
  const cells = n * n
  const rand = rng(KICK_SEED)
  const kick = new Float32Array(cells)
  for (let k = 0; k < KICK_PULSES; k++) addPulse(kick, n, randomPulse(rand))
  // a field-wide structure is kicked as strongly as its field: scaled where the fields live (engine.kick)
  const wide = plans.flatMap((p, f) => (p?.kicked ? [f] : []))
  if (!plans.some(Boolean)) return undefined
  // the stability map before, kept where the fields live: the basins compare with it there
  if (before === 'maps') {
    const maps = new Float32Array(cells * engine.fields)
    windows.forEach((w, f) => {
      const map = maps.subarray(f * cells, (f + 1) * cells)
      map.set(w.later.sums)
      meanOf(map, w.later.taken)
    })
    await engine.holdStability(maps)
  }
  // the halves erased, sent as their parts' sums (a mask of every cell was 74 MB at population 1,000)
  const erased = plans.flatMap((p, f) => (p && !p.kicked ? [{ field: f, sums: p.sums }] : []))
  await engine.erase(erased)
  if (wide.length) await engine.kick(kick, wide)
  await engine.step(RECOVERY_STEPS)
  await observeHeld(engine, OBSERVE_STEPS, OBSERVE_SAMPLES)
  // made where the sums are, one read: the kicked fields' basin sums, the erased ones' regrowth sums
  // over their discs (at population 1,000 the window's sums of every field were 37 MB, their means and
  // basins some 0.17 s of the main thread; the discs' cells went up and their sums came back)
  const responses = (sums: PerturbationSums) => {
    const response = new Map<number, Response>(wide.map((f, k) => [f, { basin: basinFrom(sums.basins, k * BASIN_SUMS) }]))
    erased.forEach(({ field }, k) => response.set(field, { regrowth: regrowthFrom(sums.regrowths, k * REGROWTH_SUMS) }))
    return response
  }
  return { query: { pattern: kick, basins: wide, erased }, responses }
}

/**
 * What the material's noise alone makes of each genome's steps: a genome of its steps and dream that
 * injects nothing (a wave of 0, which wakes its field as the genome's injection would), one for the
 * genomes that share both (`of`: each genome's). Every field draws the same numbers by its own steps,
 * so a genome's field and its noise alone are driven by the same noise to the bit.
 */
function noiseAlone(genomes: readonly Genome[]): { quiet: Genome[]; of: number[] } {
  const quiet = new Map<string, { index: number; genome: Genome }>()
  const of = genomes.map((g) => {
    const key = `${g.resonate_steps} ${g.dream}`
    if (!quiet.has(key)) quiet.set(key, { index: quiet.size, genome: { ...g, pulses: [] } })
    return quiet.get(key)!.index
  })
  return { quiet: [...quiet.values()].map((q) => q.genome), of }
}

/**
 * The batch: the genomes (fields 0 to P), their noise alone (P to P + Q: noiseAlone), then every genome
 * again (P + Q to 2P + Q), a rerun under NOISE_PROBE more noise (engine/field/params.ts Rerun), so each
 * field of it runs as in an engine of its own with that noise. One batch, where two engines took twice
 * the dispatches, submits and reads (3 a generation now, 5 then); on the H200 the defaults' time hardly
 * moved, detection being half of it (docs/gpu.md).
 */
function openBatch(genomes: readonly Genome[], quiet: number, c: EvaluationConditions): Promise<Engine> {
  const fields = 2 * genomes.length + quiet
  return c.open({
    size: c.size,
    fields,
    rerun: { from: genomes.length + quiet, noise: NOISE_PROBE },
    material: c.material,
    seed: c.seed,
    timeline_interval: 0,
    recall_history: false,
    // each genome's field rests until it is injected, and keys its noise by its own steps: it starts
    // from the quiet field it would start from alone, not from the noise of the steps before (which the
    // batch's longest genome set), and draws what it would draw alone
    rest_until_injected: true,
    // every field draws the first field's numbers (common random numbers): a genome is evaluated as
    // alone, wherever it lies in the batch, and genomes are compared under the same noise
    draws: Array<number>(fields).fill(0),
  })
}

/**
 * Each of `engine`'s fields injected with its genome's wave so that it has resonated its genome's steps
 * when the longest has, then dreamt in its genome's mode (a batch in which none dreams steps the
 * dream's steps undreamed, so that a genome's evaluation is the same in any batch).
 */
export async function resonate(engine: Engine, genomes: readonly Genome[], waves: readonly Float32Array[], laps?: Laps): Promise<void> {
  const longest = Math.max(...genomes.map((g) => g.resonate_steps))
  const starts = [...new Set(genomes.map((g) => longest - g.resonate_steps))].sort((a, b) => a - b)
  // the genomes that start together are injected together: one sum of the books before and after
  for (const start of starts) {
    await engine.step(start - engine.step_count)
    await engine.injectMany(genomes.map((g, f) => (longest - g.resonate_steps === start ? waves[f] : undefined)))
  }
  await engine.step(longest - engine.step_count)
  laps?.lap('resonate')
  if (genomes.some((g) => g.dream !== 'none')) {
    // the dreams' reports are not read: three reads a batch fewer on the GPU
    await engine.dream(
      genomes.map((g) => g.dream),
      { report: false },
    )
    laps?.lap('dream')
  } else await engine.step(DREAM_STEPS)
}

/**
 * The batch on `engine` (closed at the end): fields [0, P) are the genomes as they are, clean, and are
 * perturbed after the windows; fields [P, P + Q) their noise alone (`alone`), only recorded; fields
 * [P + Q, 2P + Q) their rerun under noise, whose structures are only found (compared with the clean
 * ones' as first found).
 */
async function runBatch(
  engine: Engine,
  genomes: readonly Genome[],
  alone: ReturnType<typeof noiseAlone>,
  waves: readonly Float32Array[],
  c: EvaluationConditions,
  laps: Laps,
): Promise<Batch> {
  const population = genomes.length
  const rerunFrom = population + alone.quiet.length
  // what detection named, made on the engine: where the batch fails first, it closes once that is made
  let gathering: Promise<unknown> | undefined
  // the candidates' batch (copiesOf): closed at the end where its answers were never taken
  let first: Promise<Perturbed> | undefined
  try {
    const nothing = new Float32Array(engine.size * engine.size)
    const [all, allWaves] = [
      [...genomes, ...alone.quiet, ...genomes],
      [...waves, ...alone.quiet.map(() => nothing), ...waves],
    ]
    await resonate(engine, all, allWaves, laps)
    const detector = c.detector ?? IN_THREAD
    // the retention is the clean fields' (the books as the windows end)
    const { windows, release, naming, books } = await recorded(engine, 1, { detector, laps, books: true, quiet: [population, rerunFrom] })
    gathering = naming?.then((n) => n.submitted)
    // handled here, awaited at the end: it failing while the perturbation is queued must not end the process
    gathering?.catch(() => {})
    const clean = windows.slice(0, population)
    // on the GPU the clean fields' candidates are perturbed at once, from the sums the windows came back
    // with, while detection names the cells it reads (their answers ride on the device's next read)
    const candidates = naming && detector.candidates(clean)
    // the stability map before, which both batches copy: the batch's sums, still the windows' later maps
    const held = candidates && engine.holdStability()
    const copies = candidates && copiesOf(candidates, engine.size)
    first = held?.then(() => perturbedApart(engine, copies!, clean, { ride: true }))
    first?.catch(() => {})
    const { reads, submitted } = naming ? await laps.timed('cells', naming) : {}
    // then the parts detection plans on in the fields whose candidates were not complete: their
    // read brings back the candidates' answers and what detection named, and where there are none the
    // candidates' answers are read with what it named
    const answering =
      first &&
      reads &&
      submitted &&
      answersOf(engine, clean, { candidates: candidates!, copies: copies!, held: held!, first, reads, submitted })
    answering?.catch(() => {})
    const back = submitted && (answering ?? Promise.resolve()).then(() => submitted).then((take) => take())
    back?.catch(() => {})
    // a window whose detection reads nothing more than came back with it is detected at once (the
    // rerun's while the device runs the clean fields' perturbation), the others' once that is back
    const named = (f: number) => reads !== undefined && (reads[f].ends.length > 0 || reads[f].modes.length > 0)
    const [detected, shaken] = [0, rerunFrom].map((from) =>
      firstFound(detector, windows.slice(from, from + population), (k) => named(from + k), back),
    )
    // handled now, awaited below: one failing while the clean fields are perturbed must not end the process
    for (const d of [detected, shaken]) d.catch(() => {})
    const { found, answered } =
      candidates && reads && answering
        ? await perturbedFirst(engine, clean, { candidates, reads, answering }, { back, detected, laps })
        : await foundFirst(engine, clean, detected, laps)
    const retention = (await books!()).slice(0, population).map((b) => (b.injected > 0 ? Math.max(0, b.energy) / b.injected : 0))
    laps.lap('perturb')
    return {
      windows: clean,
      quiet: alone.of.map((q) => windows[population + q]),
      found,
      answered,
      shaken: await laps.timed('detect', shaken),
      retention,
      release,
      times: laps.ms,
    }
  } finally {
    // not on a closed engine's memory, and no ride of it left waiting on the device (its close drops them)
    await gathering?.catch(() => {})
    await first?.then(
      (batch) => batch.close(),
      () => {},
    )
    engine.destroy()
  }
}

/**
 * Each window's first structure: at once where `waits` says detection reads nothing but what came back
 * with the window, after `back` (what it named, taken into the windows) for the others.
 */
async function firstFound(
  detector: Detector,
  windows: readonly Window[],
  waits: (k: number) => boolean,
  back: Promise<void> | undefined,
): Promise<(Structure | undefined)[]> {
  const [now, later]: number[][] = [[], []]
  windows.forEach((_, k) => (back && waits(k) ? later : now).push(k))
  const first = (ks: number[]) =>
    ks.length
      ? detector.first(
          ks.map((k) => windows[k]),
          1,
        )
      : []
  const [atOnce, after] = await Promise.all([first(now), later.length ? back!.then(() => first(later)) : []])
  const found = new Array<Structure | undefined>(windows.length)
  now.forEach((k, i) => (found[k] = atOnce[i]))
  later.forEach((k, i) => (found[k] = after[i]))
  return found
}

/** What the clean fields' structures wait on: what detection named taken into the windows (where it named any), and detection. */
interface Finding {
  back: Promise<void> | undefined
  detected: Promise<(Structure | undefined)[]>
  laps: Laps
}

/** The clean fields' structures found, then perturbed: where the window's planes are at hand (the CPU). */
async function foundFirst(engine: Engine, clean: readonly Window[], detected: Promise<(Structure | undefined)[]>, laps: Laps) {
  const found = await laps.timed('detect', detected)
  // the stability map before: the batch's sums, still those of the windows' later maps
  await engine.holdStability()
  const plans = plansOf(engine.size, found)
  // in place: a batch extracted on the CPU backend starts helper threads of its own, which its first
  // step waits for (17 to 20 ms for one on 2 cores, where the extract still paid: the README's evolve
  // 8.1 s against 8.5 to 8.9); every field nothing perturbs (the noise alone, the rerun, a clean field
  // with no structure) rests instead, so the steps cost only the fields perturbed
  if (plans.some(Boolean)) await engine.rest([...Array(engine.fields).keys()].filter((f) => !plans[f]))
  const answered = answeredBy(found, plans, await perturbPlans(engine, plans, clean, 'held'))
  laps.lap('perturb')
  return { found, answered }
}

/** Per clean field of side n, a copy for each of its candidates (Detector.candidates), planned on that part. */
function copiesOf(candidates: readonly Candidates[], n: number): Copy[] {
  return candidates.flatMap((c, field) => c.parts.map((p) => ({ field, root: p.root, plan: planFor(p.sums.cells / (n * n), p.sums) })))
}

/**
 * Per field whose candidates were not complete (more held than the table has room for, or the host labelled its map), the part detection plans on
 * (cellsRead's `planned`: the first that holds, over every part) where it is none of them.
 */
function plannedPast(candidates: readonly Candidates[], reads: readonly WindowReads[]): Copy[] {
  return candidates.flatMap((c, field) => {
    const p = reads[field].planned
    return !c.complete && p && !c.parts.some((q) => q.root === p.cell) ? [{ field, root: p.cell, plan: planFor(p.area, p.sums) }] : []
  })
}

/** What the clean fields' perturbation waits on once detection has named its cells. */
interface Answering {
  candidates: readonly Candidates[]
  /** The stability map before, held (each batch extracted copies it). */
  held: Promise<void>
  /** A copy a candidate (copiesOf). */
  copies: readonly Copy[]
  /** Their batch, the answers riding. */
  first: Promise<Perturbed>
  reads: readonly WindowReads[]
  /** What detection named, submitted (its ride waiting). */
  submitted: Promise<unknown>
}

/**
 * Every copy perturbed and its answer: the candidates', and those of the parts planned past them
 * (plannedPast), perturbed now in a batch of their own whose read brings back the candidates' answers
 * and what detection named (both ride); where there are none, the candidates' answers are read then,
 * with what it named.
 */
async function answersOf(engine: Engine, clean: readonly Window[], { candidates, copies, held, first, reads, submitted }: Answering) {
  const past = plannedPast(candidates, reads)
  await held
  // read once the candidates' answers and what detection named wait to ride
  const ready = Promise.all([first, submitted])
  // handled here: where nothing is planned past the candidates it is not awaited, and the failure shows below
  ready.catch(() => {})
  const second = await perturbedApart(engine, past, clean, { readAfter: ready })
  // read already: taken first, so that it closes whatever befalls the candidates' take
  const pastAnswers = await second.take()
  await submitted
  return { copies: [...copies, ...past], answers: [...(await (await first).take()), ...pastAnswers] }
}

/** The clean fields' candidates, what detection named of their windows, and every copy's answer (answersOf). */
interface Perturbing {
  candidates: readonly Candidates[]
  reads: readonly WindowReads[]
  answering: Promise<{ copies: Copy[]; answers: Response[] }>
}

/**
 * The clean fields' structures, found while the device runs the perturbation of each field's candidates
 * and of the parts planned past them (`answering`: answersOf), so that the recovery steps run while
 * detection runs (docs/detection.md item 6, "every candidate perturbed"): each structure takes the
 * answer of its part's copy. Where its part was none of them (the candidates were not complete, and the
 * spectra classed a part past them and past the one planned there), that field is perturbed again where the structure is,
 * extracted anew from the batch, which the tries before left as it was: the same steps with the same
 * noise, so the same answers as perturbing after detection.
 */
async function perturbedFirst(
  engine: Engine,
  clean: readonly Window[],
  { candidates, reads, answering }: Perturbing,
  { back, detected, laps }: Finding,
) {
  const n = engine.size
  const { copies, answers } = await laps.timed('perturb', answering)
  if (back !== undefined) await laps.timed('gather', back)
  const found = await laps.timed('detect', detected)
  const response = new Map<number, Response>()
  copies.forEach((c, k) => found[c.field]?.cells[0] === c.root && response.set(c.field, answers[k]))
  const wrong = found.flatMap((s, f) => (s && !response.has(f) ? [f] : []))
  // detection's first structure is one of a field's candidates wherever they are complete
  // (candidateTable), and the part cellsRead plans on where its shape decides it
  const broken = wrong.find((f) => candidates[f].complete || reads[f].planned?.decided)
  if (broken !== undefined)
    throw new CrystalError('internal', `detection found a structure in field ${broken} that is none of the parts planned on there`)
  if (wrong.length) {
    const again = await (
      await perturbedApart(
        engine,
        wrong.map((f) => ({ field: f, plan: planOf(n, found[f]!) })),
        clean,
      )
    ).take()
    wrong.forEach((f, k) => response.set(f, again[k]))
    laps.lap('again')
  }
  return { found, answered: found.map((s, f) => s && withResponse(s, response.get(f)!)) }
}

/**
 * A structure's persistence (persistenceOf): from the device's sums where it is one of the window's
 * first parts (PlaneSource.top, on the GPU backend), else from its cells here.
 */
function persistenceAt(spectra: WindowSpectra, structure: Structure, later: Later): number {
  const sustain = structure.features.sustain
  const device = spectra.source.top?.()?.parts.find((p) => p.root === structure.cells[0])?.later
  return device ? persistenceFrom(device, sustain) : persistenceOf(spectra.stabilityAt(structure.cells), structure.cells, later, sustain)
}

/** How alike a structure and its counterpart under other conditions are: signature cosine, halved if the class changed. */
export function likenessOf(s: Structure, other: Structure): number {
  return Math.max(0, cosine(s.signature, other.signature)) * (other.class === s.class ? 1 : 0.5)
}

export async function evaluate(genomes: readonly Genome[], c: EvaluationConditions): Promise<Evaluation[]> {
  const start = performance.now()
  // each genome's pulses (on the detection pool's threads where it has them) while the batch's engine
  // opens: a first generation starts the pool's threads and the device's kernels, some 0.3 s and 1 s
  // on the H200 box, one after the other before
  let wavesMs = 0
  const wavesMade = (c.detector ?? IN_THREAD).waves(genomes, c.size).then((w) => {
    wavesMs = performance.now() - start
    return w
  })
  // handled now, awaited below: a pool that fails while the engine opens must not end the process
  wavesMade.catch(() => {})
  const laps = new Laps()
  const alone = noiseAlone(genomes)
  const engine = await openBatch(genomes, alone.quiet.length, c)
  // a first generation's later kernels compile off this thread while its steps run and the pool works
  engine.compileAhead(genomes.some((g) => g.dream !== 'none') ? ['inject', 'dream', 'record', 'perturb'] : ['inject', 'record', 'perturb'])
  laps.lap('open')
  let waves: Float32Array[]
  try {
    waves = await wavesMade
  } catch (e) {
    engine.destroy()
    throw e
  }
  // the next phase counts from the waves' arrival: the phases add up to no more than the whole
  laps.restart()
  const batch = await runBatch(engine, genomes, alone, waves, c, laps)
  const evaluations = genomes.map((_, f): Evaluation => {
    const { spectra, later } = batch.windows[f]
    const structure = batch.answered[f]
    if (!structure || !aboveNoise(structure.cells, spectra, batch.quiet[f].spectra))
      return { structure: undefined, persistence: 0, noise_tolerance: 0, energy_retention: batch.retention[f] }
    // the rerun is not perturbed: compare it with the structure as first found
    const shaken = batch.shaken[f]
    return {
      structure,
      persistence: persistenceAt(spectra, structure, later),
      noise_tolerance: shaken ? likenessOf(batch.found[f]!, shaken) : 0,
      energy_retention: batch.retention[f],
    }
  })
  // the windows are read no more: the next generation's read-backs take their memory (no fresh memory to touch)
  batch.release()
  c.onTimes?.({ waves: wavesMs, batch: batch.times, total: performance.now() - start })
  return evaluations
}
