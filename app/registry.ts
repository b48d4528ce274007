// The server's registry over its REST API: where a tab's discoveries go (an evolve, a swarm round),
// and what a swarm tab merges announcements into. Apart from the engine, so the page loads it alone.
import type { Primitive } from '../engine/contracts/registry.js'
import type { Candidate, RegisterOutcome } from '../engine/registry/registry.js'
import { get, post } from './api'

/** The server's registry over its REST API, as discovery uses it. */
export const serverRegistry = {
  async list(): Promise<Primitive[]> {
    const out: Primitive[] = []
    for (let offset = 0; ; offset += 500) {
      const page = await get<{ total: number; items: Primitive[] }>(`/primitives?limit=500&offset=${offset}`)
      out.push(...page.items)
      if (out.length >= page.total || !page.items.length) return out
    }
  },
  async register(candidates: readonly Candidate[]): Promise<RegisterOutcome> {
    const r = await post<{ assigned: (string | null)[]; registered: string[]; rejected: RegisterOutcome['rejected'] }>('/primitives', {
      // an import keeps its uuid and provenance (the cross-node identity); a tab's own find has neither
      candidates: candidates.map(({ provenance, uuid, ...c }) => ({
        ...c,
        ...(uuid ? { uuid } : {}),
        ...(provenance ? { provenance } : {}),
      })),
    })
    const registered = await Promise.all(r.registered.map((id) => get<Primitive>(`/primitives/${id}`)))
    return { assigned: r.assigned, registered, rejected: r.rejected.map((x) => ({ ...x, reason: 'duplicate' as const })), pruned: [] }
  },
}
