// The consciousness core's bus messages (DESIGN.md section 8): a schema per subject, each with
// schema_version, ts and the sender's id. `contractFor` resolves a concrete subject (QUEEN.phase.<agent>,
// SVC.exemplar.<agent_id>.<cluster_id>) to its contract; `checkMessage` says what is wrong, if anything.
import { Type, type TSchema } from '@sinclair/typebox'
import { ConsciousnessLevel } from '../consciousness/iit.js'
import './swarm.js' // registers the date-time format

const envelope = {
  schema_version: Type.Literal(1),
  ts: Type.String({ format: 'date-time', minLength: 20 }),
  sender: Type.String({ minLength: 1, maxLength: 128 }),
}
const Token = Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' })
const Mode = Type.Union([Type.Literal('light'), Type.Literal('deep')])
const strict = { additionalProperties: false } as const

export const ConsciousnessMessage = Type.Object(
  {
    ...envelope,
    phi: Type.Number({ minimum: 0 }),
    /** The null's level phi is measured above (docs/consciousness.md); optional, so schema_version stays 1. */
    phi_null: Type.Optional(Type.Number()),
    xi: Type.Number({ minimum: 0 }),
    mean_order: Type.Number({ minimum: 0, maximum: 1 }),
    order: Type.Number({ minimum: 0, maximum: 1 }),
    mean_phase: Type.Number({ minimum: -Math.PI - 1e-9, maximum: Math.PI + 1e-9 }),
    num_clusters: Type.Integer({ minimum: 0 }),
    consciousness_level: Type.Union(Object.values(ConsciousnessLevel).map((l) => Type.Literal(l))),
    dreaming: Type.Boolean(),
  },
  { ...strict, $id: 'SVC.consciousness' },
)

export const DreamsMessage = Type.Object(
  {
    ...envelope,
    mode: Mode,
    samples: Type.Integer({ minimum: 0 }),
    memories_strengthened: Type.Integer({ minimum: 0 }),
    hallucinations: Type.Integer({ minimum: 0 }),
    energy_before: Type.Number(),
    energy_after: Type.Number(),
    pruned_fraction: Type.Number({ minimum: 0, maximum: 1 }),
  },
  { ...strict, $id: 'SVC.dreams' },
)

export const PhaseMessage = Type.Object(
  { ...envelope, agent: Token, phase: Type.Number(), frequency: Type.Number(), order: Type.Number({ minimum: 0, maximum: 1 }) },
  { ...strict, $id: 'QUEEN.phase.<agent>' },
)

export const DreamStartMessage = Type.Object(
  { ...envelope, mode: Mode, reason: Type.String({ maxLength: 500 }) },
  { ...strict, $id: 'queen.event.dream.start' },
)

export const DreamEndMessage = Type.Object(
  {
    ...envelope,
    mode: Mode,
    duration_ms: Type.Number({ minimum: 0 }),
    memories_strengthened: Type.Integer({ minimum: 0 }),
    hallucinations: Type.Integer({ minimum: 0 }),
  },
  { ...strict, $id: 'queen.event.dream.end' },
)

export const ExemplarMessage = Type.Object(
  {
    ...envelope,
    agent_id: Token,
    cluster_id: Token,
    size: Type.Integer({ minimum: 1 }),
    frequency: Type.Number(),
    coherence: Type.Number({ minimum: 0, maximum: 1 }),
    phases: Type.Array(Type.Number(), { minItems: 1, maxItems: 1024 }),
  },
  { ...strict, $id: 'SVC.exemplar.<agent_id>.<cluster_id>' },
)

export interface Contract {
  /** The subject pattern, `<name>` for one token. */
  pattern: string
  schema: TSchema
  /** Fields that must equal the subject's tokens, in order. */
  tokens: string[]
}

export const CONSCIOUSNESS_CONTRACTS: readonly Contract[] = [
  { pattern: 'SVC.consciousness', schema: ConsciousnessMessage, tokens: [] },
  { pattern: 'SVC.dreams', schema: DreamsMessage, tokens: [] },
  { pattern: 'QUEEN.phase.<agent>', schema: PhaseMessage, tokens: ['agent'] },
  { pattern: 'queen.event.dream.start', schema: DreamStartMessage, tokens: [] },
  { pattern: 'queen.event.dream.end', schema: DreamEndMessage, tokens: [] },
  { pattern: 'SVC.exemplar.<agent_id>.<cluster_id>', schema: ExemplarMessage, tokens: ['agent_id', 'cluster_id'] },
]
