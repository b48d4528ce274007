// Evolutionary discovery of persistent structures (docs/discovery.md). Each generation evaluates the
// whole population as one batch, scores fitness, registers what is persistent and novel, and breeds
// the next generation (two elites, tournament selection, crossover, mutation). MERGE and SPLIT make
// new genomes from registered primitives and register the result with its lineage.
import type { Genome, Primitive } from '../contracts/registry.js'
import type { Material } from '../contracts/material.js'
import { CrystalError } from '../errors.js'
import type { Engine, EngineOptions } from '../field/engine.js'
import { cosine, type Candidate, type RegisterOutcome, type Registry } from '../registry/registry.js'
import { evaluate, type Evaluation } from './evaluate.js'
import { rng } from '../util/rng.js'
import { crossover, MAX_PULSES, mutate, randomGenome, tournament, type GenomeBounds } from './genome.js'

/** Fitness = the documented mix of persistence, noise tolerance and novelty. */
export const FITNESS_MIX = { persistence: 0.6, noise_tolerance: 0.25, novelty: 0.15 } as const
export const ELITES = 2
export const CROSSOVER_RATE = 0.7

export interface DiscoveryOptions {
  material: Material
  generations: number
  population: number
  size: number
  seed: number
  /** Where finds go: the registry on disk, or one reached over the network (a browser tab's). */
  registry: Pick<Registry, 'list' | 'register'>
  open: (o: EngineOptions) => Promise<Engine>
  /** Only structures at least this persistent are registered. */
  min_persistence?: number
  bounds?: GenomeBounds
  onProgress?: (p: DiscoveryProgress) => void
  /** Stops after the current generation when it returns true (Ctrl-C in the CLI). */
  shouldStop?: () => boolean
}

export interface DiscoveryProgress {
  generation: number
  generations: number
  best_fitness: number
  registered_this_generation: number
  registered_total: number
}

export interface DiscoveryResult {
  generations_run: number
  evaluated: number
  registered: Primitive[]
  rejected_duplicates: number
  best_fitness: number
}

export const DEFAULT_BOUNDS: GenomeBounds = { min_steps: 100, max_steps: 600 }
export const DEFAULT_MIN_PERSISTENCE = 0.2

interface Member {
  genome: Genome
  /** Registry ids of the nearest registered ancestors (the genome's own id once registered). */
  lineage: string[]
  evaluation?: Evaluation
  fitness: number
  id?: string
}

function check(o: DiscoveryOptions): void {
  const whole = (name: string, v: number, lo: number, hi: number) => {
    if (!Number.isInteger(v) || v < lo || v > hi) throw new CrystalError('bad_argument', `${name} must be a whole number from ${lo} to ${hi}, got ${String(v)}`, { field: name })
  }
  whole('generations', o.generations, 1, 10_000)
  whole('population', o.population, 2, 4096)
  whole('seed', o.seed, 0, 2 ** 32 - 1)
}

function candidateOf(m: Member, e: Evaluation, material: string, fitness: number, novelty: number): Candidate {
  const s = e.structure!
  return {
    class: s.class,
    persistence: e.persistence,
    noise_tolerance: e.noise_tolerance,
    material,
    lineage: m.lineage,
    signature: s.signature,
    hash: s.hash,
    genome: m.genome,
    metrics: {
      fitness,
      novelty,
      confidence: s.confidence,
      energy_retention: e.energy_retention,
      ...Object.fromEntries(Object.entries(s.features).map(([k, v]) => [k, v])),
    },
  }
}

/**
 * Scores a generation and registers its persistent, novel structures. Selection's novelty is measured
 * against this run's own archive of earlier structures, not the registry, so that a run depends only
 * on its seed: the same run again follows the same path, and the registry rejects all of it as
 * duplicates. Novelty against the registry is what registration checks, and is kept in the metrics.
 */
async function scoreAndRegister(members: Member[], o: DiscoveryOptions, held: Primitive[], archive: { class: string; signature: number[] }[]): Promise<RegisterOutcome> {
  const minPersistence = o.min_persistence ?? DEFAULT_MIN_PERSISTENCE
  const evaluations = await evaluate(
    members.map((m) => m.genome),
    { size: o.size, material: o.material, seed: o.seed, open: o.open },
  )
  const offers: { member: Member; candidate: Candidate }[] = []
  members.forEach((m, i) => {
    const e = evaluations[i]
    m.evaluation = e
    if (!e.structure) {
      m.fitness = 0
      return
    }
    const s = e.structure
    const novelty = (pool: readonly { class: string; signature: number[] }[]) => 1 - Math.max(0, ...pool.filter((p) => p.class === s.class).map((p) => cosine(p.signature, s.signature)))
    m.fitness = FITNESS_MIX.persistence * e.persistence + FITNESS_MIX.noise_tolerance * e.noise_tolerance + FITNESS_MIX.novelty * novelty(archive)
    if (e.persistence >= minPersistence) offers.push({ member: m, candidate: candidateOf(m, e, o.material.name, m.fitness, novelty(held)) })
  })
  for (const m of members) if (m.evaluation?.structure) archive.push(m.evaluation.structure)
  const outcome = await o.registry.register(offers.map((x) => x.candidate))
  offers.forEach(({ member }, i) => {
    const id = outcome.assigned[i]
    if (id) {
      member.id = id
      member.lineage = [id]
    }
  })
  return outcome
}

