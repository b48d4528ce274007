// Evolutionary discovery of persistent structures (docs/discovery.md): MAP-Elites over a grid of
// descriptors measured from the dynamics (archive.ts). Each generation evaluates a batch of genomes
// mutated from the archive's elites plus a share of random ones; what
// persists enters its cell when it beats the elite there; at the end the elites are offered to the
// registry, whose novelty check keeps what is new. MERGE and SPLIT derive genomes from primitives.
import type { GenerationReport, RegisteredArchiveReport } from '../contracts/api.js'
import type { ClassToken, Genome, Primitive } from '../contracts/registry.js'
import type { Material } from '../contracts/material.js'
import { CrystalError } from '../errors.js'
import type { Engine, EngineOptions } from '../field/engine.js'
import { quality, type Candidate, type RegisterOutcome, type Registry } from '../registry/registry.js'
import { rng } from '../util/rng.js'
import { Archive, cellKey, descriptorsOf, registeredArchive, type Elite } from './archive.js'
import type { Detector } from './detector.js'
import { evaluate, type Evaluation, type EvaluationTimes } from './evaluate.js'
import { MAX_PULSES, mutate, randomGenome, type GenomeBounds } from './genome.js'

/** Share of each MAP-Elites generation drawn at random rather than bred (keeps finding new cells). */
export const RANDOM_SHARE = 0.1

export type SearchKind = 'map_elites' | 'random'

export interface DiscoveryOptions {
  material: Material
  generations: number
  population: number
  size: number
  seed: number
  /** Where finds go: the registry on disk, or one reached over the network (a browser tab's). */
  registry: Pick<Registry, 'list' | 'register'>
  open: (o: EngineOptions) => Promise<Engine>
  /** Where each generation's structures are detected (detector.ts): on this thread unless given (Node: a DetectPool). */
  detector?: Detector
  /** Only structures at least this persistent enter the archive. */
  min_persistence?: number
  bounds?: GenomeBounds
  /** MAP-Elites (the default) or random search on the same budget (the benchmark's control). */
  search?: SearchKind
  /** false: fill the archive and report, register nothing (the benchmark). */
  register?: boolean
  onProgress?: (p: DiscoveryProgress) => void
  /** Where each generation's time went (1-based generation; evaluate.ts EvaluationTimes). */
  onTimes?: (generation: number, t: EvaluationTimes) => void
  /** Stops after the current generation when it returns true (Ctrl-C in the CLI). */
  shouldStop?: () => boolean
}

/** One generation's figures, as the evolve job reports them (engine/contracts/api.ts). */
export type DiscoveryProgress = GenerationReport

export interface DiscoveryResult {
  generations_run: number
  evaluated: number
  registered: Primitive[]
  rejected_duplicates: number
  /** Best fitness of any genome in the run. */
  best_fitness: number
  /** The search's own archive: its QD-score, coverage and elites (including elites novelty then turned away). */
  qd_score: number
  coverage: number
  elites: number
  /**
   * The material's registered archive once this run's finds are registered (every run's primitives,
   * the fittest per cell: the archive map's figures); null when the run registers nothing by design.
   */
  registered_archive: RegisteredArchiveReport | null
  /** The archive's elites per class (classes with none left out). */
  elites_by_class: Partial<Record<ClassToken, number>>
}

export const DEFAULT_BOUNDS: GenomeBounds = { min_steps: 100, max_steps: 600 }
export const DEFAULT_MIN_PERSISTENCE = 0.2

interface Member {
  genome: Genome
  /** The elite it was mutated from (none for a random genome). */
  parents: Member[]
  /** Curiosity (Cully and Demiris, 2018): +1 each time a child of it entered the archive, -0.5 each time one did not. */
  curiosity: number
  evaluation?: Evaluation
  fitness: number
  generation: number
  id?: string
}

function check(o: DiscoveryOptions): void {
  const whole = (name: string, v: number, lo: number, hi: number) => {
    if (!Number.isInteger(v) || v < lo || v > hi)
      throw new CrystalError('bad_argument', `${name} must be a whole number from ${lo} to ${hi}, got ${String(v)}`, { field: name })
  }
  whole('generations', o.generations, 1, 10_000)
  whole('population', o.population, 2, 4096)
  whole('seed', o.seed, 0, 2 ** 32 - 1)
}

/** Fitness is the registry's quality: persistence and noise tolerance (novelty is the archive's job). */
export function fitnessOf(e: Evaluation): number {
  return e.structure ? quality(e) : 0
}

function candidateOf(genome: Genome, lineage: string[], e: Evaluation, material: string): Candidate {
  const s = e.structure!
  return {
    class: s.class,
    persistence: e.persistence,
    noise_tolerance: e.noise_tolerance,
    material,
    lineage,
    signature: s.signature,
    hash: s.hash,
    genome,
    metrics: { fitness: fitnessOf(e), confidence: s.confidence, energy_retention: e.energy_retention, ...s.features },
  }
}

