// What the station hears of the swarm through the contract bus: QUEEN.phase.*, SVC.consciousness and
// SVC.dreams (and queen.event.dream.start, for the mode of a dream under way), each with its age.
import { LiveValues, type ContractBus, type LastSeen } from '../../engine/bus/contract_bus.js'
import type { DreamsReply, LiveNumber, SwarmReply, SwarmState } from '../../engine/contracts/station.js'
import type { DreamState } from '../../engine/station/schedule.js'

/** Dream reports kept for /api/dreams. */
const KEEP_DREAMS = 20

const live = (v: LastSeen | undefined, value: unknown): LiveNumber =>
  v && typeof value === 'number' ? { value, age_s: v.age / 1000, stale: v.stale } : { value: null, age_s: null, stale: true }

export class SwarmWatch {
  private readonly live: LiveValues
  private readonly dreams: { value: Record<string, unknown>; seen_at: number }[] = []
  private readonly subscriptions: { unsubscribe(): void }[] = []

  /** `periodMs`: how often the swarm's publishers publish; a value is stale after three periods. */
  constructor(
    private readonly bus: Pick<ContractBus, 'subscribe' | 'dropped'> | undefined,
    readonly periodMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.live = new LiveValues(now)
    if (!bus) return
    this.subscriptions.push(
      this.live.follow(bus as ContractBus, 'SVC.consciousness', periodMs),
      this.live.follow(bus as ContractBus, 'QUEEN.phase.*', periodMs),
      // dream events come when dreams happen: never stale, only old
      this.live.follow(bus as ContractBus, 'queen.event.dream.start', Infinity),
      bus.subscribe('SVC.dreams', (value) => {
        this.dreams.unshift({ value, seen_at: this.now() })
        this.dreams.length = Math.min(this.dreams.length, KEEP_DREAMS)
      }),
    )
  }

  stop(): void {
    for (const s of this.subscriptions) s.unsubscribe()
  }

  private values(): { consciousness?: LastSeen; phases: LastSeen[]; dreamStart?: LastSeen } {
    const all = this.live.values()
    return {
      consciousness: all.find((v) => v.subject === 'SVC.consciousness'),
      phases: all.filter((v) => v.subject.startsWith('QUEEN.phase.')),
      dreamStart: all.find((v) => v.subject === 'queen.event.dream.start'),
    }
  }

  /** Awake, or dreaming light or deep, from the last fresh SVC.consciousness (`dreaming`) and the mode of
   * the last dream that started (light when none was heard); null when SVC.consciousness is stale or absent. */
  medium(): DreamState | null {
    const { consciousness, dreamStart } = this.values()
    if (!consciousness || consciousness.stale) return null
    if (!consciousness.value.dreaming) return 'awake'
    return (dreamStart?.value.mode as DreamState | undefined) ?? 'light'
  }

  /** SVC.consciousness's order parameter when it is fresh, else null. */
  order(): number | null {
    const c = this.values().consciousness
    return c && !c.stale ? (c.value.order as number) : null
  }

  state(): SwarmState {
    const { consciousness: c, phases } = this.values()
    const fresh = phases.filter((p) => !p.stale)
    const use = fresh.length ? fresh : phases
    // the queen's phase: the circular mean of the agents' phases (the newest age and staleness stand for all)
    const youngest = use.reduce<LastSeen | undefined>((a, p) => (!a || p.age < a.age ? p : a), undefined)
    const x = use.reduce((s, p) => s + Math.cos(p.value.phase as number), 0)
    const y = use.reduce((s, p) => s + Math.sin(p.value.phase as number), 0)
    const order = use.reduce((s, p) => s + (p.value.order as number), 0) / Math.max(1, use.length)
    return {
      bus: this.bus !== undefined,
      period_ms: this.periodMs,
      queen: {
        phi: live(youngest, use.length ? Math.atan2(y, x) : null),
        order: live(youngest, use.length ? order : null),
        agents: fresh.length,
      },
      consciousness: {
        phi: live(c, c?.value.phi),
        xi: live(c, c?.value.xi),
        order: live(c, c?.value.order),
        level: c && !c.stale ? String(c.value.consciousness_level) : null,
      },
      medium: this.medium(),
    }
  }

  swarm(): SwarmReply {
    const { consciousness: c, phases } = this.values()
    const envelope = (v: LastSeen) => {
      const { schema_version: _, ...rest } = v.value
      return { ...rest, age_s: v.age / 1000, stale: v.stale }
    }
    return {
      bus: this.bus !== undefined,
      period_ms: this.periodMs,
      agents: phases.map((p) => ({
        agent: String(p.value.agent),
        sender: String(p.value.sender),
        phase: p.value.phase as number,
        frequency: p.value.frequency as number,
        order: p.value.order as number,
        age_s: p.age / 1000,
        stale: p.stale,
      })),
      consciousness: c ? (envelope(c) as SwarmReply['consciousness']) : null,
      dropped: [...(this.bus?.dropped.values() ?? [])].reduce((s, n) => s + n, 0),
    }
  }

  dreamsReply(): DreamsReply {
    const t = this.now()
    return {
      medium: this.medium(),
      dreams: this.dreams.map((d) => {
        const { schema_version: _, ...rest } = d.value
        return { ...rest, age_s: (t - d.seen_at) / 1000 } as DreamsReply['dreams'][number]
      }),
    }
  }
}