export async function discover(o: DiscoveryOptions): Promise<DiscoveryResult> {
  check(o)
  const bounds = o.bounds ?? DEFAULT_BOUNDS
  const rand = rng(o.seed)
  let members: Member[] = Array.from({ length: o.population }, () => ({ genome: randomGenome(rand, bounds), lineage: [], fitness: 0 }))
  const registered: Primitive[] = []
  let rejected = 0
  let evaluated = 0
  let best = 0
  let generation = 0
  const archive: { class: string; signature: number[] }[] = []
  for (; generation < o.generations; ) {
    const held = await o.registry.list()
    const outcome = await scoreAndRegister(members, o, held, archive)
    evaluated += members.length
    registered.push(...outcome.registered)
    rejected += outcome.rejected.length
    best = Math.max(best, ...members.map((m) => m.fitness))
    generation++
    o.onProgress?.({ generation, generations: o.generations, best_fitness: best, registered_this_generation: outcome.registered.length, registered_total: registered.length })
    if (generation >= o.generations || o.shouldStop?.()) break
    members = breed(members, rand, bounds)
  }
  return { generations_run: generation, evaluated, registered, rejected_duplicates: rejected, best_fitness: best }
}

function breed(members: Member[], rand: () => number, bounds: GenomeBounds): Member[] {
  const ranked = [...members].sort((a, b) => b.fitness - a.fitness)
  const next: Member[] = ranked.slice(0, ELITES).map((m) => ({ genome: m.genome, lineage: m.lineage, fitness: 0 }))
  while (next.length < members.length) {
    const a = tournament(ranked, rand)
    const b = tournament(ranked, rand)
    const child = rand() < CROSSOVER_RATE ? crossover(a.genome, b.genome, rand, bounds) : { ...a.genome, pulses: a.genome.pulses.map((p) => ({ ...p })) }
    next.push({ genome: mutate(child, rand, bounds), lineage: [...new Set([...a.lineage, ...b.lineage])], fitness: 0 })
  }
  return next
}

/** MERGE: the two genomes' pulses interfere in one field (alternating, at most six), the longer resonance and the deeper dream. */
export function mergeGenomes(a: Genome, b: Genome): Genome {
  const pulses: Genome['pulses'] = []
  for (let i = 0; pulses.length < MAX_PULSES && (i < a.pulses.length || i < b.pulses.length); i++) {
    if (i < a.pulses.length) pulses.push(a.pulses[i])
    if (i < b.pulses.length && pulses.length < MAX_PULSES) pulses.push(b.pulses[i])
  }
  const depth = { none: 0, light: 1, deep: 2 } as const
  return { pulses, resonate_steps: Math.max(a.resonate_steps, b.resonate_steps), dream: depth[a.dream] >= depth[b.dream] ? a.dream : b.dream }
}

/**
 * SPLIT: the first half of the pulses and the rest become two genomes; a single pulse splits into two
 * of half the amplitude, one radius to either side of it.
 */
export function splitGenome(g: Genome): [Genome, Genome] {
  if (g.pulses.length === 1) {
    const p = g.pulses[0]
    const half = (dx: number) => ({ ...p, x: Math.min(1, Math.max(0, p.x + dx)), amplitude: p.amplitude / 2 })
    return [{ ...g, pulses: [half(-p.radius)] }, { ...g, pulses: [half(p.radius)] }]
  }
  const cut = Math.ceil(g.pulses.length / 2)
  return [{ ...g, pulses: g.pulses.slice(0, cut) }, { ...g, pulses: g.pulses.slice(cut) }]
}

export interface DeriveOptions {
  registry: Registry
  size: number
  seed: number
  material: Material
  open: (o: EngineOptions) => Promise<Engine>
}

/** Evaluates derived genomes and registers those with a structure; lineage names the parents. */
async function deriveAndRegister(genomes: Genome[], lineage: string[], o: DeriveOptions): Promise<RegisterOutcome & { evaluations: Evaluation[] }> {
  const evaluations = await evaluate(genomes, { size: o.size, material: o.material, seed: o.seed, open: o.open })
  const offers = genomes.flatMap((genome, i) => {
    const e = evaluations[i]
    if (!e.structure) return []
    const fitness = FITNESS_MIX.persistence * e.persistence + FITNESS_MIX.noise_tolerance * e.noise_tolerance
    return [candidateOf({ genome, lineage, fitness }, e, o.material.name, fitness, 1)]
  })
  return { ...(await o.registry.register(offers)), evaluations }
}

export async function merge(aId: string, bId: string, o: DeriveOptions): Promise<RegisterOutcome & { evaluations: Evaluation[] }> {
  const [a, b] = [await o.registry.get(aId), await o.registry.get(bId)]
  return deriveAndRegister([mergeGenomes(a.genome, b.genome)], [a.id, b.id], o)
}

export async function split(id: string, o: DeriveOptions): Promise<RegisterOutcome & { evaluations: Evaluation[] }> {
  const parent = await o.registry.get(id)
  return deriveAndRegister(splitGenome(parent.genome), [parent.id], o)
}
