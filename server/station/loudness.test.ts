// BS.1770 loudness against its oracle (a 1 kHz sine), the true-peak meter between samples, and the
// normalising gain with and without the true-peak ceiling.
import { describe, expect, test } from 'vitest'
import { applyGain, integratedLoudness, level, normalisingGain, truePeak } from './loudness.js'

const sine = (rate: number, seconds: number, freq: number, amp: number, phase = 0) =>
  Float32Array.from({ length: rate * seconds }, (_, i) => amp * Math.sin((2 * Math.PI * freq * i) / rate + phase))

describe('loudness (ITU-R BS.1770-4)', () => {
  test('a 1 kHz sine of amplitude 0.1 at 48 kHz reads -23.0 LUFS mono and -20.0 LUFS on both stereo channels', () => {
    const s = sine(48000, 10, 1000, 0.1)
    expect(integratedLoudness([s], 48000)).toBeCloseTo(-23.0, 1)
    expect(integratedLoudness([s, s], 48000)).toBeCloseTo(-20.0, 1)
    // the same at the stream's rate: the K-weighting is derived for any rate, not only 48 kHz
    expect(integratedLoudness([sine(44100, 10, 1000, 0.1)], 44100)).toBeCloseTo(-23.0, 1)
  })

  test('the relative gate ignores a long quiet stretch; silence has no loudness', () => {
    const loud = sine(48000, 5, 1000, 0.1)
    const withQuiet = new Float32Array(48000 * 20)
    withQuiet.set(loud)
    withQuiet.set(sine(48000, 15, 1000, 0.001), loud.length) // 40 dB down: below the relative gate
    // the blocks that straddle the step read a little lower; an ungated mean would read -29 LUFS
    expect(Math.abs(integratedLoudness([withQuiet], 48000) + 23)).toBeLessThan(0.2)
    expect(integratedLoudness([new Float32Array(48000 * 2)], 48000)).toBe(-Infinity)
  })

  test('true peak finds the crest between samples that the sample peak misses', () => {
    // a sine at a quarter of the rate sampled 45 degrees off its crest: every sample is 0.707 of the peak
    const s = sine(48000, 1, 12000, 0.5, Math.PI / 4)
    const samplePeak = 20 * Math.log10(Math.max(...s.map(Math.abs)))
    expect(samplePeak).toBeCloseTo(20 * Math.log10(0.5) - 3.01, 1)
    expect(truePeak([s])).toBeCloseTo(20 * Math.log10(0.5), 0)
    expect(Math.abs(truePeak([s]) - 20 * Math.log10(0.5))).toBeLessThan(0.2)
  })

  test('normalising takes a quiet track to -16 LUFS; the -1 dBTP ceiling holds back a peaky one and says so', () => {
    const quiet = [sine(44100, 5, 440, 0.02), sine(44100, 5, 440, 0.02)]
    const n = normalisingGain(quiet, 44100)
    expect(n.peak_limited).toBe(false)
    applyGain(quiet, n.gain_db)
    expect(integratedLoudness(quiet, 44100)).toBeCloseTo(-16, 1)
    expect(truePeak(quiet)).toBeLessThanOrEqual(-1)
    // clicks: loud peaks on a quiet bed, so reaching -16 LUFS would push the peaks over -1 dBTP
    const peaky = sine(44100, 5, 440, 0.01)
    for (let i = 0; i < peaky.length; i += 4410) peaky[i] = 0.9
    const p = normalisingGain([peaky], 44100)
    expect(p.peak_limited).toBe(true)
    applyGain([peaky], p.gain_db)
    expect(truePeak([peaky])).toBeCloseTo(-1, 1)
  })
})

describe('the true-peak limiter', () => {
  test('a peaky signal reaches -16 LUFS with its true peak within -1 dBTP, where the gain alone stops under the target (the control)', () => {
    // bursts twice a second on a quiet bed: -16 LUFS by gain alone would put them far over the ceiling
    const peaky = () => {
      const x = sine(44100, 5, 440, 0.01)
      for (let i = 0; i < x.length; i += 22050) for (let k = 0; k < 40; k++) x[i + k] += 0.3 * Math.sin((2 * Math.PI * 3000 * k) / 44100)
      return [x, x.slice()]
    }
    const control = peaky()
    const gainOnly = normalisingGain(control, 44100)
    applyGain(control, gainOnly.gain_db)
    const levelled = peaky()
    const n = level(levelled, 44100)
    expect(n.peak_limited).toBe(true)
    expect(Math.abs(integratedLoudness(levelled, 44100) + 16)).toBeLessThan(0.15)
    expect(truePeak(levelled)).toBeLessThanOrEqual(-1)
    expect(integratedLoudness(control, 44100)).toBeLessThan(-20)
    // the bed between the clicks is untouched by the limiter beyond its release: it is only raised by the gain
    const bedLevel = (x: Float32Array) => Math.max(...x.subarray(12000, 16000).map(Math.abs))
    expect(20 * Math.log10(bedLevel(levelled[0]) / 0.01)).toBeCloseTo(n.gain_db, 0)
  })

  test('a track that does not need the limiter is levelled by gain alone, sample for sample', () => {
    const quiet = [sine(44100, 5, 440, 0.02), sine(44100, 5, 440, 0.02)]
    const copy = quiet.map((c) => c.slice())
    const n = level(quiet, 44100)
    expect(n.peak_limited).toBe(false)
    applyGain(copy, n.gain_db)
    expect(quiet[0].every((v, i) => v === copy[0][i])).toBe(true)
  })
})
