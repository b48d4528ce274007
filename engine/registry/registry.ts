// The registry of primitives (DESIGN.md section 6): novelty by signature similarity within a class,
// serials never reused, caps that drop the lowest quality first, and similarity search. Pure logic
// over a RegistryStore; the store decides where the file lives and how writes are made safe.
import { REGISTRY_FORMAT, type ClassToken, type Genome, type Primitive, type RegistryFile } from '../contracts/registry.js'
import { CrystalError } from '../errors.js'
import { canonicalAndHash } from '../util/canonical.js'
import { cosine, directionProblem } from '../util/vector.js'

export interface RegistryLimits {
  /** Per class x material (SVC_CRYSTAL_BUCKET_CAP). */
  bucket_cap: number
  /** In all (SVC_CRYSTAL_MAX_PRIMITIVES). */
  max_primitives: number
  /**
   * Cosine similarity of signatures (same class) at or above which a candidate is a duplicate. 0.9:
   * the same genome under another noise seed reaches it in at least 95% of cases, 0.97 only in about
   * two thirds (docs/discovery.md has the figures).
   */
  novelty_threshold: number
}

export const DEFAULT_LIMITS: RegistryLimits = { bucket_cap: 150, max_primitives: 5000, novelty_threshold: 0.9 }

/** Where the registry is kept. `update` is a read-modify-write under the store's lock. */
export interface RegistryStore {
  read(): Promise<RegistryFile>
  update<T>(change: (current: RegistryFile) => Promise<{ next: RegistryFile | null; result: T }>): Promise<T>
}

/** What discovery (or an import) offers for registration. */
export interface Candidate {
  class: ClassToken
  persistence: number
  noise_tolerance: number
  material: string
  lineage: string[]
  signature: number[]
  hash: string
  genome: Genome
  metrics: Record<string, number>
  provenance?: Primitive['provenance']
  /** Imports keep their origin's uuid (the cross-node identity); new finds get a fresh one. */
  uuid?: string
}

export interface Rejection {
  index: number
  reason: 'duplicate'
  duplicate_of: string
  similarity: number
}

export interface Removal {
  id: string
  reason: 'bucket_cap' | 'max_primitives'
  quality: number
}

export interface RegisterOutcome {
  /** Per candidate, in order: the id it was registered under, or null (a duplicate, or pruned at once by the caps). */
  assigned: (string | null)[]
  registered: Primitive[]
  rejected: Rejection[]
  pruned: Removal[]
}

/** The documented quality mix that caps rank by: persistence counts more than noise tolerance. */
export function quality(p: { persistence: number; noise_tolerance: number }): number {
  return 0.7 * p.persistence + 0.3 * p.noise_tolerance
}

/** blake3 of the canonical (RFC 8785) JSON of the primitives array. */
export async function contentHash(primitives: readonly Primitive[]): Promise<string> {
  return (await canonicalAndHash(primitives)).hash
}

export async function emptyRegistry(): Promise<RegistryFile> {
  return { format: REGISTRY_FORMAT, next_serial: 1, content_hash: await contentHash([]), primitives: [] }
}

export function serialId(serial: number): string {
  return `CRY-${String(serial).padStart(6, '0')}`
}

/** The most similar held primitive of the same class, if it is similar enough to be a duplicate. */
export function findDuplicate(
  held: readonly Primitive[],
  c: Pick<Candidate, 'class' | 'signature'>,
  threshold: number,
): { id: string; similarity: number } | undefined {
  let best: { id: string; similarity: number } | undefined
  for (const p of held) {
    if (p.class !== c.class) continue
    const similarity = cosine(p.signature, c.signature)
    if (similarity >= threshold && (!best || similarity > best.similarity)) best = { id: p.id, similarity }
  }
  return best
}

/** Removes the lowest-quality primitives until every bucket and the total are within the limits. */
export function pruneToCaps(primitives: readonly Primitive[], limits: RegistryLimits): { kept: Primitive[]; removed: Removal[] } {
  // within every cap (the usual case): nothing to rank
  if (primitives.length <= limits.max_primitives) {
    const counts = new Map<string, number>()
    let over = false
    for (const p of primitives) {
      const bucket = `${p.class}\u0000${p.material}`
      const c = (counts.get(bucket) ?? 0) + 1
      counts.set(bucket, c)
      if (c > limits.bucket_cap) over = true
    }
    if (!over) return { kept: [...primitives], removed: [] }
  }
  const removed: Removal[] = []
  const byQuality = [...primitives].sort((a, b) => quality(b) - quality(a) || a.id.localeCompare(b.id))
  const buckets = new Map<string, number>()
  const kept: Primitive[] = []
  for (const p of byQuality) {
    const bucket = `${p.class}\u0000${p.material}`
    const count = buckets.get(bucket) ?? 0
    if (count >= limits.bucket_cap) removed.push({ id: p.id, reason: 'bucket_cap', quality: quality(p) })
    else if (kept.length >= limits.max_primitives) removed.push({ id: p.id, reason: 'max_primitives', quality: quality(p) })
    else {
      buckets.set(bucket, count + 1)
      kept.push(p)
    }
  }
  const keep = new Set(kept.map((p) => p.id))
  return { kept: primitives.filter((p) => keep.has(p.id)), removed }
}

