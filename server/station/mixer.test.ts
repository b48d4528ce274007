// The crossfade: equal-power gains keep two unrelated signals' power level through the fade (a
// linear fade, the control, dips 3 dB in its middle); the new title goes on air mid-fade.
import { describe, expect, test } from 'vitest'
import { FRAME, RATE, type Pcm } from './audio.js'
import { Mixer } from './mixer.js'

function noise(seconds: number, seed: number): Pcm {
  let s = seed >>> 0
  const next = () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32) * 2 - 1
  const left = Float32Array.from({ length: seconds * RATE }, next)
  return { left, right: left.slice() }
}

const power = (x: Float32Array, from: number, to: number) => {
  let p = 0
  for (let i = from; i < to; i++) p += x[i] * x[i]
  return p / (to - from)
}

function mix(decks: Pcm[], crossfade: number, frames: number) {
  const onAir: { item: number; at: number }[] = []
  let rendered = 0
  let underruns = 0
  let queue = 1
  const mixer: Mixer<number> = new Mixer<number>(crossfade, {
    want: () => queueMicrotask(() => queue < decks.length && mixer.cue({ item: queue, pcm: decks[queue++] })),
    onAir: (item) => onAir.push({ item, at: rendered }),
    underrun: () => underruns++,
  })
  mixer.cue({ item: 0, pcm: decks[0] })
  return (async () => {
    const out = new Float32Array(frames * FRAME)
    for (let f = 0; f < frames; f++) {
      await Promise.resolve() // let a cue land, as the event loop does between frames
      const { left } = mixer.frame()
      out.set(left, f * FRAME)
      rendered += FRAME
    }
    return { out, onAir, underruns }
  })()
}

describe('equal-power crossfade', () => {
  test('two unrelated tracks keep their power through the fade, where a linear fade dips 3 dB', async () => {
    const fade = 2 * RATE
    const a = noise(10, 1)
    const b = noise(10, 2)
    const { out, onAir, underruns } = await mix([a, b], fade, Math.floor((16 * RATE) / FRAME))
    expect(underruns).toBe(0)
    const start = a.left.length - fade
    const mid = start + fade / 2
    const whole = power(a.left, 0, a.left.length)
    const db = (p: number) => 10 * Math.log10(p / whole)
    // the middle 10% of the fade, against the same stretch of a linear fade of the same two signals
    const from = mid - fade / 20
    const to = mid + fade / 20
    const linear = Float32Array.from({ length: to - from }, (_, j) => {
      const k = from + j - start
      const t = (k + 0.5) / fade
      return (1 - t) * a.left[from + j] + t * b.left[k]
    })
    expect(Math.abs(db(power(out, from, to)))).toBeLessThan(0.3)
    expect(db(power(linear, 0, linear.length))).toBeLessThan(-2.5)
    // the second track goes on air in the middle of the fade (to the frame)
    expect(onAir.map((o) => o.item)).toEqual([0, 1])
    expect(Math.abs(onAir[1].at - mid)).toBeLessThanOrEqual(FRAME)
  })

  test('a track ends with nothing cued: silence, counted as underruns, until one is', async () => {
    const only = noise(1, 3)
    const { out, underruns } = await mix([only], RATE, Math.floor((2 * RATE) / FRAME))
    expect(underruns).toBeGreaterThan(0)
    expect(power(out, only.left.length + FRAME, out.length)).toBe(0)
  })
})

describe('a voice over the change', () => {
  test('starts with the crossfade, ducks the music 12 dB beneath it, and lets it back up when it ends; a voice for a track not cued is refused', async () => {
    const ones = (seconds: number): Pcm => ({
      left: new Float32Array(seconds * RATE).fill(0.5),
      right: new Float32Array(seconds * RATE).fill(0.5),
    })
    const fade = RATE
    const a = ones(6)
    const b = ones(10)
    const voice = { left: new Float32Array(2 * RATE).fill(0.01), right: new Float32Array(2 * RATE).fill(0.01) }
    let voicedAt = -1
    let rendered = 0
    const mixer: Mixer<number> = new Mixer<number>(fade, {
      want: () => undefined,
      onAir: () => undefined,
      underrun: () => undefined,
      voiced: () => (voicedAt = rendered),
    })
    mixer.cue({ item: 0, pcm: a })
    expect(mixer.voiceOver(voice, 1)).toBe(false)
    mixer.cue({ item: 1, pcm: b })
    expect(mixer.voiceOver(voice, 1)).toBe(true)
    const out = new Float32Array(Math.floor((9 * RATE) / FRAME) * FRAME)
    for (let f = 0; f < out.length / FRAME; f++, rendered += FRAME) out.set(mixer.frame().left, f * FRAME)
    // the fade begins a second before a's end; the voice with it (to the frame)
    const fadeStart = a.left.length - fade
    expect(Math.abs(voicedAt - fadeStart)).toBeLessThanOrEqual(FRAME)
    // 1.5 s into the voice (the fade done, the ramp long over): music at 0.5 ducked 12 dB, plus the voice
    const during = out[voicedAt + 1.5 * RATE]
    expect(20 * Math.log10((during - 0.01) / 0.5)).toBeCloseTo(-12, 1)
    // half a second after it ends, the music is back at full level
    expect(out[voicedAt + 2 * RATE + RATE / 2]).toBeCloseTo(0.5, 5)
    // the control: before the change the music was never ducked
    expect(out[fadeStart - FRAME]).toBeCloseTo(0.5, 5)
  })
})
