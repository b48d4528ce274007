// The settings the environment gives (README "Environment"), parsed from a plain record. Each edge
// (the CLI, which also starts the server) reads process.env once, through this, and passes it inward.
import { CrystalError } from './errors.js'
import { limitsFromEnv, type RegistryLimits } from './registry/registry.js'

/** Announce only finds at least this persistent (SVC_CRYSTAL_ANNOUNCE_MIN_PERSISTENCE overrides it). */
export const DEFAULT_ANNOUNCE_FLOOR = 0.25

/** Where the swarm's bus is and who this node is on it. */
export interface BusSettings {
  /** SVC_NATS_URL: the bus for processes; without it there is no bus. */
  url?: string
  /** SVC_NATS_CREDS: a NATS credentials file (user JWT and seed). */
  creds?: string
  /** SVC_NATS_WS_URL: the bus's websocket address, told to browser tabs. */
  ws_url?: string
  /** SVC_CRYSTAL_NODE: this node's name on the bus (default crystal-<host>). */
  node?: string
}

export interface Settings {
  /** SVC_CRYSTAL_API_TOKEN: the bearer token of the server's mutating routes. */
  token?: string
  bus: BusSettings
  /** SVC_CONSCIOUSNESS_PERIOD_MS: how often the consciousness subjects are published. */
  consciousness_period_ms?: number
  registry_limits: RegistryLimits
  announce_floor: number
  /** SVC_GALLERY_URL and GALLERY_JWT, for `crystal publish`. */
  gallery: { url?: string; jwt?: string }
  markets: MarketsSettings
  station: StationSettings
}

/** The station's settings (docs/station.md). The library comes from `--music` first, then `music` here, then ./music. */
export interface StationSettings {
  /** SVC_STATION_MUSIC: the library, <artist>/<album>/*.mp3. */
  music?: string
  /** SVC_STATION_PACE: the clock's speed against real time (tests, benchmarks). */
  pace?: number
  /** SVC_STATION_CROSSFADE_S */
  crossfade_s?: number
  /** SVC_ICECAST_URL: send the stream to Icecast as a source, e.g. http://source:pw@127.0.0.1:8000/radio.mp3. */
  icecast_url?: string
  /** SVC_ICECAST_POLL_MS: how often Icecast's listener count is read (default 5,000). */
  icecast_poll_ms?: number
  /** SVC_STATION_SWARM_PERIOD_MS: how often the swarm's publishers publish (stale after three periods;
   * default SVC_CONSCIOUSNESS_PERIOD_MS, else 1,000). */
  swarm_period_ms?: number
  /** With a bus: SVC_STATION_DISK_PATH (/) against SVC_STATION_DISK_THRESHOLD (0.8), SVC_STATION_PRUNE_LOG's
   * age against SVC_STATION_PRUNE_STALE_S (one day), every SVC_STATION_ALERT_PERIOD_MS (one minute). */
  alerts: { disk_path?: string; disk_threshold?: number; prune_log?: string; prune_stale_s?: number; period_ms?: number }
  /** SVC_STATION_TIME_ZONE: the zone the schedule is read in (default America/Chicago). */
  time_zone?: string
  /** SVC_STATION_DJ (on | off), SVC_STATION_DJ_MIN_INTERVAL_S (seconds between links, default 300),
   * SVC_STATION_DJ_MAX_SHARE (the voice's most share of the airtime, 0..1, default 0.1). */
  dj: { off: boolean; min_interval_s?: number; max_share?: number }
}

/** The market engine's settings (docs/markets.md). */
export interface MarketsSettings {
  /** HUB_ORACLE_TOKEN: creates and resolves labs markets; unset, those routes answer 503. */
  oracle_token?: string
  /** SVC_MARKETS_START_BALANCE: the faucet's grant, minor units minted to a household at most once per faucet period (default 100,000 = 1,000.00; 0 turns the faucet off). */
  starting_balance: number
  /** SVC_MARKETS_FAUCET_PERIOD_S: how often a household may draw the faucet (default 86,400: once a day). */
  faucet_period_s: number
  /** SVC_MARKETS_RATE_LIMIT: mutating market requests per minute per client (its bearer token, else its address; default 120; 0 turns the limit off). */
  rate_limit: number
  /** SVC_MARKETS_ALLOW_BROKEN_LEDGER=1: start even when the ledger fails its check (to inspect it); otherwise the server refuses to start. */
  allow_broken_ledger: boolean
  /** SVC_MARKETS_SWEEP_MS: how often play markets past their close are looked for and settled (default 5,000). */
  sweep_ms: number
}

