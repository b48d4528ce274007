// Wire types of the station (DESIGN.md section 12): a track of the library and what is on air,
// as the REST API and the player see them (snake_case, the same objects in code).
import { Type, type Static } from '@sinclair/typebox'
import { ConsciousnessMessage, DreamsMessage } from './consciousness.js'
import './swarm.js' // registers the date-time format

export const TrackSchema = Type.Object(
  {
    /** the file's path under the music directory: <artist>/<album>/<file>.mp3 */
    id: Type.String({ minLength: 1 }),
    artist: Type.String(),
    album: Type.String(),
    title: Type.String(),
    duration_s: Type.Number({ minimum: 0 }),
    /** from the tags (TBPM, TKEY) when the file has them */
    bpm: Type.Union([Type.Number(), Type.Null()]),
    key: Type.Union([Type.String(), Type.Null()]),
  },
  { additionalProperties: false },
)
export type Track = Static<typeof TrackSchema>

export const OnAirSchema = Type.Object(
  {
    track: TrackSchema,
    /** ISO 8601 time the track started on air (the middle of its crossfade in) */
    started_at: Type.String({ format: 'date-time' }),
    /** the gain that brought it to the target, and what it measured before */
    gain_db: Type.Number(),
    lufs_before: Type.Number(),
    peak_limited: Type.Boolean(),
  },
  { additionalProperties: false },
)
export type OnAir = Static<typeof OnAirSchema>

export const IcecastStatusSchema = Type.Object(
  {
    /** the mount, without the password */
    url: Type.String(),
    connected: Type.Boolean(),
    /** listeners on the mount as Icecast last reported them (null: not known, e.g. Icecast down) */
    listeners: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
    listeners_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    reconnects: Type.Integer({ minimum: 0 }),
    last_error: Type.Union([Type.String(), Type.Null()]),
  },
  { additionalProperties: false },
)
export type IcecastStatus = Static<typeof IcecastStatusSchema>

/** What chose a track: the block's mood, the cluster walk after a dream, recency (nothing resonated,
 * or the track was due), or a listener's request. */
export const PickedBySchema = Type.Union([Type.Literal('mood'), Type.Literal('cluster'), Type.Literal('recency'), Type.Literal('request')])
export type PickedBy = Static<typeof PickedBySchema>

