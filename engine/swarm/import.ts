// Turning an announced discovery into a local registration: the uuid is the cross-node identity, the
// local serial is fresh, and provenance names where it came from.
import type { DiscoveredMessage } from '../contracts/swarm.js'
import type { Candidate } from '../registry/registry.js'

export function importCandidate(m: DiscoveredMessage, importedAt: Date): Candidate {
  const p = m.primitive
  // an import of an import keeps the first origin
  const origin = p.provenance ?? { node: m.sender, origin_id: p.id, origin_uuid: p.uuid }
  return {
    class: p.class,
    persistence: p.persistence,
    noise_tolerance: p.noise_tolerance,
    material: p.material,
    lineage: p.lineage,
    signature: p.signature,
    hash: p.hash,
    genome: p.genome,
    metrics: p.metrics,
    uuid: p.uuid,
    provenance: { node: origin.node, origin_id: origin.origin_id, origin_uuid: origin.origin_uuid, imported_at: importedAt.toISOString() },
  }
}