export function settingsFrom(env: Record<string, string | undefined>): Settings {
  const set = (name: string) => env[name] || undefined
  return {
    token: set('SVC_CRYSTAL_API_TOKEN'),
    bus: { url: set('SVC_NATS_URL'), creds: set('SVC_NATS_CREDS'), ws_url: set('SVC_NATS_WS_URL'), node: set('SVC_CRYSTAL_NODE') },
    consciousness_period_ms: Number(env.SVC_CONSCIOUSNESS_PERIOD_MS) || undefined,
    registry_limits: limitsFromEnv(env),
    announce_floor: announceFloor(env.SVC_CRYSTAL_ANNOUNCE_MIN_PERSISTENCE),
    gallery: { url: set('SVC_GALLERY_URL'), jwt: set('GALLERY_JWT') },
    markets: {
      oracle_token: set('HUB_ORACLE_TOKEN'),
      starting_balance: wholeNumber(env, 'SVC_MARKETS_START_BALANCE', 100_000, 0),
      sweep_ms: wholeNumber(env, 'SVC_MARKETS_SWEEP_MS', 5000, 10),
      faucet_period_s: wholeNumber(env, 'SVC_MARKETS_FAUCET_PERIOD_S', 86_400, 0),
      rate_limit: wholeNumber(env, 'SVC_MARKETS_RATE_LIMIT', 120, 0),
      allow_broken_ledger: env.SVC_MARKETS_ALLOW_BROKEN_LEDGER === '1',
    },
    station: {
      music: set('SVC_STATION_MUSIC'),
      pace: positive(env, 'SVC_STATION_PACE'),
      crossfade_s: positive(env, 'SVC_STATION_CROSSFADE_S'),
      icecast_url: set('SVC_ICECAST_URL'),
      icecast_poll_ms: positive(env, 'SVC_ICECAST_POLL_MS'),
      swarm_period_ms: positive(env, 'SVC_STATION_SWARM_PERIOD_MS') ?? (Number(env.SVC_CONSCIOUSNESS_PERIOD_MS) || undefined),
      alerts: {
        disk_path: set('SVC_STATION_DISK_PATH'),
        disk_threshold: positive(env, 'SVC_STATION_DISK_THRESHOLD'),
        prune_log: set('SVC_STATION_PRUNE_LOG'),
        prune_stale_s: positive(env, 'SVC_STATION_PRUNE_STALE_S'),
        period_ms: positive(env, 'SVC_STATION_ALERT_PERIOD_MS'),
      },
      time_zone: set('SVC_STATION_TIME_ZONE'),
      dj: {
        off: onOff(env, 'SVC_STATION_DJ'),
        min_interval_s: env.SVC_STATION_DJ_MIN_INTERVAL_S ? wholeNumber(env, 'SVC_STATION_DJ_MIN_INTERVAL_S', 0, 0) : undefined,
        max_share: share(env, 'SVC_STATION_DJ_MAX_SHARE'),
      },
    },
  }
}

/** true for "off" (the setting's default is on). */
function onOff(env: Record<string, string | undefined>, name: string): boolean {
  const raw = env[name]
  if (raw === undefined || raw === '' || raw === 'on') return false
  if (raw === 'off') return true
  throw new CrystalError('bad_argument', `${name} must be on or off, got "${raw}"`, { field: name })
}

function share(env: Record<string, string | undefined>, name: string): number | undefined {
  const raw = env[name]
  if (raw === undefined || raw === '') return undefined
  const v = Number(raw)
  if (!Number.isFinite(v) || v < 0 || v > 1) throw new CrystalError('bad_argument', `${name} must be a number from 0 to 1, got "${raw}"`, { field: name })
  return v
}

function positive(env: Record<string, string | undefined>, name: string): number | undefined {
  const raw = env[name]
  if (raw === undefined || raw === '') return undefined
  const v = Number(raw)
  if (!Number.isFinite(v) || v <= 0) throw new CrystalError('bad_argument', `${name} must be a positive number, got "${raw}"`, { field: name })
  return v
}

function wholeNumber(env: Record<string, string | undefined>, name: string, fallback: number, min: number): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  const v = Number(raw)
  if (!Number.isSafeInteger(v) || v < min) throw new CrystalError('bad_argument', `${name} must be a whole number >= ${min}, got "${raw}"`, { field: name })
  return v
}

function announceFloor(raw: string | undefined): number {
  const v = raw === undefined || raw === '' ? DEFAULT_ANNOUNCE_FLOOR : Number(raw)
  if (!(v >= 0 && v <= 1)) throw new CrystalError('bad_argument', `SVC_CRYSTAL_ANNOUNCE_MIN_PERSISTENCE must be a number from 0 to 1, got "${raw}"`, { field: 'SVC_CRYSTAL_ANNOUNCE_MIN_PERSISTENCE' })
  return v
}
