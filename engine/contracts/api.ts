// The REST contract (DESIGN.md section 7): request and response schemas for every route. The same
// TypeBox objects are the validation, the serializer, the OpenAPI document and the types.
import { Type, type Static } from '@sinclair/typebox'
import { CLASS_TOKENS, ClassToken, GenomeSchema, PrimitiveSchema, ProvenanceSchema, PulseSchema } from './registry.js'
import { MaterialSchema } from './material.js'
import type { EncodingVersion } from '../encode/text.js'

/** Limits the server enforces; each refusal names the limit. */
/**
 * `program_cell_updates`: what one POST /crystal/run may cost, in cell updates (field steps x N^2,
 * engine/lang/cost.ts): 100,000 steps at N = 128, 25,000 at 256, 1,562 at 1,024.
 */
export const API_LIMITS = {
  body_bytes: 1_048_576,
  steps_per_request: 100_000,
  program_cell_updates: 100_000 * 128 * 128,
  generations: 1000,
  population: 256,
  evolve_size: 256,
  text_length: 10_000,
  program_length: 100_000,
  state_size: 256,
  /** Memories the live field holds: recall tells the memories of one moment apart pair by pair, on the server's thread (docs/api.md). */
  memories: 256,
} as const

/** The side N of a field, for every engine (CLI flags, API bodies and the engine check the same range). */
export const FIELD_SIZE = { minimum: 16, maximum: 4096 } as const

/** A search's defaults, wherever it starts (`crystal evolve`, a server job, a tab). */
export const SEARCH_DEFAULTS = { population: 12, size: 96, seed: 1 } as const

const Finite = (o: { minimum?: number; maximum?: number; description?: string } = {}) => Type.Number(o)

export const WriteBody = Type.Object(
  {
    text: Type.String({ minLength: 1, maxLength: API_LIMITS.text_length }),
    importance: Type.Optional(Finite({ minimum: -10, maximum: 10 })),
  },
  { additionalProperties: false },
)
/** A pulse with the genome's ranges; all but the place may be left out (engine/encode/pulse.ts PULSE_DEFAULTS). */
const P = PulseSchema.properties
export const PulseBody = Type.Object(
  {
    x: P.x,
    y: P.y,
    radius: Type.Optional(P.radius),
    amplitude: Type.Optional(P.amplitude),
    frequency: Type.Optional(P.frequency),
    phase: Type.Optional(P.phase),
  },
  { additionalProperties: false },
)
/** `steps` beyond API_LIMITS.steps_per_request is refused with 413 naming the limit (checked in the handler, not here, so the refusal can say which limit). */
export const StepBody = Type.Object({ steps: Type.Integer({ minimum: 0 }) }, { additionalProperties: false })
export const DreamBody = Type.Object({ mode: Type.Union([Type.Literal('light'), Type.Literal('deep')]) }, { additionalProperties: false })
export const ProbeBody = Type.Object(
  { text: Type.String({ minLength: 1, maxLength: API_LIMITS.text_length }) },
  { additionalProperties: false },
)
export const RecallBody = Type.Object(
  { text: Type.String({ minLength: 1, maxLength: API_LIMITS.text_length }), k: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })) },
  { additionalProperties: false },
)
export const EvolveBody = Type.Object(
  {
    material: Type.String({ minLength: 1, maxLength: 64 }),
    generations: Type.Integer({ minimum: 1 }),
    population: Type.Optional(Type.Integer({ minimum: 2 })),
    seed: Type.Optional(Type.Integer({ minimum: 0, maximum: 4294967295 })),
    size: Type.Optional(Type.Integer({ minimum: FIELD_SIZE.minimum })),
  },
  { additionalProperties: false },
)
export type EvolveRequest = Static<typeof EvolveBody>
export const ConditionsBody = Type.Object(
  {
    material: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    temperature_k: Type.Optional(Finite({ minimum: 0, maximum: 10000 })),
    noise: Type.Optional(Finite({ minimum: 0, maximum: 1 })),
  },
  { additionalProperties: false },
)
export const ConditionsReply = Type.Object({
  material: Type.String(),
  temperature_k: Type.Number(),
  noise: Type.Number(),
  step: Type.Integer(),
})
export const RunBody = Type.Object({ program: Type.String({ maxLength: API_LIMITS.program_length }) }, { additionalProperties: false })