export class Registry {
  constructor(
    private readonly store: RegistryStore,
    readonly limits: RegistryLimits = DEFAULT_LIMITS,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** The whole registry file (format, next serial, content hash, primitives). */
  file(): Promise<RegistryFile> {
    return this.store.read()
  }

  async list(): Promise<Primitive[]> {
    return (await this.store.read()).primitives
  }

  /** The primitive of that id or uuid; `field` names the argument in the not_found error (a query's `similar_to`). */
  async get(id: string, field = 'id'): Promise<Primitive> {
    // as typed: `cry-000001` is CRY-000001, and a uuid in capitals its lower-case self
    const asked = id.toUpperCase()
    const p = (await this.list()).find((q) => q.id === asked || q.uuid.toUpperCase() === asked)
    if (!p) throw new CrystalError('not_found', `no primitive ${id} in the registry`, { field })
    return p
  }

  /**
   * The k held primitives most similar to `id` (by signature), most similar first. A primitive kept
   * from before signatures were checked on registration may have none to compare by (all zeros):
   * ranking by it would only give id order, so that is refused, naming it.
   */
  async similar(id: string, k = 5, field = 'id'): Promise<{ primitive: Primitive; similarity: number }[]> {
    const target = await this.get(id, field)
    const problem = directionProblem(target.signature)
    if (problem) {
      throw new CrystalError('bad_argument', `nothing can be ranked by similarity to ${target.id}: its signature ${problem}`, { field })
    }
    return (await this.list())
      .filter((p) => p.id !== target.id)
      .map((primitive) => ({ primitive, similarity: cosine(target.signature, primitive.signature) }))
      .sort((a, b) => b.similarity - a.similarity)
      .slice(0, k)
  }

  /**
   * Registers what is novel, in order: a candidate too similar to a held primitive of its class (or
   * to one registered earlier in the same call) is rejected naming it; an import whose uuid is held
   * is merged once (rejected as a duplicate of that primitive). Then the caps are applied. With
   * `novelty: false` only the uuid check applies (the archivist's way).
   *
   * A signature with no direction (all zeros, a non-finite value, a norm beyond float64) is refused
   * before anything is written: cosine against it is 0 for everything, so it would pass every
   * novelty check and twin itself without end. Every registration comes through here (discovery, the
   * REST route, swarm merges, the archivist), so the check is here; reading a file does not repeat
   * it, so a registry written before the check still loads.
   */
  async register(candidates: readonly Candidate[], options: { novelty?: boolean } = {}): Promise<RegisterOutcome> {
    candidates.forEach((c, index) => {
      const problem = directionProblem(c.signature)
      if (problem) {
        const who = c.uuid ? ` (uuid ${c.uuid})` : ''
        throw new CrystalError('bad_argument', `candidates[${index}]${who}: the signature ${problem}`, {
          field: `candidates[${index}].signature`,
        })
      }
    })
    // an archivist keeps every discovery once by uuid: it skips the similarity check
    const novelty = options.novelty ?? true
    return this.store.update(async (current) => {
      const held = [...current.primitives]
      const byUuid = new Map(held.map((p) => [p.uuid, p]))
      let serial = current.next_serial
      const registered: Primitive[] = []
      const rejected: Rejection[] = []
      const assigned: (string | null)[] = candidates.map(() => null)
      candidates.forEach((c, index) => {
        const sameUuid = c.uuid ? byUuid.get(c.uuid) : undefined
        const duplicate = sameUuid
          ? { id: sameUuid.id, similarity: 1 }
          : novelty
            ? findDuplicate(held, c, this.limits.novelty_threshold)
            : undefined
        if (duplicate) {
          rejected.push({ index, reason: 'duplicate', duplicate_of: duplicate.id, similarity: duplicate.similarity })
          return
        }
        const p: Primitive = {
          id: serialId(serial++),
          uuid: c.uuid ?? crypto.randomUUID(),
          class: c.class,
          persistence: c.persistence,
          noise_tolerance: c.noise_tolerance,
          material: c.material,
          lineage: c.lineage,
          hash: c.hash,
          signature: c.signature,
          provenance: c.provenance ?? null,
          genome: c.genome,
          discovered_at: this.now().toISOString(),
          metrics: c.metrics,
        }
        held.push(p)
        byUuid.set(p.uuid, p)
        registered.push(p)
        assigned[index] = p.id
      })
      const { kept, removed } = pruneToCaps(held, this.limits)
      const gone = new Set(removed.map((r) => r.id))
      const outcome = {
        assigned: assigned.map((id) => (id && !gone.has(id) ? id : null)),
        registered: registered.filter((p) => !gone.has(p.id)),
        rejected,
        pruned: removed,
      }
      if (!registered.length && !removed.length) return { next: null, result: outcome }
      return { next: { ...current, next_serial: serial, primitives: kept, content_hash: await contentHash(kept) }, result: outcome }
    })
  }

  /** Sweeps down to the caps (quality first); with dryRun, reports what would go and changes nothing. */
  prune(dryRun = false): Promise<Removal[]> {
    return this.store.update(async (current) => {
      const { kept, removed } = pruneToCaps(current.primitives, this.limits)
      if (dryRun || !removed.length) return { next: null, result: removed }
      return { next: { ...current, primitives: kept, content_hash: await contentHash(kept) }, result: removed }
    })
  }
}

/** A registry kept in memory (browser tabs, tests, one-off runs). */
export class MemoryRegistryStore implements RegistryStore {
  private file: RegistryFile | undefined
  private queue: Promise<unknown> = Promise.resolve()

  async read(): Promise<RegistryFile> {
    return (this.file ??= await emptyRegistry())
  }

  update<T>(change: (current: RegistryFile) => Promise<{ next: RegistryFile | null; result: T }>): Promise<T> {
    const run = this.queue.then(async () => {
      const { next, result } = await change(await this.read())
      if (next) this.file = next
      return result
    })
    this.queue = run.catch(() => undefined)
    return run
  }
}