/**
 * The next batch: random genomes for random search or an empty archive; else mutants of elites, each
 * the more curious of two drawn at random (so elites whose children keep finding new or better cells
 * breed more), with a random share. A child has one parent: crossing two elites of different cells
 * (isoline variation) made children no likelier to find a cell than random genomes (docs/discovery.md).
 */
function nextBatch(archive: Archive<Member>, o: DiscoveryOptions, rand: () => number, bounds: GenomeBounds, generation: number): Member[] {
  const elites = archive.elites()
  const pick = () => {
    const [a, b] = [elites[Math.floor(rand() * elites.length)].item, elites[Math.floor(rand() * elites.length)].item]
    return b.curiosity > a.curiosity ? b : a
  }
  return Array.from({ length: o.population }, () => {
    if (o.search === 'random' || !elites.length || rand() < RANDOM_SHARE)
      return { genome: randomGenome(rand, bounds), parents: [], curiosity: 0, fitness: 0, generation }
    const parent = pick()
    return { genome: mutate(parent.genome, rand, bounds), parents: [parent], curiosity: 0, fitness: 0, generation }
  })
}

/** Ids of a member's nearest registered ancestors. */
function lineageOf(m: Member): string[] {
  return [...new Set(m.parents.flatMap((p) => (p.id ? [p.id] : lineageOf(p))))]
}

/**
 * Offers the elites to the registry oldest first, a generation at a time, so that an elite's lineage
 * can name the elites it descends from that were registered before it.
 */
async function registerElites(elites: Elite<Member>[], o: DiscoveryOptions): Promise<{ registered: Primitive[]; rejected: number }> {
  const ordered = [...elites].sort((a, b) => a.item.generation - b.item.generation || cellKey(a.cell).localeCompare(cellKey(b.cell)))
  const registered: Primitive[] = []
  let rejected = 0
  for (let i = 0; i < ordered.length; ) {
    const group = ordered.filter((e) => e.item.generation === ordered[i].item.generation).map((e) => e.item)
    i += group.length
    const outcome = await o.registry.register(group.map((m) => candidateOf(m.genome, lineageOf(m), m.evaluation!, o.material.name)))
    group.forEach((m, k) => (m.id = outcome.assigned[k] ?? undefined))
    registered.push(...outcome.registered)
    rejected += outcome.rejected.length
  }
  return { registered, rejected }
}

export async function discover(o: DiscoveryOptions): Promise<DiscoveryResult> {
  check(o)
  const bounds = o.bounds ?? DEFAULT_BOUNDS
  const minPersistence = o.min_persistence ?? DEFAULT_MIN_PERSISTENCE
  const rand = rng(o.seed)
  const archive = new Archive<Member>()
  let evaluated = 0
  let best = 0
  let generation = 0
  let result = { registered: [] as Primitive[], rejected: 0 }
  while (generation < o.generations) {
    const members = nextBatch(archive, o, rand, bounds, generation)
    const evaluations = await evaluate(
      members.map((m) => m.genome),
      {
        size: o.size,
        material: o.material,
        seed: o.seed,
        open: o.open,
        detector: o.detector,
        onTimes: o.onTimes && ((t) => o.onTimes?.(generation + 1, t)),
      },
    )
    members.forEach((m, i) => {
      const e = (m.evaluation = evaluations[i])
      m.fitness = fitnessOf(e)
      const entered = !!e.structure && e.persistence >= minPersistence && archive.offer(descriptorsOf(e.structure), m.fitness, m)
      for (const p of m.parents) p.curiosity += entered ? 1 : -0.5
    })
    evaluated += members.length
    generation++
    const last = generation >= o.generations || o.shouldStop?.() === true
    if (last && o.register !== false) result = await registerElites(archive.elites(), o)
    const fitness = members.map((m) => m.fitness)
    best = Math.max(best, ...fitness)
    o.onProgress?.({
      generation,
      generations: o.generations,
      best_fitness: Math.max(...fitness),
      mean_fitness: fitness.reduce((a, b) => a + b, 0) / fitness.length,
      qd_score: archive.qd_score,
      coverage: archive.coverage,
      elites: archive.size,
      registered_this_generation: result.registered.length,
      registered_total: result.registered.length,
    })
    if (last) break
  }
  const elites_by_class: DiscoveryResult['elites_by_class'] = {}
  for (const { cell } of archive.elites()) elites_by_class[cell.class] = (elites_by_class[cell.class] ?? 0) + 1
  return {
    generations_run: generation,
    evaluated,
    registered: result.registered,
    rejected_duplicates: result.rejected,
    best_fitness: best,
    qd_score: archive.qd_score,
    coverage: archive.coverage,
    elites: archive.size,
    elites_by_class,
    registered_archive: o.register === false ? null : registeredArchive(await o.registry.list(), o.material.name).report,
  }
}