export const Books = Type.Object({
  step: Type.Integer(),
  energy: Type.Number(),
  bulk_loss: Type.Number(),
  boundary_loss: Type.Number(),
  saturation: Type.Number(),
  noise_work: Type.Number(),
  injected: Type.Number(),
})
export type BooksType = Static<typeof Books>

export const MutationReply = Type.Object({ step: Type.Integer(), memories: Type.Integer(), books: Books })
export const DreamReply = Type.Object({
  mode: Type.Union([Type.Literal('light'), Type.Literal('deep'), Type.Literal('none')]),
  steps_observed: Type.Integer(),
  energy_before: Type.Number(),
  energy_after: Type.Number(),
  pruned_fraction: Type.Number(),
  amplified_fraction: Type.Number(),
  mutated_cells: Type.Integer(),
  stability_preview: Type.Array(Type.Number()),
})
export type DreamReport = Static<typeof DreamReply>
/**
 * docs/recall.md: scores are shares of the energy a write would hold; the floor is derived there. A probe's
 * resonance is its best score over the write moments (step null: read at the present, nothing was written).
 */
export const ProbeReply = Type.Object({
  resonance: Type.Number(),
  step: Type.Union([Type.Integer(), Type.Null()]),
  noise_floor: Type.Number(),
})
export type ProbeResult = Static<typeof ProbeReply>
/**
 * One memory recalled (docs/recall.md). `match`: how well the memory answers the query as the field
 * holds it (the ranking key; 1 for the exact text); `strength`: the share of the memory the field still
 * holds, against what it held when written; `score` equals `match`. A hit has both above `noise_floor`.
 */
export const RecallHit = Type.Object({
  rank: Type.Integer(),
  memory: Type.Integer(),
  text: Type.String(),
  importance: Type.Number(),
  step: Type.Integer(),
  match: Type.Number(),
  strength: Type.Number(),
  score: Type.Number(),
  noise_floor: Type.Number(),
})
export type RecallHit = Static<typeof RecallHit>
export const RecallReply = Type.Object({
  hits: Type.Array(RecallHit),
  memories: Type.Integer(),
  capacity: Type.Union([Type.Integer(), Type.Null()]),
  over_capacity: Type.Boolean(),
  reason: Type.Union([Type.String(), Type.Null()]),
})
export type RecallResult = Static<typeof RecallReply>
/**
 * One generation of an evolve (docs/discovery.md): that generation's best and mean fitness, and the
 * MAP-Elites archive's QD-score (sum of its elites' fitness) and coverage (share of its cells filled).
 */
export const GenerationReport = Type.Object({
  generation: Type.Integer(),
  generations: Type.Integer(),
  best_fitness: Type.Number(),
  mean_fitness: Type.Number(),
  qd_score: Type.Number(),
  coverage: Type.Number({ minimum: 0, maximum: 1 }),
  elites: Type.Integer(),
  /** Registration happens once the search ends: 0 until the last generation. */
  registered_this_generation: Type.Integer(),
  registered_total: Type.Integer(),
})
export type GenerationReport = Static<typeof GenerationReport>
/**
 * The registered archive of a material (engine/discovery/archive.ts, registeredArchive): its registered
 * primitives in the MAP-Elites grid, the fittest per cell over every run, as the archive map shows it.
 */