export const StationStatusSchema = Type.Object(
  {
    /** the block on now (America/Chicago schedule) and the programme, if one is on */
    block: Type.String(),
    programme: Type.Union([
      Type.Object(
        {
          kind: Type.String(),
          title: Type.String(),
          started_at: Type.String({ format: 'date-time' }),
          ends_at: Type.String({ format: 'date-time' }),
        },
        { additionalProperties: false },
      ),
      Type.Null(),
    ]),
    on_air: Type.Union([OnAirSchema, Type.Null()]),
    /** the track after the one on air: picked ahead, so never null while a track plays */
    up_next: Type.Union([TrackSchema, Type.Null()]),
    /** requested tracks still to play, in order (POST /api/station/requests) */
    requests: Type.Array(TrackSchema),
    /** the time zone the schedule is read in (SVC_STATION_TIME_ZONE) */
    time_zone: Type.String(),
    /** people on this server's /stream (the Icecast relay is not counted: Icecast's own count is in icecast.listeners) */
    listeners: Type.Integer({ minimum: 0 }),
    /** the Icecast source, when SVC_ICECAST_URL is set */
    icecast: Type.Union([IcecastStatusSchema, Type.Null()]),
    /** frames of silence the mix had to send because no track was ready (dead air; 0 on a healthy station) */
    underruns: Type.Integer({ minimum: 0 }),
    /** wall-clock milliseconds the encoder waited for a track still loading (a starved CPU; the
     * listeners' buffers cover it), rather than sending silence */
    waited_ms: Type.Integer({ minimum: 0 }),
    /** times the silence watchdog (over 3 s below -50 dBFS on air) moved on to the next track */
    watchdog_trips: Type.Integer({ minimum: 0 }),
    /** the library as last scanned (again whenever its folder changes) */
    library: Type.Object(
      { tracks: Type.Integer({ minimum: 0 }), skipped: Type.Integer({ minimum: 0 }), scanned_at: Type.String({ format: 'date-time' }) },
      { additionalProperties: false },
    ),
    /** how the last pick was chosen (docs/station.md "Selection"): the medium's state (perceiving the
     * library, none when under two tracks could be perceived, awake, or after a light or deep
     * dream), the traces it holds, and what ranked the pick (a request: the operator) */
    selection: Type.Object(
      {
        medium: Type.Union([
          Type.Literal('perceiving'),
          Type.Literal('none'),
          Type.Literal('awake'),
          Type.Literal('light'),
          Type.Literal('deep'),
        ]),
        traces: Type.Integer({ minimum: 0 }),
        by: Type.Union([PickedBySchema, Type.Null()]),
        resonance: Type.Union([Type.Number(), Type.Null()]),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
)
export type StationStatus = Static<typeof StationStatusSchema>

/** One track as it went on air (GET /api/station/history). */
export const PlaySchema = Type.Object(
  {
    track: TrackSchema,
    started_at: Type.String({ format: 'date-time' }),
    block: Type.String(),
    by: PickedBySchema,
    gain_db: Type.Number(),
  },
  { additionalProperties: false },
)
export type Play = Static<typeof PlaySchema>

export const HistoryQuerySchema = Type.Object(
  { limit: Type.Integer({ minimum: 1, maximum: 500, default: 50 }) },
  { additionalProperties: false },
)
export const HistoryReplySchema = Type.Object(
  { plays: Type.Array(PlaySchema) },
  { additionalProperties: false, description: 'newest first' },
)
export type HistoryReply = Static<typeof HistoryReplySchema>

export const LibraryReplySchema = Type.Object(
  {
    tracks: Type.Array(TrackSchema),
    skipped: Type.Array(Type.Object({ file: Type.String(), reason: Type.String() }, { additionalProperties: false })),
    scanned_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
)
export type LibraryReply = Static<typeof LibraryReplySchema>

export const RequestBodySchema = Type.Object({ track_id: Type.String({ minLength: 1, maxLength: 4096 }) }, { additionalProperties: false })
export const RequestReplySchema = Type.Object(
  {
    track: TrackSchema,
    /** 1: it plays next (after the crossfade under way, if one is) */
    position: Type.Integer({ minimum: 1 }),
    up_next: TrackSchema,
  },
  { additionalProperties: false },
)
export type RequestReply = Static<typeof RequestReplySchema>

export const SkipReplySchema = Type.Object(
  { skipped: TrackSchema, next: Type.Union([TrackSchema, Type.Null()]) },
  { additionalProperties: false },
)
export type SkipReply = Static<typeof SkipReplySchema>

/** A number from the bus with its age: stale when nothing came for three publication periods
 * (DESIGN.md section 8), null while nothing has come at all. */
export const LiveNumberSchema = Type.Object(
  { value: Type.Union([Type.Number(), Type.Null()]), age_s: Type.Union([Type.Number({ minimum: 0 }), Type.Null()]), stale: Type.Boolean() },
  { additionalProperties: false },
)
export type LiveNumber = Static<typeof LiveNumberSchema>

/** The medium's dream state as the bus tells it: awake, or dreaming light or deep; null when unknown or stale. */
export const MediumStateSchema = Type.Union([Type.Literal('awake'), Type.Literal('light'), Type.Literal('deep'), Type.Null()])

/** The swarm fields of the state document (document 2: swarm.queen.phi, swarm.consciousness.phi|xi|order). */
export const SwarmStateSchema = Type.Object(
  {
    /** whether the station follows a bus (SVC_NATS_URL); without one every value is null and stale */
    bus: Type.Boolean(),
    /** the publication period the station expects; a value is stale after three of them */
    period_ms: Type.Number({ exclusiveMinimum: 0 }),
    /** from QUEEN.phase.*: phi is the queen's phase (radians), the circular mean of the agents' phases;
     * order is the mean of their order parameters */
    queen: Type.Object(
      { phi: LiveNumberSchema, order: LiveNumberSchema, agents: Type.Integer({ minimum: 0 }) },
      { additionalProperties: false },
    ),
    /** from SVC.consciousness */
    consciousness: Type.Object(
      { phi: LiveNumberSchema, xi: LiveNumberSchema, order: LiveNumberSchema, level: Type.Union([Type.String(), Type.Null()]) },
      { additionalProperties: false },
    ),
    medium: MediumStateSchema,
  },
  { additionalProperties: false },
)
export type SwarmState = Static<typeof SwarmStateSchema>

/** The voice DJ: when it speaks (docs/station.md) and what it said last. */
export const DjStatusSchema = Type.Object(
  {
    /** false when espeak-ng is not installed or the DJ is off (SVC_STATION_DJ=off) */
    enabled: Type.Boolean(),
    /** it speaks when swarm.consciousness.order is below this and the medium is in the block's speak state */
    order_below: Type.Number(),
    /** and only this long (seconds of stream) after its last link, within this share of the airtime */
    min_interval_s: Type.Number({ minimum: 0 }),
    max_share: Type.Number({ minimum: 0, maximum: 1 }),
    spoken: Type.Integer({ minimum: 0 }),
    /** seconds of voice aired, and their share of the stream's time so far */
    spoken_s: Type.Number({ minimum: 0 }),
    airtime_share: Type.Number({ minimum: 0 }),
    /** why it stayed quiet over the last change of track (null when it spoke, or before any change) */
    quiet: Type.Union([Type.String(), Type.Null()]),
    last: Type.Union([
      Type.Object(
        {
          text: Type.String(),
          at: Type.String({ format: 'date-time' }),
          duration_s: Type.Number({ minimum: 0 }),
          block: Type.String(),
          order: Type.Number(),
          medium: Type.String(),
        },
        { additionalProperties: false },
      ),
      Type.Null(),
    ]),
  },
  { additionalProperties: false },
)
export type DjStatus = Static<typeof DjStatusSchema>

/** GET /api/state: the station, the swarm's fields and the DJ. */
export const StateSchema = Type.Object(
  { station: StationStatusSchema, swarm: SwarmStateSchema, dj: DjStatusSchema },
  { additionalProperties: false },
)
export type State = Static<typeof StateSchema>

const seen = { age_s: Type.Number({ minimum: 0 }), stale: Type.Boolean() }
const { schema_version: _v1, ...consciousnessFields } = ConsciousnessMessage.properties
const { schema_version: _v2, ...dreamFields } = DreamsMessage.properties

/** GET /api/swarm: every agent heard on QUEEN.phase.* and the last SVC.consciousness, each with its age. */
export const SwarmReplySchema = Type.Object(
  {
    bus: Type.Boolean(),
    period_ms: Type.Number({ exclusiveMinimum: 0 }),
    agents: Type.Array(
      Type.Object(
        { agent: Type.String(), sender: Type.String(), phase: Type.Number(), frequency: Type.Number(), order: Type.Number(), ...seen },
        { additionalProperties: false },
      ),
    ),
    consciousness: Type.Union([Type.Object({ ...consciousnessFields, ...seen }, { additionalProperties: false }), Type.Null()]),
    /** invalid messages dropped on receipt */
    dropped: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false },
)
export type SwarmReply = Static<typeof SwarmReplySchema>

/** GET /api/dreams: the medium's dream state and the last dream reports (SVC.dreams), newest first. */
export const DreamsReplySchema = Type.Object(
  {
    medium: MediumStateSchema,
    dreams: Type.Array(Type.Object({ ...dreamFields, age_s: Type.Number({ minimum: 0 }) }, { additionalProperties: false })),
  },
  { additionalProperties: false },
)
export type DreamsReply = Static<typeof DreamsReplySchema>

/** Titles as a listener sees them (ICY StreamTitle, Icecast metadata): "Artist - Title". */
export const streamTitle = (t: Track): string => `${t.artist} - ${t.title}`

// The station's bus messages (DESIGN.md section 12): each with schema_version, ts and the sender's id.
const envelope = {
  schema_version: Type.Literal(1),
  ts: Type.String({ format: 'date-time', minLength: 20 }),
  sender: Type.String({ minLength: 1, maxLength: 128 }),
}

export const RADIO_SUBJECTS = { nowplaying: 'RADIO.nowplaying', disk: 'RADIO.alert.disk', prune: 'RADIO.alert.prune' } as const

/** Sent when a track goes on air. */
export const NowPlayingMessage = Type.Object(
  {
    ...envelope,
    track: TrackSchema,
    block: Type.String({ minLength: 1 }),
    programme: Type.Union([Type.String(), Type.Null()]),
    gain_db: Type.Number(),
    /** people on the station's own /stream (not the Icecast relay) */
    listeners: Type.Integer({ minimum: 0 }),
    /** Icecast's own count on the mount, as last polled (null without Icecast, or while it does not answer) */
    icecast_listeners: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
  },
  { additionalProperties: false, $id: 'RADIO.nowplaying' },
)

/** Sent when the watched file system's usage crosses the threshold (80% of / by default). */
export const DiskAlertMessage = Type.Object(
  {
    ...envelope,
    path: Type.String({ minLength: 1 }),
    used_fraction: Type.Number({ minimum: 0, maximum: 1 }),
    threshold: Type.Number({ minimum: 0, maximum: 1 }),
  },
  { additionalProperties: false, $id: 'RADIO.alert.disk' },
)

/** Sent when the prune job's log has not changed for longer than it should (or is missing: null). */
export const PruneAlertMessage = Type.Object(
  {
    ...envelope,
    log_path: Type.String({ minLength: 1 }),
    last_modified: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    stale_after_s: Type.Number({ exclusiveMinimum: 0 }),
  },
  { additionalProperties: false, $id: 'RADIO.alert.prune' },
)
