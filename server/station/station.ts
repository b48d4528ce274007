// The station: picks tracks from the library (one ahead, so up_next is always known; requests first),
// decodes and levels each (-16 LUFS, true peak <= -1 dBTP), mixes them with crossfades (the DJ's voice
// over some) and runs one MP3 encoder paced by the clock into the broadcast; it rescans the library
// when its folder changes, and hears the swarm on the bus for /api/state and the DJ.
import { spawnSync } from 'node:child_process'
import { existsSync, watch, type FSWatcher } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { ContractBus } from '../../engine/bus/contract_bus.js'
import type { StationSettings } from '../../engine/config.js'
import { DEFAULT_PERIOD_MS } from '../../engine/consciousness/publisher.js'
import {
  RADIO_SUBJECTS,
  streamTitle,
  type HistoryReply,
  type LibraryReply,
  type OnAir,
  type Play,
  type PickedBy,
  type RequestReply,
  type SkipReply,
  type State,
  type StationStatus,
  type Track,
} from '../../engine/contracts/station.js'
import { decodeMp3, FRAME, RATE, StreamEncoder, trimSilence } from './audio.js'
import { CrystalError } from '../../engine/errors.js'
import { checkTimeZone, scheduleAt, TIME_ZONE, type OnSchedule } from '../../engine/station/schedule.js'
import { pickNext, type Pick as TrackPick } from '../../engine/station/selection.js'
import { scanLibrary, type Library } from './library.js'
import { level, type Normalisation } from './loudness.js'
import { AlertMonitor, type AlertOptions } from './alerts.js'
import { IcecastSource } from './icecast.js'
import { Mixer, type Deck, type MixEvents } from './mixer.js'
import { Broadcast } from './stream.js'
import { Lineup, type Planned } from './lineup.js'
import { LibraryPerception } from './perception.js'
import { DJ_DEFAULTS, VoiceDj, type DjSettings, type Utterance } from './dj.js'
import { SwarmWatch } from './swarm.js'

/** The watchdog's floor (-50 dBFS) and how long the output may stay under it. */
const SILENCE_FLOOR = 10 ** (-50 / 20)
export const WATCHDOG_S = 3
/** How long the encoder may wait for a loading track before it sends silence instead: a stopped
 * stream makes players give up, a short silence does not. */
const MAX_WAIT_MS = 2000
/** Plays kept for GET /api/station/history. */
const HISTORY_KEPT = 500
/** A change in the library's folder is rescanned once it has been quiet this long (a copy in progress
 * fires many events). */
const RESCAN_AFTER_MS = 2000

export interface StationOptions {
  library: Library
  /** crossfade length in seconds (default 4) */
  crossfade_s?: number
  /** audio seconds per wall-clock second: 1 on air; tests and the benchmark run faster */
  pace?: number
  /** how far the encoder runs ahead of the clock, in seconds of audio (default 0.5) */
  lead_s?: number
  /** holds the no-repeat window shorter than half the block's pool (selection.ts) */
  no_repeat?: number
  /** the zone the schedule is read in (default America/Chicago) */
  time_zone?: string
  /** how often the DJ may speak (dj.ts) */
  dj?: Partial<DjSettings>
  /** rescan the library when its folder changes (default true) */
  watch_library?: boolean
  say?: (line: string) => void
  /** the contract bus, when there is one: RADIO.nowplaying goes out on it, and the swarm's subjects
   * (QUEEN.phase.*, SVC.consciousness, SVC.dreams) come in */
  bus?: Pick<ContractBus, 'publish' | 'subscribe' | 'dropped'>
  /** how often the swarm's publishers publish (their values are stale after three periods) */
  swarm_period_ms?: number
  /** send the stream to Icecast as a source (SVC_ICECAST_URL) */
  icecast_url?: string
  icecast_poll_ms?: number
}

interface Loaded extends Normalisation {
  track: Track
  planned: Planned
}

