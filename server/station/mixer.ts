// The mix: one track after another with an equal-power crossfade (cos/sin gains, so two unrelated
// signals keep their summed power through the fade), rendered frame by frame for the encoder.
import { FRAME, RATE, type Pcm } from './audio.js'

export interface Deck<T> {
  item: T
  pcm: Pcm
}

export interface MixEvents<T> {
  /** the next track is wanted (a crossfade will need it): load it and hand it to `cue` */
  want(): void
  /** `item` is now the one on air (at the middle of its crossfade in, or at once for the first) */
  onAir(item: T): void
  /** a frame had to be filled with silence because no track was ready */
  underrun(): void
  /** a voice cued with `voiceOver` has started */
  voiced?(): void
}

/** The music under a voice: 12 dB down, ramped over 150 ms, as radio ducks a bed under speech. */
export const DUCK_DB = -12
const DUCK_RAMP_S = 0.15

export class Mixer<T> {
  private current: Deck<T> | null = null
  private pos = 0
  private next: Deck<T> | null = null
  private wanted = false
  /** where the running crossfade began in the current track (-1: none) and its length */
  private fadeFrom = -1
  private fade = 0
  private readonly left = new Float32Array(FRAME)
  private readonly right = new Float32Array(FRAME)
  /** a voice waiting for the fade into its item, and the one being said (from `pos`) */
  private pending: { pcm: Pcm; item: T } | null = null
  private playing: { pcm: Pcm; pos: number } | null = null
  /** the music's gain now (1, or ducked under a voice) */
  private gain = 1

  /** `crossfade` in samples; a short track fades over at most a quarter of its length. */
  constructor(
    private readonly crossfade: number,
    private readonly events: MixEvents<T>,
  ) {}

  /** Speaks `voice` over the change into the cued track `item`: it starts with the crossfade (at once
   * if that is under way) with the music ducked beneath it, and is dropped if the change is over before. */
  voiceOver(voice: Pcm, item: T): boolean {
    if (this.next?.item !== item) return false
    this.pending = { pcm: voice, item }
    return true
  }

  /** Hands the mixer the track that follows (the first one goes on air at once). */
  cue(deck: Deck<T>): void {
    this.wanted = false
    if (this.current) this.next = deck
    else this.start(deck, 0)
  }

  /** Takes back the cued track while its fade has not begun (a request goes before it); false when
   * the fade is under way or nothing is cued. */
  uncue(): boolean {
    if (!this.next || this.fadeFrom >= 0) return false
    this.next = null
    return true
  }

  /** The item cued to follow, from its cue to the end of its fade in (null while none is). */
  get cued(): T | null {
    return this.next?.item ?? null
  }

  /** True while a crossfade is under way. */
  get fading(): boolean {
    return this.fadeFrom >= 0
  }

  /** True when the next frame would run out of audio: the current track ends within it (or none
   * is on) and the one that follows is still being loaded. */
  get starved(): boolean {
    if (this.next) return false
    return !this.current || this.current.pcm.left.length - this.pos < FRAME
  }

  /** Moves on now: fades into the cued track at once (or, with none cued, drops the current one). */
  skip(): void {
    if (!this.current || this.fadeFrom >= 0) return
    if (!this.next) {
      this.current = null
      this.ask()
      return
    }
    this.fadeFrom = this.pos
    this.fade = Math.max(1, Math.min(this.fadeLength(), this.current.pcm.left.length - this.pos))
  }

  private start(deck: Deck<T>, at: number): void {
    this.current = deck
    this.pos = at
    this.next = null
    this.events.onAir(deck.item)
    this.ask()
  }

  private ask(): void {
    if (this.wanted || this.next) return
    this.wanted = true
    this.events.want()
  }

  private fadeLength(): number {
    const cur = this.current!.pcm.left.length
    const nxt = this.next ? this.next.pcm.left.length : Infinity
    return Math.max(1, Math.min(this.crossfade, Math.floor(cur / 4), Math.floor(nxt / 4)))
  }

  /** The next frame of the mix (views valid until the next call). */
  frame(): { left: Float32Array; right: Float32Array } {
    const L = this.left
    const R = this.right
    let silent = false
    for (let i = 0; i < FRAME; i++) {
      const cur = this.current
      if (!cur) {
        L[i] = R[i] = 0
        silent = true
        continue
      }
      const length = cur.pcm.left.length
      // a fade begins when the next track is there and the current one is within a fade of its end
      // (a track that arrives late fades over what is left)
      if (this.fadeFrom < 0 && this.next && this.pos >= length - this.fadeLength()) {
        this.fadeFrom = this.pos
        this.fade = Math.max(1, Math.min(this.fadeLength(), length - this.pos))
      }
      if (this.fadeFrom >= 0) {
        const next = this.next!
        const k = this.pos - this.fadeFrom
        const theta = ((k + 0.5) / this.fade) * (Math.PI / 2)
        const a = Math.cos(theta)
        const b = Math.sin(theta)
        L[i] = a * cur.pcm.left[this.pos] + b * next.pcm.left[k]
        R[i] = a * cur.pcm.right[this.pos] + b * next.pcm.right[k]
        this.pos++
        // the listener hears the new track from the middle of the fade on
        if (k + 1 === Math.ceil(this.fade / 2)) this.events.onAir(next.item)
        if (k + 1 === this.fade) {
          this.current = next
          this.pos = this.fade
          this.next = null
          this.fadeFrom = -1
          this.ask()
        }
        continue
      }
      if (this.pos >= length) {
        // the track ended with nothing cued: silence until something is
        this.current = null
        this.ask()
        i--
        continue
      }
      L[i] = cur.pcm.left[this.pos]
      R[i] = cur.pcm.right[this.pos]
      this.pos++
    }
    if (silent) this.events.underrun()
    this.speak(L, R)
    return { left: L, right: R }
  }

  /** Mixes the voice (when its change is under way) over the frame, the music ducked beneath it. */
  private speak(L: Float32Array, R: Float32Array): void {
    if (this.pending && !this.playing) {
      // a voice for a change that is over (or was never cued) is not said late
      if (this.next?.item !== this.pending.item) this.pending = null
      else if (this.fadeFrom >= 0) (this.playing = { pcm: this.pending.pcm, pos: 0 }), (this.pending = null), this.events.voiced?.()
    }
    const v = this.playing
    const target = v ? 10 ** (DUCK_DB / 20) : 1
    if (!v && this.gain === 1) return
    const step = (1 - 10 ** (DUCK_DB / 20)) / (DUCK_RAMP_S * RATE)
    for (let i = 0; i < L.length; i++) {
      this.gain = this.gain > target ? Math.max(target, this.gain - step) : Math.min(target, this.gain + step)
      L[i] *= this.gain
      R[i] *= this.gain
      if (v && v.pos < v.pcm.left.length) {
        L[i] += v.pcm.left[v.pos]
        R[i] += v.pcm.right[v.pos++]
      }
    }
    if (v && v.pos >= v.pcm.left.length) this.playing = null
  }
}
