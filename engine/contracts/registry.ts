// The registry contract (DESIGN.md section 6): a primitive, the genome that made it, and the file.
// The TypeBox schemas are the types, the validation on load, and (later) the REST and bus shapes.
import { Type, type Static } from '@sinclair/typebox'

export const CLASS_TOKENS = ['echo_ring', 'standing_echo', 'harmonic_bridge', 'phase_knot', 'attractor_field', 'memory_seed'] as const
export const ClassToken = Type.Union(CLASS_TOKENS.map((c) => Type.Literal(c)))
export type ClassToken = (typeof CLASS_TOKENS)[number]
/** The classes' names for people (tables, the Observatory); tokens stay the names in JSON and flags. */
export const CLASS_NAMES: Record<ClassToken, string> = {
  echo_ring: 'Echo Ring',
  standing_echo: 'Standing Echo',
  harmonic_bridge: 'Harmonic Bridge',
  phase_knot: 'Phase Knot',
  attractor_field: 'Attractor Field',
  memory_seed: 'Memory Seed',
}

export const PulseSchema = Type.Object(
  {
    x: Type.Number({ minimum: 0, maximum: 1 }),
    y: Type.Number({ minimum: 0, maximum: 1 }),
    radius: Type.Number({ minimum: 0.0001, maximum: 1 }),
    amplitude: Type.Number({ minimum: -100, maximum: 100 }),
    frequency: Type.Number({ minimum: -1000, maximum: 1000 }),
    phase: Type.Number({ minimum: -1e6, maximum: 1e6 }),
  },
  { additionalProperties: false },
)

export const DREAM_MODES = ['light', 'deep'] as const
export type DreamMode = (typeof DREAM_MODES)[number]

/** What discovery evolves: pulses to inject, how long to resonate, and whether to dream first. */
export const GenomeSchema = Type.Object(
  {
    pulses: Type.Array(PulseSchema, { minItems: 1, maxItems: 6 }),
    resonate_steps: Type.Integer({ minimum: 1, maximum: 100_000 }),
    dream: Type.Union([Type.Literal('none'), Type.Literal('light'), Type.Literal('deep')]),
  },
  { additionalProperties: false },
)
export type Genome = Static<typeof GenomeSchema>

export const ProvenanceSchema = Type.Object(
  {
    node: Type.String(),
    origin_id: Type.String(),
    origin_uuid: Type.String(),
    imported_at: Type.String(),
  },
  { additionalProperties: false },
)

export const PrimitiveSchema = Type.Object(
  {
    id: Type.String({ pattern: '^CRY-[0-9]{6,}$' }),
    uuid: Type.String({ pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' }),
    class: ClassToken,
    persistence: Type.Number({ minimum: 0, maximum: 1 }),
    noise_tolerance: Type.Number({ minimum: 0, maximum: 1 }),
    material: Type.String(),
    lineage: Type.Array(Type.String()),
    hash: Type.String({ pattern: '^[0-9a-f]{64}$' }),
    signature: Type.Array(Type.Number()),
    provenance: Type.Union([Type.Null(), ProvenanceSchema]),
    genome: GenomeSchema,
    discovered_at: Type.String(),
    metrics: Type.Record(Type.String(), Type.Number()),
  },
  { additionalProperties: false },
)
export type Primitive = Static<typeof PrimitiveSchema>

export const REGISTRY_FORMAT = 'svc-crystal-registry/1'

export const RegistryFileSchema = Type.Object(
  {
    format: Type.Literal(REGISTRY_FORMAT),
    next_serial: Type.Integer({ minimum: 1 }),
    content_hash: Type.String({ pattern: '^[0-9a-f]{64}$' }),
    primitives: Type.Array(PrimitiveSchema),
  },
  { additionalProperties: false },
)
export type RegistryFile = Static<typeof RegistryFileSchema>