export class Station {
  readonly broadcast = new Broadcast()
  private encoder: StreamEncoder | undefined
  private readonly mixer: Mixer<Loaded>
  private readonly pace: number
  private readonly lead: number
  private readonly noRepeat: number
  private readonly say: (line: string) => void
  readonly timeZone: string
  private library: Library
  /** what has gone on air, oldest first */
  private readonly plays: Play[] = []
  private onAir: OnAir | null = null
  /** picked and not yet on air, in order; the first is in the mixer once it is cued */
  private readonly lineup = new Lineup()
  /** loading, picking, requests and skips run one at a time */
  private chain: Promise<unknown> = Promise.resolve()
  private watcher: FSWatcher | undefined
  private rescanTimer: NodeJS.Timeout | undefined
  private timer: NodeJS.Timeout | undefined
  private icecast: IcecastSource | undefined
  private alerts: AlertMonitor | undefined
  /** the library's perception and the medium that ranks the next track (started once on air) */
  private perception: LibraryPerception | undefined
  private lastPick: TrackPick | undefined
  private lastBy: PickedBy | null = null
  /** samples in a row the mix has sent below the watchdog's floor */
  private quiet = 0
  private t0 = 0
  private produced = 0
  /** frames that had to be silence because no track was ready */
  underruns = 0
  /** tracks that could not be played (their reasons went to `say`) */
  failed = 0
  /** times the silence watchdog cut a track short */
  watchdog_trips = 0
  /** wall-clock milliseconds the encoder waited for a track still loading (on a starved CPU) */
  waited_ms = 0
  private waitingSince: number | undefined
  readonly swarm: SwarmWatch
  readonly dj: VoiceDj
  /** the voice cued over the coming change, until it is on air */
  private spoken: Utterance | undefined

  constructor(private readonly o: StationOptions) {
    this.pace = o.pace ?? 1
    this.lead = o.lead_s ?? 0.5
    this.noRepeat = o.no_repeat ?? Infinity
    this.say = o.say ?? (() => {})
    this.timeZone = checkTimeZone(o.time_zone ?? TIME_ZONE)
    this.library = o.library
    this.swarm = new SwarmWatch(o.bus, o.swarm_period_ms ?? DEFAULT_PERIOD_MS)
    this.dj = new VoiceDj(
      this.swarm,
      spawnSync('espeak-ng', ['--version']).status === 0,
      { ...DJ_DEFAULTS, ...o.dj },
      () => this.produced / RATE,
    )
    const events: MixEvents<Loaded> = {
      want: () => void this.serial(() => this.loadNext()),
      onAir: (l) => {
        this.onAir = {
          track: l.track,
          started_at: new Date().toISOString(),
          gain_db: l.gain_db,
          lufs_before: l.lufs_before,
          peak_limited: l.peak_limited,
        }
        this.broadcast.setTitle(streamTitle(l.track))
        this.lineup.leave(l.planned)
        const now = this.now()
        this.plays.push({ track: l.track, started_at: this.onAir.started_at, block: now.block.name, by: l.planned.by, gain_db: l.gain_db })
        if (this.plays.length > HISTORY_KEPT) this.plays.shift()
        if (o.bus) {
          o.bus.publish(RADIO_SUBJECTS.nowplaying, {
            track: l.track,
            block: now.block.name,
            programme: now.programme?.title ?? null,
            gain_db: l.gain_db,
            listeners: this.broadcast.count,
            icecast_listeners: this.icecast?.status.listeners ?? null,
          })
        }
      },
      underrun: () => this.underruns++,
      voiced: () => {
        if (!this.spoken) return
        this.dj.aired(this.spoken, this.now().block)
        this.say(
          `station: the DJ says "${this.spoken.text}" (${this.dj.last!.duration_s.toFixed(2)} s; order ${this.spoken.order.toFixed(2)}, the medium ${this.spoken.medium})`,
        )
        this.spoken = undefined
      },
    }
    this.mixer = new Mixer<Loaded>(Math.round((o.crossfade_s ?? 4) * RATE), events)
  }

  /** Loads the first track, then keeps the encoder `lead_s` ahead of the clock. */
  async start(): Promise<void> {
    // the encoder compiles while the first track decodes: both stand between the start and first audio
    const [encoder] = await Promise.all([StreamEncoder.create(), this.serial(() => this.loadNext())])
    this.encoder = encoder
    this.t0 = performance.now()
    this.tick()
    this.perception = this.perceive()
    if (this.o.icecast_url)
      this.icecast = new IcecastSource(this.o.icecast_url, this.broadcast, { poll_ms: this.o.icecast_poll_ms, say: this.say })
    if (this.o.watch_library !== false) this.watchLibrary()
  }

