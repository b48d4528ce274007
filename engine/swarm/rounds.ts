// The swarm's client loops (docs/swarm.md), one copy for a process (link.node.ts, `crystal explore`)
// and a browser tab (app/swarm.ts): the discovery stream made sure of, the merge of what others
// announced, the announcements of a round's own finds, and the explore round that ties them together.
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream'
import type { Primitive } from '../contracts/registry.js'
import { checkMessage } from '../contracts/subjects.js'
import { DISCOVERY_STREAM, readAnnouncement, SUBJECTS, type DiscoveredMessage, type ExploreProgressMessage } from '../contracts/swarm.js'
import type { DiscoveryOptions, DiscoveryProgress, DiscoveryResult } from '../discovery/discovery.js'
import type { Registry } from '../registry/registry.js'
import { importCandidate } from './import.js'

/** Announcements are acknowledged only on a stream: whoever meets the bus first makes it. */
export async function ensureDiscoveryStream(jsm: JetStreamManager): Promise<void> {
  await jsm.streams.info(DISCOVERY_STREAM).catch(() => jsm.streams.add({ name: DISCOVERY_STREAM, subjects: [SUBJECTS.discovered] }))
}

export interface MergeTally {
  merged: number
  already_held: number
  dropped: number
}

/**
 * Merges into `registry` what other nodes announced after `cursor.seq`, up to the stream's end,
 * advancing `cursor.seq` and counting into `tally` message by message (so a bus that goes away
 * mid-merge keeps what was merged, and says how much).
 * Novelty and caps apply to imports as to own finds; this node's own announcements are skipped.
 */
export async function mergeAnnouncements(
  bus: { js: JetStreamClient; jsm: JetStreamManager },
  o: {
    node: string
    cursor: { seq: number }
    tally: MergeTally
    registry: Pick<Registry, 'register'>
    onDropped: (seq: number, error: string) => void
  },
): Promise<MergeTally> {
  const tally = o.tally
  const last = (await bus.jsm.streams.info(DISCOVERY_STREAM)).state.last_seq
  if (last <= o.cursor.seq) return tally
  const consumer = await bus.js.consumers.get(DISCOVERY_STREAM, { opt_start_seq: o.cursor.seq + 1 })
  while (o.cursor.seq < last) {
    const m = await consumer.next({ expires: 2000 })
    if (!m) break
    o.cursor.seq = m.seq
    const read = readAnnouncement(m)
    if ('error' in read) {
      tally.dropped++
      o.onDropped(m.seq, read.error)
      continue
    }
    if (read.message.sender === o.node) continue
    const out = await o.registry.register([importCandidate(read.message, new Date())])
    if (out.registered.length) tally.merged++
    else tally.already_held++
  }
  return tally
}

/** The announcements of this node's own finds at or above the floor (imports are not announced again), each checked against its contract. */
export function announcementsOf(found: readonly Primitive[], floor: number, node: string): DiscoveredMessage[] {
  return found
    .filter((p) => p.persistence >= floor && p.provenance === null)
    .map((primitive) => {
      const message: DiscoveredMessage = { schema_version: 1, ts: new Date().toISOString(), sender: node, primitive }
      const problem = checkMessage(SUBJECTS.discovered, message)
      if (problem) throw new Error(`not announcing an invalid message: ${problem}`)
      return message
    })
}

/** A node in the swarm as an explore round uses it: a process's link or a tab's connection. */
export interface SwarmPeer<Announced extends { sent: number } = { sent: number }> {
  merge(registry: Pick<Registry, 'register'>): Promise<MergeTally>
  /** Announces own finds at or above the floor, saying how many went out (and what else the peer keeps track of). */
  announce(found: readonly Primitive[], floor: number): Promise<Announced>
  event(
    event: 'round.started' | 'round.finished',
    extra: { round: number; material: string; registered?: number; announced?: number },
  ): void
  /** Tells the swarm one generation's figures of a round (best effort, as events are). */
  progress(round: number, material: string, p: DiscoveryProgress): void
}

export interface RoundOutcome<Announced> {
  result: DiscoveryResult
  /** With a peer: what was merged before the round and announced after it. */
  swarm?: { merged: MergeTally; announced: Announced }
}

/** One explore round: merge the swarm's finds (so novelty is swarm-wide), search (each generation's figures told to the swarm), announce. */
export async function exploreRound<
  Announced extends { sent: number },
  Search extends Pick<DiscoveryOptions, 'registry' | 'material' | 'onProgress'>,
>(
  peer: SwarmPeer<Announced> | undefined,
  round: number,
  floor: number,
  search: Search,
  /** What runs the search: `discover` in a process; a browser tab runs it in a worker. */
  run: (search: Search) => Promise<DiscoveryResult>,
): Promise<RoundOutcome<Announced>> {
  const merged = peer ? await peer.merge(search.registry) : undefined
  peer?.event('round.started', { round, material: search.material.name })
  const told = search.onProgress
  const result = await run(
    peer
      ? {
          ...search,
          onProgress: (p: DiscoveryProgress) => {
            peer.progress(round, search.material.name, p)
            told?.(p)
          },
        }
      : search,
  )
  const announced = peer ? await peer.announce(result.registered, floor) : undefined
  peer?.event('round.finished', {
    round,
    material: search.material.name,
    registered: result.registered.length,
    announced: announced?.sent ?? 0,
  })
  return { result, ...(peer ? { swarm: { merged: merged!, announced: announced! } } : {}) }
}

/** The body of a `svc.crystal.explore.progress` message (the bus adds schema_version, ts and sender). */
export function progressMessage(
  node: string,
  kind: 'process' | 'tab',
  round: number,
  material: string,
  p: DiscoveryProgress,
): Omit<ExploreProgressMessage, 'schema_version' | 'ts' | 'sender'> {
  const { generation, generations, best_fitness, mean_fitness, qd_score, coverage, elites } = p
  return { node, kind, round, material, generation, generations, best_fitness, mean_fitness, qd_score, coverage, elites }
}
