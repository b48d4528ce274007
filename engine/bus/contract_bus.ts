// Messages checked at both ends (DESIGN.md section 8): before publishing, an invalid message is an
// error and is not sent; on receipt, an invalid one is dropped, counted, and warned about. The
// connection is a small interface, so the engine carries no network code (Node passes NATS).
import { checkMessage } from '../contracts/subjects.js'
import { CrystalError } from '../errors.js'

export interface BusConnection {
  publish(subject: string, data: string): void
  /** `subject` may hold NATS wildcards (`*` one token, `>` the rest); a `queue` group shares the messages among its members. */
  subscribe(subject: string, handler: (subject: string, data: string) => void, queue?: string): { unsubscribe(): void }
}

export type Envelope = { schema_version: 1; ts: string; sender: string }

export class ContractBus {
  /** Messages dropped on receipt, per subject. */
  readonly dropped = new Map<string, number>()

  constructor(
    private readonly connection: BusConnection,
    readonly sender: string,
    private readonly warn: (line: string) => void,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  /** Publishes `body` wrapped in the envelope (schema_version, ts, sender), after checking it. */
  publish(subject: string, body: Record<string, unknown>): void {
    const message = { schema_version: 1, ts: this.clock().toISOString(), sender: this.sender, ...body }
    const problem = checkMessage(subject, message)
    if (problem) throw new CrystalError('bad_message', `not publishing an invalid message on ${subject}: ${problem}`, { field: subject })
    this.connection.publish(subject, JSON.stringify(message))
  }

  /** Delivers the valid messages on `subject` to `handler`; drops, counts and warns about the rest. */
  subscribe<T = Record<string, unknown>>(
    subject: string,
    handler: (message: T & Envelope, subject: string) => void,
    queue?: string,
  ): { unsubscribe(): void } {
    return this.connection.subscribe(
      subject,
      (concrete, data) => {
        let value: unknown
        let problem: string | undefined
        try {
          value = JSON.parse(data)
          problem = checkMessage(concrete, value)
        } catch {
          problem = 'not JSON'
        }
        if (problem) {
          this.dropped.set(concrete, (this.dropped.get(concrete) ?? 0) + 1)
          this.warn(`warning: dropped an invalid message on ${concrete} (${this.dropped.get(concrete)} so far): ${problem}`)
          return
        }
        handler(value as T & Envelope, concrete)
      },
      queue,
    )
  }
}

export interface LastSeen {
  subject: string
  value: Record<string, unknown>
  seen_at: number
  /** Milliseconds since it was seen. */
  age: number
  stale: boolean
}

/** Marks a subject stale when nothing has come for STALE_PERIODS of its publication period. */
export const STALE_PERIODS = 3

/** Keeps the last valid value of every subject it follows, and when it came. */
export class LiveValues {
  private readonly last = new Map<string, { value: Record<string, unknown>; seen_at: number; period: number }>()

  constructor(private readonly now: () => number = Date.now) {}

  /** Follows `subject` (wildcards allowed), expecting a message every `periodMs`. */
  follow(bus: ContractBus, subject: string, periodMs: number): { unsubscribe(): void } {
    return bus.subscribe(subject, (value, concrete) => this.last.set(concrete, { value, seen_at: this.now(), period: periodMs }))
  }

  values(): LastSeen[] {
    const t = this.now()
    return [...this.last.entries()]
      .map(([subject, v]) => ({
        subject,
        value: v.value,
        seen_at: v.seen_at,
        age: t - v.seen_at,
        stale: t - v.seen_at > STALE_PERIODS * v.period,
      }))
      .sort((a, b) => a.subject.localeCompare(b.subject))
  }
}