  private now(): OnSchedule {
    return scheduleAt(new Date(), this.timeZone)
  }

  private perceive(known?: ReadonlyMap<string, Float64Array>): LibraryPerception {
    return new LibraryPerception(this.library.dir, this.library.tracks, this.say, () => this.now().block, known)
  }

  private serial<T>(f: () => Promise<T>): Promise<T> {
    const run = this.chain.then(f)
    this.chain = run.catch(() => {})
    return run
  }

  /** Rescans the library when anything under its folder changes (after RESCAN_AFTER_MS of quiet). */
  private watchLibrary(): void {
    try {
      this.watcher = watch(this.library.dir, { recursive: true }, () => {
        clearTimeout(this.rescanTimer)
        this.rescanTimer = setTimeout(() => void this.rescan(), RESCAN_AFTER_MS)
      })
      this.watcher.on('error', (e) => this.say(`station: the library is no longer watched (${e.message})`))
    } catch (e) {
      this.say(`station: cannot watch ${this.library.dir} for changes (${(e as Error).message}); the library is read once`)
    }
  }

  /** Reads the library again: new tracks join (perceived, then in the medium), removed ones leave the
   * lineup and the requests; a folder left with nothing playable keeps the library as it was. */
  async rescan(): Promise<void> {
    let next: Library
    try {
      next = await scanLibrary(this.library.dir)
    } catch (e) {
      return this.say(`station: rescan kept the library as it was: ${(e as Error).message}`)
    }
    await this.serial(async () => {
      const before = new Set(this.library.tracks.map((t) => t.id))
      const ids = new Set(next.tracks.map((t) => t.id))
      const added = next.tracks.filter((t) => !before.has(t.id)).length
      const removed = [...before].filter((id) => !ids.has(id)).length
      this.lineup.keepOnly(ids, this.mixer.cued?.planned)
      this.library = next
      for (const s of next.skipped) this.say(`station: skipped ${s.file}: ${s.reason}`)
      const old = this.perception
      this.perception = this.perceive(old?.raw)
      old?.close()
      if (this.lineup.length < 2) await this.pickAhead()
      this.say(`station: library rescanned: ${next.tracks.length} tracks (${added} new, ${removed} gone)`)
    })
  }

  /** GET /api/station/library */
  libraryReply(): LibraryReply {
    return { tracks: this.library.tracks, skipped: this.library.skipped, scanned_at: this.library.scanned_at }
  }

  /** GET /api/station/history: the last `limit` plays, newest first. */
  historyReply(limit: number): HistoryReply {
    return { plays: this.plays.slice(-limit).reverse() }
  }

  /** Queues a library track to play next (after earlier requests, and after a crossfade already under
   * way): a track cued but not yet fading in gives way to it. */
  request(trackId: string): Promise<RequestReply> {
    const track = this.library.tracks.find((t) => t.id === trackId)
    if (!track)
      throw new CrystalError('not_found', `no track ${trackId} in the library (GET /api/station/library lists the ids)`, {
        field: 'track_id',
      })
    return this.serial(async () => {
      this.mixer.uncue()
      // a track fading in stays first (until the middle of the fade it is still in the lineup)
      const planned: Planned = { track, by: 'request' }
      this.lineup.request(planned, this.lineup.first === this.mixer.cued?.planned)
      this.lastBy = 'request'
      this.lastPick = undefined
      await this.loadNext()
      return { track, position: this.lineup.placeOf(planned), up_next: this.lineup.first!.track }
    })
  }

  /** Fades into the next track now. */
  skip(): Promise<SkipReply> {
    return this.serial(async () => {
      const refuse = () => {
        if (!this.onAir) throw new CrystalError('conflict', 'nothing is on air to skip')
        if (this.mixer.fading)
          throw new CrystalError(
            'conflict',
            `a change of track is already under way (into ${this.lineup.first?.track.id ?? 'the next track'})`,
          )
      }
      refuse()
      await this.loadNext()
      // the mix plays on while the next track loads: a fade may have begun, or ended with another track
      // on air (a CI run skipped one track and named the one before it), so both are asked again here
      refuse()
      const on = this.onAir!.track
      this.mixer.skip()
      this.say(`station: skipped ${on.id}`)
      return { skipped: on, next: this.mixer.cued?.track ?? null }
    })
  }