export const RegisteredArchiveReport = Type.Object({
  material: Type.String(),
  /** Sum of the cells' elites' fitness. */
  qd_score: Type.Number(),
  /** Share of the grid's cells that hold a registered primitive. */
  coverage: Type.Number({ minimum: 0, maximum: 1 }),
  /** Cells that hold one. */
  cells: Type.Integer(),
  /** Registered primitives of the material placed in the grid. */
  placed: Type.Integer(),
  /** Older ones without descriptors in their metrics, which cannot be placed. */
  unplaced: Type.Integer(),
})
export type RegisteredArchiveReport = Static<typeof RegisteredArchiveReport>
export const JobSchema = Type.Object({
  id: Type.String(),
  kind: Type.Literal('evolve'),
  status: Type.Union([
    Type.Literal('queued'),
    Type.Literal('running'),
    Type.Literal('done'),
    Type.Literal('failed'),
    Type.Literal('cancelled'),
  ]),
  request: EvolveBody,
  progress: GenerationReport,
  /** Every generation's figures so far, oldest first (the QD curve). */
  history: Type.Array(GenerationReport),
  registered: Type.Array(Type.String()),
  /** Once done: the material's registered archive after this run's finds were registered (the archive map's figures); else null. */
  registered_archive: Type.Union([RegisteredArchiveReport, Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
  started_at: Type.String(),
  finished_at: Type.Union([Type.String(), Type.Null()]),
})
export type Job = Static<typeof JobSchema>
/** An evolve job as it starts (the server's worker or a tab's own search): running, nothing done yet. */
export function runningJob(id: string, request: EvolveRequest): Job {
  return {
    id,
    kind: 'evolve',
    status: 'running',
    request,
    progress: {
      generation: 0,
      generations: request.generations,
      best_fitness: 0,
      mean_fitness: 0,
      qd_score: 0,
      coverage: 0,
      elites: 0,
      registered_this_generation: 0,
      registered_total: 0,
    },
    history: [],
    registered: [],
    registered_archive: null,
    error: null,
    started_at: new Date().toISOString(),
    finished_at: null,
  }
}
/** A job's next generation: its figures become the progress and join the history. */
export function progressed(job: Job, p: GenerationReport): Job {
  return { ...job, progress: p, history: [...job.history, p] }
}
export const RunReply = Type.Object({
  trace: Type.Array(
    Type.Object({
      line: Type.Integer(),
      command: Type.String(),
      source: Type.String(),
      text: Type.String(),
      result: Type.Record(Type.String(), Type.Unknown()),
    }),
  ),
})

/** A discovery made elsewhere (a browser tab's engine) offered to the server's registry. */
export const CandidateSchema = Type.Object(
  {
    class: ClassToken,
    persistence: Type.Number({ minimum: 0, maximum: 1 }),
    noise_tolerance: Type.Number({ minimum: 0, maximum: 1 }),
    material: Type.String({ minLength: 1, maxLength: 64 }),
    lineage: Type.Array(Type.String({ maxLength: 64 }), { maxItems: 64 }),
    signature: Type.Array(Type.Number(), { minItems: 1, maxItems: 4096 }),
    hash: Type.String({ pattern: '^[0-9a-f]{64}$' }),
    genome: GenomeSchema,
    metrics: Type.Record(Type.String(), Type.Number()),
    /** An import from the swarm keeps its origin's uuid and says where it came from. */
    uuid: Type.Optional(Type.String({ pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' })),
    provenance: Type.Optional(ProvenanceSchema),
  },
  { additionalProperties: false },
)
export const SwarmConfigReply = Type.Object({
  /** The bus's websocket address for browser tabs (SVC_NATS_WS_URL), or null when the server has none. */
  ws_url: Type.Union([Type.String(), Type.Null()]),
  announce_floor: Type.Number(),
})
export type SwarmConfig = Static<typeof SwarmConfigReply>
export const RegisterBody = Type.Object(
  { candidates: Type.Array(CandidateSchema, { minItems: 1, maxItems: 256 }) },
  { additionalProperties: false },
)
export const RegisterReply = Type.Object({
  assigned: Type.Array(Type.Union([Type.String(), Type.Null()])),
  registered: Type.Array(Type.String()),
  rejected: Type.Array(Type.Object({ index: Type.Integer(), duplicate_of: Type.String(), similarity: Type.Number() })),
})
/**
 * The text encodings this build reads (engine/encode/text.ts). A field's memories are patterns of the
 * encoding they were written with, so a field keeps its encoding wherever it goes (docs/recall.md).
 */
export const ENCODINGS: readonly EncodingVersion[] = [2, 3]
export const Encoding = Type.Union(
  ENCODINGS.map((v) => Type.Literal(v)),
  { description: 'the text encoding of the memories: writes and recall in this field use it' },
)

export const StateQuery = Type.Object({ size: Type.Optional(Type.Integer({ minimum: 8 })) }, { additionalProperties: false })
export const StateReply = Type.Object({
  step: Type.Integer(),
  size: Type.Integer(),
  field_size: Type.Integer(),
  material: Type.String(),
  temperature_k: Type.Number(),
  backend: Type.String(),
  memories: Type.Integer(),
  encoding: Encoding,
  /** The field downsampled to size x size, row-major. */
  field: Type.Array(Type.Number()),
  books: Books,
  timeline: Type.Array(Books),
})
export type State = Static<typeof StateReply>

/**
 * The whole field as GET /crystal/field gives it, for an engine to resume (engine/field/engine_api.ts
 * SavedField) under the same conditions: u and u_prev as little-endian float32, row-major, base64.
 */
export const FieldReply = Type.Object({
  size: Type.Integer({ minimum: FIELD_SIZE.minimum, maximum: FIELD_SIZE.maximum }),
  step_count: Type.Integer({ minimum: 0 }),
  material: Type.String(),
  temperature_k: Type.Number(),
  noise: Type.Number(),
  encoding: Encoding,
  /** The memories written into the field, at their steps (dream edits since are not part of it). */
  memories: Type.Array(Type.Object({ text: Type.String(), importance: Type.Number(), step: Type.Integer() })),
  u: Type.String({ contentEncoding: 'base64', description: 'size x size float32, little-endian' }),
  prev: Type.String({ contentEncoding: 'base64', description: 'size x size float32, little-endian' }),
})
export type FieldWire = Static<typeof FieldReply>
/** A field in hand: FieldWire with its planes decoded. */
export type FieldPlanes = Omit<FieldWire, 'u' | 'prev'> & { u: Float32Array; prev: Float32Array }

/** Encodes a field for GET /crystal/field. */
export function encodeField(f: FieldPlanes): FieldWire {
  return { ...f, u: toBase64(f.u), prev: toBase64(f.prev) }
}

/** Decodes GET /crystal/field's reply; a plane that is not size x size is refused, naming which. */
export function decodeField(w: FieldWire): FieldPlanes {
  const plane = (name: 'u' | 'prev') => {
    const bytes = Uint8Array.from(atob(w[name]), (c) => c.charCodeAt(0))
    if (bytes.length !== w.size * w.size * 4)
      throw new Error(`the field's ${name} holds ${bytes.length} bytes, not the ${w.size * w.size * 4} of ${w.size} x ${w.size} float32`)
    return new Float32Array(bytes.buffer)
  }
  return { ...w, u: plane('u'), prev: plane('prev') }
}

function toBase64(a: Float32Array): string {
  const bytes = new Uint8Array(a.buffer, a.byteOffset, a.byteLength)
  let text = ''
  // in slices: String.fromCharCode takes its bytes as arguments, and engines cap how many
  for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode(...bytes.subarray(i, i + 0x8000))
  return btoa(text)
}

export const PrimitivesQuery = Type.Object(
  {
    material: Type.Optional(Type.String({ maxLength: 64 })),
    min_persistence: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    similar_to: Type.Optional(Type.String({ maxLength: 64 })),
    class: Type.Optional(Type.Union(CLASS_TOKENS.map((c) => Type.Literal(c)))),
    offset: Type.Optional(Type.Integer({ minimum: 0 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500 })),
    sort: Type.Optional(
      Type.Union([Type.Literal('id'), Type.Literal('persistence'), Type.Literal('noise_tolerance'), Type.Literal('quality')]),
    ),
    order: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')])),
  },
  { additionalProperties: false },
)
export const PrimitiveSchemaRef = PrimitiveSchema
export const PrimitivesReply = Type.Object({
  total: Type.Integer(),
  offset: Type.Integer(),
  limit: Type.Integer(),
  items: Type.Array(PrimitiveSchema),
})
export const IdParams = Type.Object({ id: Type.String({ maxLength: 64 }) })
export const ProgramErrorSchema = Type.Object({
  line: Type.Integer(),
  column: Type.Integer(),
  message: Type.String(),
  hint: Type.Optional(Type.String()),
})
export type ProgramError = Static<typeof ProgramErrorSchema>
export const MaterialsReply = Type.Array(
  Type.Composite([MaterialSchema, Type.Object({ source: Type.String() })], { additionalProperties: false }),
)

export const Problem = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: Type.Optional(Type.String()),
    errors: Type.Optional(Type.Array(ProgramErrorSchema)),
    /** Where the error applies: a program's line and column (a .crystal runtime error), a request field. */
    where: Type.Optional(
      Type.Object({
        file: Type.Optional(Type.String()),
        line: Type.Optional(Type.Integer()),
        column: Type.Optional(Type.Integer()),
        field: Type.Optional(Type.String()),
      }),
    ),
    hint: Type.Optional(Type.String()),
  },
  { $id: 'Problem', description: 'RFC 9457 problem details' },
)
