// An explorer's link to the swarm (docs/swarm.md). Before each round it merges what other nodes
// announced (the JetStream stream, from where it left off), so novelty is swarm-wide; after it, it
// announces its own finds at or above the persistence floor. Announcements wait in a backlog file
// until the server acknowledges them, so a bus that is down, or goes down, loses nothing; the uuid is
// the message id, so a retried announcement is never stored twice.
import { jetstream, jetstreamManager, type JetStreamClient } from '@nats-io/jetstream'
import { connect, type Authenticator, type NatsConnection } from '@nats-io/transport-node'
import { existsSync, readFileSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { ContractBus } from '../bus/contract_bus.js'
import { credsFrom, natsConnection, nodeId } from '../bus/nats.node.js'
import type { BusSettings } from '../config.js'
import type { Primitive } from '../contracts/registry.js'
import { checkMessage } from '../contracts/subjects.js'
import { DISCOVERY_STREAM, EXPLORERS_QUEUE, readAnnouncement, SUBJECTS, type DiscoveredMessage } from '../contracts/swarm.js'
import { writeDurably } from '../files/durable.node.js'
import type { Registry } from '../registry/registry.js'
import { importCandidate } from './import.js'

export interface MergeTally {
  merged: number
  already_held: number
  dropped: number
}

export class SwarmLink {
  private nc: NatsConnection | undefined
  private js: JetStreamClient | undefined
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
      const jsm = await jetstreamManager(this.nc)
      await jsm.streams.info(DISCOVERY_STREAM).catch(() => jsm.streams.add({ name: DISCOVERY_STREAM, subjects: [SUBJECTS.discovered] }))
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
  event(event: 'node.joined' | 'node.left' | 'round.started' | 'round.finished', extra: { round?: number; material?: string; registered?: number; announced?: number }): void {
    try {
      if (this.connected) this.bus!.publish(SUBJECTS.events, { event, node: this.node, kind: 'process', ...extra })
    } catch (e) {
      this.say(`swarm: could not send ${event}: ${(e as Error).message}`)
    }
  }

  private cursor(): number {
    return existsSync(this.cursorPath) ? (JSON.parse(readFileSync(this.cursorPath, 'utf8')) as { seq: number }).seq : 0
  }

  private writeAtomically(path: string, body: unknown): Promise<void> {
    return writeDurably(path, [Buffer.from(JSON.stringify(body))])
  }

  /** Merges the announcements of other nodes made since the last merge: novelty and caps apply to imports as to own finds. */
  async merge(registry: Pick<Registry, 'register'>): Promise<MergeTally> {
    const tally = { merged: 0, already_held: 0, dropped: 0 }
    if (!(await this.ensureConnected())) return tally
    const from = this.cursor()
    let seq = from
    try {
      const jsm = await jetstreamManager(this.nc!)
      const last = (await jsm.streams.info(DISCOVERY_STREAM)).state.last_seq
      if (last <= from) return tally
      const consumer = await this.js!.consumers.get(DISCOVERY_STREAM, { opt_start_seq: from + 1 })
      while (seq < last) {
        const m = await consumer.next({ expires: 2000 })
        if (!m) break
        seq = m.seq
        await this.mergeOne(m, registry, tally)
      }
    } catch (e) {
      // the bus went away mid-merge (a server restart drops the consumer): keep what was merged, go on searching
      this.say(`swarm: merging paused at seq ${seq} (${(e as Error).message}); it resumes next round`)
    }
    await this.writeAtomically(this.cursorPath, { seq })
    return tally
  }

  private async mergeOne(m: { seq: number; json(): unknown }, registry: Pick<Registry, 'register'>, tally: MergeTally): Promise<void> {
    const read = readAnnouncement(m)
    if ('error' in read) {
      tally.dropped++
      this.say(`swarm: warning: dropped a malformed announcement (seq ${m.seq}): ${read.error}`)
      return
    }
    if (read.message.sender === this.node) return
    const out = await registry.register([importCandidate(read.message, new Date())])
    if (out.registered.length) tally.merged++
    else tally.already_held++
  }

  /** Queues this node's own finds at or above the floor, then sends what the bus will take. */
  async announce(found: readonly Primitive[], floor: number): Promise<{ queued: number; sent: number; waiting: number }> {
    const fresh: DiscoveredMessage[] = found
      .filter((p) => p.persistence >= floor && p.provenance === null)
      .map((primitive) => ({ schema_version: 1, ts: new Date().toISOString(), sender: this.node, primitive }))
    for (const m of fresh) {
      const problem = checkMessage(SUBJECTS.discovered, m)
      if (problem) throw new Error(`not announcing an invalid message: ${problem}`)
    }
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
    this.requestSubscription = this.bus!.subscribe<{ material: string; generations: number }>(SUBJECTS.exploreRequest, (m) => this.requestHandler!(m), EXPLORERS_QUEUE)
  }

  async close(): Promise<void> {
    if (!this.connected) return
    this.event('node.left', {})
    await this.nc!.drain().catch(() => this.nc!.close())
  }
}
