// An explorer's link to the swarm (docs/swarm.md). Before each round it merges what other nodes
// announced (the JetStream stream, from where it left off), so novelty is swarm-wide; after it, it
// announces its own finds at or above the persistence floor. Announcements wait in a backlog file
// until the server acknowledges them, so a bus that is down, or goes down, loses nothing; the uuid is
// the message id, so a retried announcement is never stored twice.
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream'
import { connect, type Authenticator, type NatsConnection } from '@nats-io/transport-node'
import { existsSync, readFileSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { ContractBus } from '../bus/contract_bus.js'
import { credsFrom, natsConnection, nodeId } from '../bus/nats.node.js'
import type { BusSettings } from '../config.js'
import type { Primitive } from '../contracts/registry.js'
import type { DiscoveryProgress } from '../discovery/discovery.js'
import { EXPLORERS_QUEUE, SUBJECTS, type DiscoveredMessage } from '../contracts/swarm.js'
import { writeDurably } from '../files/durable.node.js'
import type { Registry } from '../registry/registry.js'
import { announcementsOf, ensureDiscoveryStream, mergeAnnouncements, progressMessage, type MergeTally, type SwarmPeer } from './rounds.js'

export class SwarmLink implements SwarmPeer<{ queued: number; sent: number; waiting: number }> {
  private nc: NatsConnection | undefined
  private js: JetStreamClient | undefined
  private jsm: JetStreamManager | undefined
  private bus: ContractBus | undefined
  private readonly backlogPath: string
  private readonly cursorPath: string

  private constructor(
    readonly node: string,
    readonly url: string,
    private readonly authenticator: Authenticator | undefined,
    dataDir: string,
    private readonly say: (line: string) => void,
  ) {
    this.backlogPath = join(dataDir, 'swarm-backlog.json')
    this.cursorPath = join(dataDir, 'swarm-cursor.json')
  }

  /**
   * A link that is connected when the bus is up, and keeps trying when it is not. A missing or
   * malformed credentials file is an error here: no retry would mend it.
   */
  static async open(bus: BusSettings & { url: string }, dataDir: string, say: (line: string) => void): Promise<SwarmLink> {
    const link = new SwarmLink(nodeId(bus), bus.url, credsFrom(bus.creds), dataDir, say)
    await link.ensureConnected()
    return link
  }

  get connected(): boolean {
    return !!this.nc && !this.nc.isClosed()
  }

  private async ensureConnected(): Promise<boolean> {
    if (this.connected) return true
    try {
      this.nc = await connect({
        servers: this.url,
        name: this.node,
        timeout: 2000,
        authenticator: this.authenticator,
        // ride out a server restart: keep reconnecting, and quickly
        maxReconnectAttempts: -1,
        reconnectTimeWait: 250,
      })
      this.jsm = await jetstreamManager(this.nc)
      await ensureDiscoveryStream(this.jsm)
      this.js = jetstream(this.nc)
      this.bus = new ContractBus(natsConnection(this.nc), this.node, (w) => this.say(w))
      this.requestSubscription = undefined
      this.subscribeRequests()
      this.event('node.joined', {})
      return true
    } catch (e) {
      this.nc = undefined
      this.say(`swarm: the bus at ${this.url} is unreachable (${(e as Error).message}); searching on, announcing later`)
      return false
    }
  }

  /** Tells the swarm what this node is doing (best effort: events are not kept). */
  event(
    event: 'node.joined' | 'node.left' | 'round.started' | 'round.finished',
    extra: { round?: number; material?: string; registered?: number; announced?: number },
  ): void {
    try {
      if (this.connected) this.bus!.publish(SUBJECTS.events, { event, node: this.node, kind: 'process', ...extra })
    } catch (e) {
      this.say(`swarm: could not send ${event}: ${(e as Error).message}`)
    }
  }

  progress(round: number, material: string, p: DiscoveryProgress): void {
    try {
      if (this.connected) this.bus!.publish(SUBJECTS.exploreProgress, progressMessage(this.node, 'process', round, material, p))
    } catch (e) {
      this.say(`swarm: could not send round ${round}'s generation ${p.generation}: ${(e as Error).message}`)
    }
  }

  private cursor(): number {
    return existsSync(this.cursorPath) ? (JSON.parse(readFileSync(this.cursorPath, 'utf8')) as { seq: number }).seq : 0
  }

  private writeAtomically(path: string, body: unknown): Promise<void> {
    return writeDurably(path, [Buffer.from(JSON.stringify(body))])
  }

  /** Merges the announcements of other nodes made since the last merge (from the cursor kept on disk). */
  async merge(registry: Pick<Registry, 'register'>): Promise<MergeTally> {
    const tally = { merged: 0, already_held: 0, dropped: 0 }
    if (!(await this.ensureConnected())) return tally
    const cursor = { seq: this.cursor() }
    try {
      await mergeAnnouncements(
        { js: this.js!, jsm: this.jsm! },
        {
          node: this.node,
          cursor,
          tally,
          registry,
          onDropped: (seq, error) => this.say(`swarm: warning: dropped a malformed announcement (seq ${seq}): ${error}`),
        },
      )
    } catch (e) {
      // the bus went away mid-merge (a server restart drops the consumer): keep what was merged, go on searching
      this.say(`swarm: merging paused at seq ${cursor.seq} (${(e as Error).message}); it resumes next round`)
    }
    await this.writeAtomically(this.cursorPath, { seq: cursor.seq })
    return tally
  }

  /** Queues this node's own finds at or above the floor, then sends what the bus will take. */
  async announce(found: readonly Primitive[], floor: number): Promise<{ queued: number; sent: number; waiting: number }> {
    const fresh = announcementsOf(found, floor, this.node)
    const backlog = [...(await this.backlog()), ...fresh]
    await this.writeAtomically(this.backlogPath, backlog)
    const sent = await this.flush()
    return { queued: fresh.length, sent, waiting: (await this.backlog()).length }
  }

  private async backlog(): Promise<DiscoveredMessage[]> {
    return existsSync(this.backlogPath) ? (JSON.parse(await readFile(this.backlogPath, 'utf8')) as DiscoveredMessage[]) : []
  }

  /** Sends the backlog in order until the bus stops acknowledging; what is acknowledged leaves the backlog. */
  async flush(): Promise<number> {
    const backlog = await this.backlog()
    if (!backlog.length || !(await this.ensureConnected())) return 0
    let sent = 0
    for (const m of backlog) {
      try {
        await this.js!.publish(SUBJECTS.discovered, JSON.stringify(m), { msgID: m.primitive.uuid, timeout: 2000 })
        sent++
      } catch (e) {
        this.say(`swarm: announcing paused (${(e as Error).message}); ${backlog.length - sent} waiting`)
        break
      }
    }
    await this.writeAtomically(this.backlogPath, backlog.slice(sent))
    return sent
  }

  /** Explore requests, shared among the idle explorers as one queue group: each goes to one of them. */
  onRequest(handler: (r: { material: string; generations: number; sender: string }) => void): void {
    this.requestHandler = handler
    this.subscribeRequests()
  }

  private requestHandler: ((r: { material: string; generations: number; sender: string }) => void) | undefined
  private requestSubscription: { unsubscribe(): void } | undefined

  private subscribeRequests(): void {
    if (!this.requestHandler || !this.connected || this.requestSubscription) return
    this.requestSubscription = this.bus!.subscribe<{ material: string; generations: number }>(
      SUBJECTS.exploreRequest,
      (m) => this.requestHandler!(m),
      EXPLORERS_QUEUE,
    )
  }

  async close(): Promise<void> {
    if (!this.connected) return
    this.event('node.left', {})
    await this.nc!.drain().catch(() => this.nc!.close())
  }
}
