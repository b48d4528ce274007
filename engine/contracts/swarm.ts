// Bus messages of the swarm (DESIGN.md section 8): each subject has a schema with schema_version, ts
// and the sender's id, checked before publishing and on receipt.
import { Type, type Static } from '@sinclair/typebox'
import { FormatRegistry } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { PrimitiveSchema } from './registry.js'
import { directionProblem } from '../util/vector.js'

// TypeBox checks only the formats it is told about: an ISO 8601 date and time, e.g. 2026-11-20T22:53:06.000Z.
if (!FormatRegistry.Has('date-time'))
  FormatRegistry.Set(
    'date-time',
    (v) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(v) && !Number.isNaN(Date.parse(v)),
  )

export const SUBJECTS = {
  discovered: 'svc.crystal.primitive.discovered',
  events: 'svc.crystal.events',
  exploreRequest: 'svc.crystal.explore.request',
  exploreProgress: 'svc.crystal.explore.progress',
} as const
/** Explorers take explore requests as one queue group: each request goes to one of them. */
export const EXPLORERS_QUEUE = 'crystal-explorers'
/** The JetStream stream that keeps announcements for late joiners (an archivist started later). */
export const DISCOVERY_STREAM = 'SVC_CRYSTAL_DISCOVERIES'

export const DiscoveredMessage = Type.Object(
  {
    schema_version: Type.Literal(1),
    ts: Type.String({ format: 'date-time', minLength: 20 }),
    sender: Type.String({ minLength: 1, maxLength: 128 }),
    primitive: PrimitiveSchema,
  },
  { additionalProperties: false, $id: 'svc.crystal.primitive.discovered' },
)
export type DiscoveredMessage = Static<typeof DiscoveredMessage>

const discoveredCheck = TypeCompiler.Compile(DiscoveredMessage)

/** The announcement a bus message carries, or the first reason it is not one (not JSON, or the path into it). */
export function readAnnouncement(m: { json(): unknown }): { message: DiscoveredMessage } | { error: string } {
  let value: unknown
  try {
    value = m.json()
  } catch {
    return { error: 'not JSON' }
  }
  if (discoveredCheck.Check(value)) {
    // the registry refuses a signature with no direction (engine/registry): such an announcement is dropped here, as a malformed one is
    const problem = directionProblem(value.primitive.signature)
    return problem ? { error: `/primitive/signature: ${problem}` } : { message: value }
  }
  const first = discoveredCheck.Errors(value).First()
  return { error: first ? `${first.path || '/'}: ${first.message}` : 'does not match its contract' }
}

export const EventMessage = Type.Object(
  {
    schema_version: Type.Literal(1),
    ts: Type.String({ format: 'date-time', minLength: 20 }),
    sender: Type.String({ minLength: 1, maxLength: 128 }),
    event: Type.Union([
      Type.Literal('node.joined'),
      Type.Literal('node.left'),
      Type.Literal('round.started'),
      Type.Literal('round.finished'),
    ]),
    node: Type.String({ minLength: 1, maxLength: 128 }),
    kind: Type.Union([Type.Literal('process'), Type.Literal('tab')]),
    round: Type.Optional(Type.Integer({ minimum: 0 })),
    material: Type.Optional(Type.String({ maxLength: 64 })),
    registered: Type.Optional(Type.Integer({ minimum: 0 })),
    announced: Type.Optional(Type.Integer({ minimum: 0 })),
  },
  { additionalProperties: false, $id: 'svc.crystal.events' },
)

export type EventMessage = Static<typeof EventMessage>

/** One generation of an explorer's round, as `discover` reports it (the figures `crystal explore --json` prints per generation). */
export const ExploreProgressMessage = Type.Object(
  {
    schema_version: Type.Literal(1),
    ts: Type.String({ format: 'date-time', minLength: 20 }),
    sender: Type.String({ minLength: 1, maxLength: 128 }),
    node: Type.String({ minLength: 1, maxLength: 128 }),
    kind: Type.Union([Type.Literal('process'), Type.Literal('tab')]),
    round: Type.Integer({ minimum: 1 }),
    material: Type.String({ minLength: 1, maxLength: 64 }),
    generation: Type.Integer({ minimum: 1 }),
    generations: Type.Integer({ minimum: 1 }),
    best_fitness: Type.Number(),
    mean_fitness: Type.Number(),
    qd_score: Type.Number(),
    coverage: Type.Number({ minimum: 0, maximum: 1 }),
    elites: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false, $id: 'svc.crystal.explore.progress' },
)
export type ExploreProgressMessage = Static<typeof ExploreProgressMessage>

export const ExploreRequestMessage = Type.Object(
  {
    schema_version: Type.Literal(1),
    ts: Type.String({ format: 'date-time', minLength: 20 }),
    sender: Type.String({ minLength: 1, maxLength: 128 }),
    material: Type.String({ minLength: 1, maxLength: 64 }),
    generations: Type.Integer({ minimum: 1, maximum: 1000 }),
  },
  { additionalProperties: false, $id: 'svc.crystal.explore.request' },
)
