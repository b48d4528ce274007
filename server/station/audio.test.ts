// Decoding for the stream: a 48 kHz MP3 is resampled to 44.1 kHz with its pitch and loudness kept
// (the control: the same samples taken as 44.1 kHz, a lower pitch); a file with a corrupt stretch
// plays on without dead air (the control: the decoder's own output has a gap there).
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, test } from 'vitest'
import { createMp3Encoder } from 'wasm-media-encoders'
import { demoLibrary } from '../../testing/services.js'
import { decodeMp3, RATE, resample, trimSilence } from './audio.js'
import { longestSilenceMs } from './listener.js'
import { integratedLoudness } from './loudness.js'

/** The frequency of a steady tone from its rising zero crossings (to a fraction of a hertz over seconds). */
function toneHz(x: Float32Array, rate: number): number {
  const ups: number[] = []
  for (let i = 1; i < x.length; i++) if (x[i - 1] < 0 && x[i] >= 0) ups.push(i - 1 + -x[i - 1] / (x[i] - x[i - 1]))
  return ((ups.length - 1) / (ups[ups.length - 1] - ups[0])) * rate
}

async function mp3At(rate: 48000 | 32000, x: Float32Array): Promise<Uint8Array> {
  const enc = await createMp3Encoder()
  enc.configure({ channels: 2, sampleRate: rate, bitrate: 192, outputSampleRate: rate })
  const parts = [enc.encode([x, x]).slice(), enc.finalize().slice()]
  return Uint8Array.from(parts.flatMap((p) => [...p]))
}

test('a 48 kHz MP3 of a 1 kHz sine comes out at 44.1 kHz, still 1 kHz and as loud; taken as 44.1 kHz unresampled it would be 919 Hz', async () => {
  const from = 48000
  const x = Float32Array.from({ length: 4 * from }, (_, i) => 0.1 * Math.sin((2 * Math.PI * 1000 * i) / from))
  const pcm = trimSilence(await decodeMp3(await mp3At(from, x), 'sine48k.mp3'))
  // 4 s at 48 kHz is 4 s at 44.1 kHz (less the trimmed encoder delay)
  expect(Math.abs(pcm.left.length / RATE - 4)).toBeLessThan(0.06)
  expect(toneHz(pcm.left, RATE)).toBeCloseTo(1000, 0)
  // the control: the decoded samples as they were, read at the stream's rate
  const raw = trimSilence(await decodeMp3Raw(await mp3At(from, x)))
  expect(toneHz(raw.left, RATE)).toBeCloseTo((1000 * RATE) / from, 0)
  // loudness: the file as decoded at 48 kHz (the sine reads -20.0 LUFS on two channels, the BS.1770
  // oracle, give or take what MP3 does to it) and the same audio resampled agree
  const before = integratedLoudness([raw.left, raw.right], from)
  const after = integratedLoudness([pcm.left, pcm.right], RATE)
  expect(Math.abs(before + 20)).toBeLessThan(0.5)
  expect(Math.abs(after - before)).toBeLessThan(0.1)
})

test('resampling keeps a 22,050 Hz voice band: a 300 Hz tone doubles its sample count and keeps its pitch', async () => {
  const from = 22050
  const x = Float32Array.from({ length: from }, (_, i) => 0.3 * Math.sin((2 * Math.PI * 300 * i) / from))
  const [y] = await resample([x], from)
  expect(Math.abs(y.length - 2 * x.length)).toBeLessThanOrEqual(2)
  expect(toneHz(y, RATE)).toBeCloseTo(300, 0)
  expect(Math.abs(integratedLoudness([y], RATE) - integratedLoudness([x], from))).toBeLessThan(0.1)
})

test('an MP3 with 16 KB of garbage in its middle decodes with no silence over 20 ms; the decoder alone leaves 50 ms', async () => {
  const { dir, tracks } = await demoLibrary(14, 4)
  const bytes = Buffer.from(readFileSync(join(dir, tracks[0].artist, tracks[0].album, `01 ${tracks[0].title}.mp3`)))
  let seed = 7
  const at = Math.floor(bytes.length * 0.4)
  for (let i = 0; i < 16000; i++) bytes[at + i] = ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) >> 16) & 0xff
  const played = trimSilence(await decodeMp3(bytes, 'corrupt.mp3'))
  expect(longestSilenceMs(played, -50, 0)).toBeLessThan(20)
  // still most of the track: only the damaged stretch is gone
  expect(played.left.length / RATE).toBeGreaterThan(12)
  // the control: what the decoder itself makes of the same bytes
  expect(longestSilenceMs(trimSilence(await decodeMp3Raw(bytes)), -50, 0)).toBeGreaterThanOrEqual(45)
})

/** The decoder's own output, without the station's resampling: the control's reading. */
async function decodeMp3Raw(bytes: Uint8Array): Promise<{ left: Float32Array; right: Float32Array }> {
  const { MPEGDecoder } = await import('mpg123-decoder')
  const d = new MPEGDecoder()
  await d.ready
  const out = d.decode(bytes)
  d.free()
  return { left: out.channelData[0], right: out.channelData[1] }
}