  /** Runs the alert monitor for as long as the station runs. */
  watchAlerts(monitor: AlertMonitor): void {
    this.alerts = monitor
    monitor.start()
  }

  stop(): void {
    this.watcher?.close()
    clearTimeout(this.rescanTimer)
    this.perception?.close()
    this.swarm.stop()
    this.alerts?.stop()
    this.icecast?.stop()
    clearTimeout(this.timer)
    this.timer = undefined
    this.broadcast.close()
  }

  status(): StationStatus {
    const now = this.now()
    return {
      selection: {
        medium: this.perception?.state ?? 'perceiving',
        traces: this.perception?.medium?.traces.length ?? 0,
        by: this.lastBy,
        resonance: this.lastPick?.resonance ?? null,
      },
      block: now.block.name,
      programme: now.programme && {
        kind: now.programme.kind,
        title: now.programme.title,
        started_at: now.programme.started_at.toISOString(),
        ends_at: now.programme.ends_at.toISOString(),
      },
      on_air: this.onAir,
      up_next: this.lineup.first?.track ?? null,
      requests: this.lineup.requests(),
      time_zone: this.timeZone,
      listeners: this.broadcast.count,
      icecast: this.icecast ? { ...this.icecast.status } : null,
      watchdog_trips: this.watchdog_trips,
      waited_ms: Math.round(this.waited_ms),
      underruns: this.underruns,
      library: { tracks: this.library.tracks.length, skipped: this.library.skipped.length, scanned_at: this.library.scanned_at },
    }
  }

  /** GET /api/state: the station, the swarm's fields, the DJ. */
  state(): State {
    return { station: this.status(), swarm: this.swarm.state(), dj: this.dj.status() }
  }

  /** Encodes what the clock asks for (a bounded amount per turn, so requests and the loading of
   * the next track get their turns). While the next track is still loading the encoder waits for it
   * (listeners play from their buffer) for up to MAX_WAIT_MS before it fills in silence. */
  private tick(): void {
    const now = performance.now()
    const due = ((now - this.t0) / 1000) * this.pace + this.lead
    for (let frames = 0; this.produced / RATE < due && frames < 16; frames++) {
      if (this.mixer.starved) {
        this.waitingSince ??= now
        if (now - this.waitingSince < MAX_WAIT_MS) break
      } else if (this.waitingSince !== undefined) {
        this.waited_ms += now - this.waitingSince
        this.waitingSince = undefined
      }
      const { left, right } = this.mixer.frame()
      this.watch(left, right)
      this.broadcast.send(this.encoder!.encode(left, right))
      this.produced += FRAME
    }
    this.timer = setTimeout(() => this.tick(), 10)
  }

  /** The silence watchdog: more than WATCHDOG_S of output below -50 dBFS (a track with a hole in it,
   * a stuck deck) and the mix moves on to the next track. */
  private watch(left: Float32Array, right: Float32Array): void {
    let loud = false
    for (let i = 0; i < left.length && !loud; i++) loud = Math.abs(left[i]) > SILENCE_FLOOR || Math.abs(right[i]) > SILENCE_FLOOR
    this.quiet = loud ? 0 : this.quiet + left.length
    if (this.quiet < WATCHDOG_S * RATE) return
    this.quiet = 0
    this.watchdog_trips++
    this.say(`station: ${WATCHDOG_S} s of silence on air; moving on from ${this.onAir?.track.id ?? 'nothing'}`)
    this.mixer.skip()
  }

  /** Picks one more track onto the end of the lineup, by the block's rules and the medium. */
  private async pickAhead(): Promise<void> {
    const block = this.now().block
    const onAir = this.lineup.last?.track.id ?? this.onAir?.track.id ?? null
    const tracks = this.library.tracks
    const order = this.lineup.order()
    const pick = this.perception
      ? await this.perception.pick(block, order, this.noRepeat, onAir)
      : pickNext(tracks, block, order, this.noRepeat)
    this.lastPick = pick
    this.lastBy = pick.by
    this.lineup.push({ track: pick.track, by: pick.by })
  }

