// Bus messages of the swarm (DESIGN.md section 8): each subject has a schema with schema_version, ts
// and the sender's id, checked before publishing and on receipt.
import { Type, type Static } from '@sinclair/typebox'
import { FormatRegistry } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { PrimitiveSchema } from './registry.js'

// TypeBox checks only the formats it is told about: an ISO 8601 date and time, e.g. 2026-11-20T22:53:06.000Z.
if (!FormatRegistry.Has('date-time')) FormatRegistry.Set('date-time', (v) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(v) && !Number.isNaN(Date.parse(v)))

export const SUBJECTS = { discovered: 'svc.crystal.primitive.discovered' } as const
/** The JetStream stream that keeps announcements for late joiners (an archivist started later). */
export const DISCOVERY_STREAM = 'SVC_CRYSTAL_DISCOVERIES'

export const DiscoveredMessage = Type.Object(
  {
    schema_version: Type.Literal(1),
    ts: Type.String({ format: 'date-time', minLength: 20 }),
    sender: Type.String({ minLength: 1, maxLength: 128 }),
    primitive: PrimitiveSchema,
  },
  { additionalProperties: false },
)
export type DiscoveredMessage = Static<typeof DiscoveredMessage>

/** The message, or the first reason it is not one (with the path into it). */
export function readDiscovered(value: unknown): { message: DiscoveredMessage } | { error: string } {
  const first = Value.Errors(DiscoveredMessage, value).First()
  if (first) return { error: `${first.path || '/'}: ${first.message}` }
  return { message: value as DiscoveredMessage }
}
