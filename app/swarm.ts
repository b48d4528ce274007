// A browser tab in the swarm (docs/swarm.md): it reaches the bus over websocket (wsconnect; the server
// says where), follows the swarm's events and announcements, and explores as a process does: before a
// round it merges what others announced, after it announces its own finds at or above the floor (the
// loops of engine/swarm/rounds.ts, as `crystal explore` runs them). Its registry is the server's. The
// NATS client loads only when the swarm is used. A round's search runs in a worker of its own.
import type { NatsConnection } from '@nats-io/nats-core'
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream'
import type { SwarmConfig } from '../engine/contracts/api.js'
import type { DiscoveredMessage, EventMessage as SwarmEvent, ExploreProgressMessage } from '../engine/contracts/swarm.js'
import type { Primitive } from '../engine/contracts/registry.js'
import { readAnnouncement, SUBJECTS } from '../engine/contracts/swarm.js'
import { checkMessage } from '../engine/contracts/subjects.js'
import type { DiscoveryProgress, DiscoveryResult } from '../engine/discovery/discovery.js'
import { MaterialCatalog } from '../engine/field/materials.js'
import type { Registry } from '../engine/registry/registry.js'
import {
  announcementsOf,
  ensureDiscoveryStream,
  exploreRound,
  mergeAnnouncements,
  progressMessage,
  type MergeTally,
  type SwarmPeer,
} from '../engine/swarm/rounds.js'
import { proxy } from 'comlink'
import { get } from './api'
import { inWorker } from './driver'
import { serverRegistry } from './registry'

const catalog = new MaterialCatalog()

export class Swarm implements SwarmPeer<{ sent: number; ids: string[] }> {
  private readonly cursor = { seq: 0 }
  readonly dropped = { count: 0 }

  private constructor(
    readonly nc: NatsConnection,
    readonly js: JetStreamClient,
    readonly jsm: JetStreamManager,
    readonly node: string,
    readonly floor: number,
  ) {}

  static async join(): Promise<Swarm> {
    const config = await get<SwarmConfig>('/swarm/config')
    if (!config.ws_url) throw new Error('the server knows no websocket address for the bus (set SVC_NATS_WS_URL where it runs)')
    const [{ wsconnect }, { jetstream, jetstreamManager }] = await Promise.all([import('@nats-io/nats-core'), import('@nats-io/jetstream')])
    const node = `tab-${Math.random().toString(16).slice(2, 8)}`
    const nc = await wsconnect({ servers: config.ws_url, name: node })
    const jsm = await jetstreamManager(nc)
    await ensureDiscoveryStream(jsm)
    return new Swarm(nc, jetstream(nc), jsm, node, config.announce_floor)
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

  progress(round: number, material: string, p: DiscoveryProgress): void {
    this.send(SUBJECTS.exploreProgress, progressMessage(this.node, 'tab', round, material, p))
  }

  /** Calls back with each valid event, round progress and announcement; invalid ones are dropped and counted. */
  follow(
    onEvent: (e: SwarmEvent) => void,
    onDiscovery: (m: DiscoveredMessage) => void,
    onProgress: (m: ExploreProgressMessage) => void,
  ): () => void {
    const checked = <T>(subject: string, on: (value: T) => void) =>
      this.nc.subscribe(subject, {
        callback: (_e, m) => {
          const value = safeJson(m.string())
          if (checkMessage(subject, value)) this.dropped.count++
          else on(value as T)
        },
      })
    const subs = [
      checked(SUBJECTS.events, onEvent),
      checked(SUBJECTS.exploreProgress, onProgress),
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
  merge(registry: Pick<Registry, 'register'>): Promise<MergeTally> {
    const tally = { merged: 0, already_held: 0, dropped: 0 }
    return mergeAnnouncements(
      { js: this.js, jsm: this.jsm },
      { node: this.node, cursor: this.cursor, tally, registry, onDropped: () => this.dropped.count++ },
    )
  }

  async announce(found: readonly Primitive[], floor: number): Promise<{ sent: number; ids: string[] }> {
    const messages = announcementsOf(found, floor, this.node)
    for (const m of messages) await this.js.publish(SUBJECTS.discovered, JSON.stringify(m), { msgID: m.primitive.uuid })
    return { sent: messages.length, ids: messages.map((m) => m.primitive.id) }
  }

  /** One round in this tab: merge, search (on the tab's own engines), announce. */
  async round(
    round: number,
    r: { material: string; generations: number; population: number; size: number; seed: number },
    onProgress: (p: DiscoveryProgress) => void,
  ): Promise<{ merged: number; registered: string[]; announced: string[]; result: DiscoveryResult }> {
    const { result, swarm } = await exploreRound(
      this,
      round,
      this.floor,
      {
        material: catalog.get(r.material),
        generations: r.generations,
        population: r.population,
        size: r.size,
        seed: r.seed,
        registry: serverRegistry,
        onProgress,
      },
      // the search in a worker of its own (the page keeps drawing), with the same registry (the server's); functions stay here
      ({ registry, onProgress: told, ...search }) => inWorker('tab explore', (w) => w.discover(search, proxy(told))),
    )
    return { merged: swarm!.merged.merged, registered: result.registered.map((p) => p.id), announced: swarm!.announced.ids, result }
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