/** MERGE: the two genomes' pulses interfere in one field (alternating, at most six), the longer resonance and the deeper dream. */
export function mergeGenomes(a: Genome, b: Genome): Genome {
  const pulses: Genome['pulses'] = []
  for (let i = 0; pulses.length < MAX_PULSES && (i < a.pulses.length || i < b.pulses.length); i++) {
    if (i < a.pulses.length) pulses.push(a.pulses[i])
    if (i < b.pulses.length && pulses.length < MAX_PULSES) pulses.push(b.pulses[i])
  }
  const depth = { none: 0, light: 1, deep: 2 } as const
  return {
    pulses,
    resonate_steps: Math.max(a.resonate_steps, b.resonate_steps),
    dream: depth[a.dream] >= depth[b.dream] ? a.dream : b.dream,
  }
}

/**
 * SPLIT: the first half of the pulses and the rest become two genomes; a single pulse splits into two
 * of half the amplitude, one radius to either side of it.
 */
export function splitGenome(g: Genome): [Genome, Genome] {
  if (g.pulses.length === 1) {
    const p = g.pulses[0]
    const half = (dx: number) => ({ ...p, x: Math.min(1, Math.max(0, p.x + dx)), amplitude: p.amplitude / 2 })
    return [
      { ...g, pulses: [half(-p.radius)] },
      { ...g, pulses: [half(p.radius)] },
    ]
  }
  const cut = Math.ceil(g.pulses.length / 2)
  return [
    { ...g, pulses: g.pulses.slice(0, cut) },
    { ...g, pulses: g.pulses.slice(cut) },
  ]
}

export interface DeriveOptions {
  registry: Registry
  size: number
  seed: number
  material: Material
  open: (o: EngineOptions) => Promise<Engine>
}

/**
 * What became of one derived genome (MERGE's child, each of SPLIT's halves): registered under `id`;
 * `no_structure`, its evaluation found none to register; `duplicate` of a held primitive; or
 * `pruned`, registered and at once removed again by the registry's caps.
 */
export type DerivedChild =
  | { index: number; outcome: 'registered'; id: string }
  | { index: number; outcome: 'no_structure' }
  | { index: number; outcome: 'duplicate'; duplicate_of: string; similarity: number }
  | { index: number; outcome: 'pruned' }

/**
 * The registry's outcome, with `assigned` and each rejection's `index` counted over the derived
 * genomes (not over those offered), their evaluations, and what became of each (`children`).
 */
export type Derived = RegisterOutcome & { evaluations: Evaluation[]; children: DerivedChild[] }

/** Evaluates derived genomes and registers those with a structure; lineage names the parents. */
async function deriveAndRegister(genomes: Genome[], lineage: string[], o: DeriveOptions): Promise<Derived> {
  const evaluations = await evaluate(genomes, { size: o.size, material: o.material, seed: o.seed, open: o.open })
  // the genome each offer is of: a genome without a structure is not offered
  const offered = genomes.flatMap((_, i) => (evaluations[i].structure ? [i] : []))
  const offers = offered.map((i) => candidateOf(genomes[i], lineage, evaluations[i], o.material.name))
  const out = await o.registry.register(offers)
  const rejected = out.rejected.map((r) => ({ ...r, index: offered[r.index] }))
  const assigned: (string | null)[] = genomes.map(() => null)
  out.assigned.forEach((id, k) => (assigned[offered[k]] = id))
  const children = genomes.map((_, index): DerivedChild => {
    const k = offered.indexOf(index)
    if (k < 0) return { index, outcome: 'no_structure' }
    const id = out.assigned[k]
    if (id) return { index, outcome: 'registered', id }
    const r = rejected.find((r) => r.index === index)
    return r ? { index, outcome: 'duplicate', duplicate_of: r.duplicate_of, similarity: r.similarity } : { index, outcome: 'pruned' }
  })
  return { ...out, assigned, rejected, evaluations, children }
}

export async function merge(aId: string, bId: string, o: DeriveOptions): Promise<Derived> {
  const [a, b] = [await o.registry.get(aId), await o.registry.get(bId)]
  return deriveAndRegister([mergeGenomes(a.genome, b.genome)], [a.id, b.id], o)
}

export async function split(id: string, o: DeriveOptions): Promise<Derived> {
  const parent = await o.registry.get(id)
  return deriveAndRegister(splitGenome(parent.genome), [parent.id], o)
}