  /** Decodes, trims and levels the first track of the lineup and cues it, then picks the one after
   * it (so up_next is known as soon as the cued track goes on air); a track that fails is reported
   * and the next is tried, so a corrupt file costs no air time. Runs in the chain (`serial`); with a
   * track already cued (or still fading in) there is nothing to do until the mixer wants the next. */
  private async loadNext(): Promise<void> {
    if (this.mixer.cued) return
    for (let attempt = 0; attempt < Math.min(this.library.tracks.length, 8); attempt++) {
      if (this.lineup.length === 0) await this.pickAhead()
      const planned = this.lineup.first!
      const { track } = planned
      try {
        const pcm = trimSilence(await decodeMp3(await readFile(join(this.library.dir, track.id)), track.id))
        if (pcm.left.length < RATE) throw new Error('shorter than one second after trimming its silence')
        const channels = [pcm.left.slice(), pcm.right.slice()]
        const gain = level(channels, RATE)
        const deck: Deck<Loaded> = { item: { track, planned, ...gain }, pcm: { left: channels[0], right: channels[1] } }
        const from = this.onAir?.track ?? null
        this.mixer.cue(deck)
        if (from && this.mixer.cued === deck.item) void this.announce(from, deck.item)
        if (this.lineup.length < 2) await this.pickAhead()
        return
      } catch (e) {
        this.lineup.leave(planned)
        this.failed++
        this.say(`station: skipping ${track.id}: ${(e as Error).message}`)
      }
    }
    this.say('station: no playable track found in 8 attempts; retrying in 5 s')
    setTimeout(() => void this.serial(() => this.loadNext()), 5000).unref()
  }

  /** Has the DJ speak over the change into `next` when the medium calls for it (dj.ts). */
  private async announce(from: Track, next: Loaded): Promise<void> {
    try {
      const u = await this.dj.utterance(from, next.track, this.now().block)
      if (!u) return
      if (this.mixer.voiceOver(u.pcm, next)) this.spoken = u
      else this.say(`station: the DJ was too late for the change into ${next.track.id}`)
    } catch (e) {
      this.say(`station: the DJ is silent: ${(e as Error).message}`)
    }
  }
}

export interface StationConfig {
  dir: string
  pace?: number
  crossfade_s?: number
  icecast_url?: string
  icecast_poll_ms?: number
  swarm_period_ms?: number
  alerts?: AlertOptions
  time_zone?: string
  dj?: Partial<DjSettings>
}

/** The station's configuration: the library from `--music DIR`, else SVC_STATION_MUSIC, else ./music
 * when it exists (otherwise no station); the rest from the settings (engine/config.ts, docs/station.md). */
export function stationConfig(flag: string | undefined, s: StationSettings, cwd: string): StationConfig | undefined {
  const dir = flag || s.music || (existsSync(join(cwd, 'music')) ? join(cwd, 'music') : undefined)
  if (!dir) return undefined
  const dj = {
    off: s.dj.off,
    ...(s.dj.min_interval_s !== undefined && { min_interval_s: s.dj.min_interval_s }),
    ...(s.dj.max_share !== undefined && { max_share: s.dj.max_share }),
  }
  return {
    dir,
    pace: s.pace,
    crossfade_s: s.crossfade_s,
    icecast_url: s.icecast_url,
    icecast_poll_ms: s.icecast_poll_ms,
    swarm_period_ms: s.swarm_period_ms,
    alerts: s.alerts,
    time_zone: s.time_zone && checkTimeZone(s.time_zone),
    dj,
  }
}

/** Scans the library and puts the station on air. */
export async function openStation(
  c: StationConfig,
  say: (line: string) => void,
  bus?: Pick<ContractBus, 'publish' | 'subscribe' | 'dropped'>,
): Promise<Station> {
  const library = await scanLibrary(c.dir)
  for (const s of library.skipped) say(`station: skipped ${s.file}: ${s.reason}`)
  const station = new Station({ library, ...c, say, bus })
  await station.start()
  if (bus) station.watchAlerts(new AlertMonitor(bus, c.alerts ?? {}))
  say(
    `station: ${library.tracks.length} tracks from ${c.dir} on air at /stream${c.pace && c.pace !== 1 ? ` (paced ${c.pace}x real time)` : ''}`,
  )
  return station
}
