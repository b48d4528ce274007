// The station as an Icecast source (SVC_ICECAST_URL = http://source:pw@host:port/mount): the stream's
// bytes by HTTP PUT, reconnecting with backoff, UTF-8 titles by /admin/metadata, listeners polled.
import { connect, type Socket } from 'node:net'
import type { IcecastStatus } from '../../engine/contracts/station.js'
import { CrystalError } from '../../engine/errors.js'
import { BITRATE_KBPS } from './audio.js'
import type { Broadcast } from './stream.js'

const BACKOFF_MS = [250, 500, 1000, 2000, 4000, 8000]

export interface IcecastOptions {
  /** how often listener counts are read from /status-json.xsl (default 5 s) */
  poll_ms?: number
  say?: (line: string) => void
}

/** Listeners on `mount` from Icecast's status document: `icestats.source` is absent with no source,
 * an object with one and an array with several. */
export function listenersOn(status: unknown, mount: string): number | null {
  const source = (status as { icestats?: { source?: unknown } })?.icestats?.source
  const sources = source === undefined ? [] : Array.isArray(source) ? source : [source]
  const ours = sources.find((s) => typeof s?.listenurl === 'string' && new URL(s.listenurl).pathname === mount)
  return ours && typeof ours.listeners === 'number' ? ours.listeners : null
}

export class IcecastSource {
  private readonly url: URL
  private readonly auth: string
  private socket: Socket | undefined
  private attempt = 0
  private retry: NodeJS.Timeout | undefined
  private poller: NodeJS.Timeout | undefined
  private stopped = false
  private readonly say: (line: string) => void
  readonly status: IcecastStatus

  constructor(
    address: string,
    private readonly broadcast: Broadcast,
    o: IcecastOptions = {},
  ) {
    try {
      this.url = new URL(address)
    } catch {
      throw new CrystalError('bad_argument', `SVC_ICECAST_URL is not a URL: ${address} (expected http://source:PASSWORD@HOST:PORT/MOUNT)`, {
        field: 'SVC_ICECAST_URL',
      })
    }
    if (this.url.protocol !== 'http:' || this.url.pathname.length < 2 || !this.url.password) {
      throw new CrystalError(
        'bad_argument',
        `SVC_ICECAST_URL must be http://source:PASSWORD@HOST:PORT/MOUNT, got ${this.url.protocol}//${this.url.host}${this.url.pathname}`,
        { field: 'SVC_ICECAST_URL' },
      )
    }
    this.auth =
      'Basic ' +
      Buffer.from(`${decodeURIComponent(this.url.username || 'source')}:${decodeURIComponent(this.url.password)}`).toString('base64')
    this.say = o.say ?? (() => {})
    this.status = {
      url: `http://${this.url.host}${this.url.pathname}`,
      connected: false,
      listeners: null,
      listeners_at: null,
      reconnects: 0,
      last_error: null,
    }
    broadcast.onTitle((t) => void this.sendTitle(t))
    this.connect()
    const poll = () => void this.poll().finally(() => !this.stopped && (this.poller = setTimeout(poll, o.poll_ms ?? 5000)))
    poll()
  }

  stop(): void {
    this.stopped = true
    clearTimeout(this.retry)
    clearTimeout(this.poller)
    this.socket?.destroy()
  }

  private connect(): void {
    // the relay to Icecast: Icecast counts the people on the mount, and /api/station does not count it
    const out = this.broadcast.listen(false, false)
    let up = false
    let answer = ''
    // a plain socket, as libshout does: Node's HTTP client would frame a body of unknown length as
    // chunked, and Icecast 2.4 relays a source's bytes as they come, chunk headers and all
    const socket = connect(Number(this.url.port || 80), this.url.hostname)
    this.socket = socket
    const fail = (why: string) => {
      out.destroy()
      if (this.socket !== socket) return
      this.socket = undefined
      socket.destroy()
      if (this.stopped) return
      this.status.connected = false
      this.status.last_error = why
      const wait = BACKOFF_MS[Math.min(this.attempt++, BACKOFF_MS.length - 1)]
      this.say(`station: Icecast source ${up ? 'lost' : 'refused'} (${why}); reconnecting in ${wait} ms`)
      this.retry = setTimeout(() => {
        this.status.reconnects++
        this.connect()
      }, wait)
    }
    socket.setNoDelay(true)
    socket.on('connect', () => {
      const headers = [
        `PUT ${this.url.pathname} HTTP/1.1`,
        `Host: ${this.url.host}`,
        `Authorization: ${this.auth}`,
        'User-Agent: resonant-crystal',
        'Content-Type: audio/mpeg',
        'Ice-Name: Resonant Crystal',
        'Ice-Description: A station whose next track resonates with the block',
        'Ice-Genre: Various',
        `Ice-Bitrate: ${BITRATE_KBPS}`,
        'Ice-Public: 0',
        'Expect: 100-continue',
      ]
      socket.write(headers.join('\r\n') + '\r\n\r\n')
    })
    // Icecast 2.4 answers `100 Continue` and then `200 OK` when the mount is free and the password
    // right; any other status is a refusal (401 wrong password, 403 mount in use)
    const onAnswer = (d: Buffer) => {
      answer += d.toString('latin1')
      const statuses = [...answer.matchAll(/HTTP\/1\.\d (\d{3})/g)].map((m) => Number(m[1]))
      const final = statuses.find((c) => c !== 100)
      if (final === undefined) return
      socket.off('data', onAnswer)
      if (final !== 200)
        return fail(`HTTP ${final}${final === 401 ? ': wrong source password' : final === 403 ? ': mount in use or not allowed' : ''}`)
      up = true
      this.attempt = 0
      this.status.connected = true
      this.status.last_error = null
      out.pipe(socket)
      void this.sendTitle(this.broadcast.title)
    }
    socket.on('data', onAnswer)
    socket.on('error', (e) => fail(e.message))
    socket.on('close', () => fail('connection closed'))
  }

  /** Sets the mount's title; non-ASCII arrives intact only with charset=UTF-8. */
  private async sendTitle(title: string): Promise<void> {
    if (!this.status.connected || !title) return
    const q = new URLSearchParams({ mount: this.url.pathname, mode: 'updinfo', song: title, charset: 'UTF-8' })
    try {
      const res = await fetch(`http://${this.url.host}/admin/metadata?${q}`, {
        headers: { authorization: this.auth },
        signal: AbortSignal.timeout(5000),
      })
      await res.arrayBuffer()
      if (!res.ok) this.say(`station: Icecast refused the title (HTTP ${res.status})`)
    } catch (e) {
      this.say(`station: Icecast title not sent (${(e as Error).message})`)
    }
  }

  private async poll(): Promise<void> {
    try {
      const res = await fetch(`http://${this.url.host}/status-json.xsl`, { signal: AbortSignal.timeout(5000) })
      this.status.listeners = listenersOn(await res.json(), this.url.pathname)
      this.status.listeners_at = new Date().toISOString()
    } catch {
      // Icecast down: the count is unknown, and its age shows how long
      this.status.listeners = null
    }
  }
}
