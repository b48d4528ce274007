// A browser tab in the swarm (docs/swarm.md): it reaches the bus over websocket (wsconnect; the server
// says where), follows the swarm's events and announcements, and explores as a process does: before a
// round it merges what others announced, after it announces its own finds at or above the floor. Its
// registry is the server's. The NATS client loads only when the swarm is used.
import type { NatsConnection } from '@nats-io/nats-core'
import type { JetStreamClient } from '@nats-io/jetstream'
import type { SwarmConfig } from '../engine/contracts/api.js'
import type { DiscoveredMessage, EventMessage as SwarmEvent } from '../engine/contracts/swarm.js'
import { DISCOVERY_STREAM, readAnnouncement, SUBJECTS } from '../engine/contracts/swarm.js'
import { checkMessage } from '../engine/contracts/subjects.js'
import { discover } from '../engine/discovery/discovery.js'
import { createEngine } from '../engine/field/engine.js'
import { MaterialCatalog } from '../engine/field/materials.js'
import { importCandidate } from '../engine/swarm/import.js'
import { get } from './api'
import { serverRegistry } from './tab'

const catalog = new MaterialCatalog()

export class Swarm {
  private cursor = 0
  readonly dropped = { count: 0 }

  private constructor(
    readonly nc: NatsConnection,
    readonly js: JetStreamClient,
    readonly node: string,
    readonly floor: number,
  ) {}

  static async join(): Promise<Swarm> {
    const config = await get<SwarmConfig>('/swarm/config')
    if (!config.ws_url) throw new Error('the server knows no websocket address for the bus (set SVC_NATS_WS_URL where it runs)')
    const [{ wsconnect }, { jetstream, jetstreamManager }] = await Promise.all([import('@nats-io/nats-core'), import('@nats-io/jetstream')])
    const node = `tab-${Math.random().toString(16).slice(2, 8)}`
    const nc = await wsconnect({ servers: config.ws_url, name: node })
    // announcements are acknowledged only on a stream: make sure it is there, as every explorer does
    const jsm = await jetstreamManager(nc)
    await jsm.streams.info(DISCOVERY_STREAM).catch(() => jsm.streams.add({ name: DISCOVERY_STREAM, subjects: [SUBJECTS.discovered] }))
    return new Swarm(nc, jetstream(nc), node, config.announce_floor)
  }

  /** Publishes a message after checking it against its contract. */
  private send(subject: string, body: Record<string, unknown>): void {
    const message = { schema_version: 1, ts: new Date().toISOString(), sender: this.node, ...body }
    const problem = checkMessage(subject, message)
    if (problem) throw new Error(`not sending an invalid message on ${subject}: ${problem}`)
    this.nc.publish(subject, JSON.stringify(message))
  }

  event(event: 'node.joined' | 'node.left' | 'round.started' | 'round.finished', extra: Partial<SwarmEvent> = {}): void {
    this.send(SUBJECTS.events, { event, node: this.node, kind: 'tab', ...extra })
  }

  /** Calls back with each valid event and announcement; invalid ones are dropped and counted. */
  follow(onEvent: (e: SwarmEvent) => void, onDiscovery: (m: DiscoveredMessage) => void): () => void {
    const subs = [
      this.nc.subscribe(SUBJECTS.events, {
        callback: (_e, m) => {
          const value = safeJson(m.string())
          if (checkMessage(SUBJECTS.events, value)) this.dropped.count++
          else onEvent(value as SwarmEvent)
        },
      }),
      this.nc.subscribe(SUBJECTS.discovered, {
        callback: (_e, m) => {
          const read = readAnnouncement(m)
          if ('error' in read) this.dropped.count++
          else onDiscovery(read.message)
        },
      }),
    ]
    return () => subs.forEach((s) => s.unsubscribe())
  }

  /** Merges into the server's registry what other nodes announced since the last merge. */
  private async merge(): Promise<number> {
    const { jetstreamManager } = await import('@nats-io/jetstream')
    const last = (await (await jetstreamManager(this.nc)).streams.info(DISCOVERY_STREAM).catch(() => undefined))?.state.last_seq ?? 0
    if (last <= this.cursor) return 0
    const consumer = await this.js.consumers.get(DISCOVERY_STREAM, { opt_start_seq: this.cursor + 1 })
    let merged = 0
    while (this.cursor < last) {
      const m = await consumer.next({ expires: 2000 })
      if (!m) break
      this.cursor = m.seq
      const read = readAnnouncement(m)
      if ('error' in read) {
        this.dropped.count++
        continue
      }
      if (read.message.sender === this.node) continue
      merged += (await serverRegistry.register([importCandidate(read.message, new Date())])).registered.length
    }
    return merged
  }

  /** One round in this tab: merge, search (on the tab's own engines), announce. */
  async round(
    round: number,
    r: { material: string; generations: number; population: number; size: number },
    onProgress: (line: string) => void,
  ): Promise<{ merged: number; registered: string[]; announced: string[] }> {
    const merged = await this.merge()
    this.event('round.started', { round, material: r.material })
    const result = await discover({
      material: catalog.get(r.material),
      generations: r.generations,
      population: r.population,
      size: r.size,
      seed: round,
      registry: serverRegistry,
      open: (o) => createEngine({ ...o, backend: 'auto', gpu: async () => (navigator as Navigator & { gpu?: GPU }).gpu }),
      onProgress: (p) => onProgress(`round ${round}: generation ${p.generation} of ${p.generations}, registered ${p.registered_total}`),
    })
    const own = result.registered.filter((p) => p.persistence >= this.floor && p.provenance === null)
    for (const primitive of own) {
      const message = { schema_version: 1 as const, ts: new Date().toISOString(), sender: this.node, primitive }
      const problem = checkMessage(SUBJECTS.discovered, message)
      if (problem) throw new Error(`not announcing an invalid message: ${problem}`)
      await this.js.publish(SUBJECTS.discovered, JSON.stringify(message), { msgID: primitive.uuid })
    }
    this.event('round.finished', { round, material: r.material, registered: result.registered.length, announced: own.length })
    return { merged, registered: result.registered.map((p) => p.id), announced: own.map((p) => p.id) }
  }

  async leave(): Promise<void> {
    this.event('node.left')
    await this.nc.drain()
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}
