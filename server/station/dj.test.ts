// The DJ's voice and manners: espeak-ng's words at the music's loudness through the true-peak limiter
// (the control: the gain alone, stopped by the ceiling), and a 40-minute hour of track changes in which
// it keeps its minimum interval and its share of the airtime (the control: no limits, a link at every change).
import { spawnSync } from 'node:child_process'
import { describe, expect, test } from 'vitest'
import type { Track } from '../../engine/contracts/station.js'
import { BLOCKS } from '../../engine/station/schedule.js'
import { RATE, resample } from './audio.js'
import { DJ_DEFAULTS, parseWav, script, speak, voice, VoiceDj } from './dj.js'
import { applyGain, integratedLoudness, normalisingGain, truePeak } from './loudness.js'
import type { SwarmWatch } from './swarm.js'

const espeak = spawnSync('espeak-ng', ['--version']).status === 0
const track = (title: string): Track => ({
  id: `${title}.mp3`,
  artist: 'Lattice Choir',
  album: 'First Light',
  title,
  duration_s: 40,
  bpm: 96,
  key: null,
})
// the swarm as the DJ reads it: the order dipped, the medium awake (Morning Drift's speak state)
const dipped = { order: () => 0.2, medium: () => 'awake' } as unknown as SwarmWatch

describe.skipIf(!espeak)('the DJ', () => {
  test("its voice reaches the music's -16 LUFS with its true peak within -1 dBTP; by gain alone (the control) the ceiling stops it short", async () => {
    const text = script(track('Europium Dawn'), track('Standing Echo'), BLOCKS['Morning Drift'], null)
    const v = await voice(text)
    const lufs = integratedLoudness([v.left, v.right], RATE)
    const peak = truePeak([v.left, v.right])
    // the control: the same words, resampled the same way, brought up by the gain alone
    const wav = parseWav(await speak(text))
    const [mono] = await resample([wav.channels[0]], wav.rate)
    const control = [mono, mono.slice()]
    applyGain(control, normalisingGain(control, RATE).gain_db)
    const controlLufs = integratedLoudness(control, RATE)
    process.stderr.write(
      `DJ voice: ${lufs.toFixed(2)} LUFS, true peak ${peak.toFixed(2)} dBTP; gain alone: ${controlLufs.toFixed(2)} LUFS, true peak ${truePeak(control).toFixed(2)} dBTP\n`,
    )
    expect(Math.abs(lufs + 16)).toBeLessThan(0.2)
    expect(peak).toBeLessThanOrEqual(-1)
    expect(controlLufs).toBeLessThan(-16.5)
  })

  test('over 60 changes of track in 40 minutes it keeps 5 minutes between links and at most 10% of the airtime; without limits (the control) it speaks at every change of the first 15', async () => {
    const run = async (settings: typeof DJ_DEFAULTS, changes: number) => {
      let clock = 0
      const dj = new VoiceDj(dipped, true, settings, () => clock)
      const at: number[] = []
      for (let change = 1; change <= changes; change++) {
        clock = change * 40
        const u = await dj.utterance(track(`t${change - 1}`), track(`t${change}`), BLOCKS['Morning Drift'])
        if (!u) continue
        dj.aired(u, BLOCKS['Morning Drift'])
        at.push(clock)
      }
      return { at, share: dj.spoken_s / clock, status: dj.status() }
    }
    const mannered = await run(DJ_DEFAULTS, 60)
    // (the first 15 changes: every link is synthesised, and that is the test's time)
    const control = await run({ off: false, min_interval_s: 0, max_share: 1 }, 15)
    process.stderr.write(
      `DJ over 40 minutes: ${mannered.at.length} links, ${(100 * mannered.share).toFixed(1)}% of the airtime; without limits, over the first 10 minutes: ${control.at.length} links, ${(100 * control.share).toFixed(1)}%\n`,
    )
    expect(control.at).toHaveLength(15)
    expect(control.share).toBeGreaterThan(0.1)
    expect(mannered.at.length).toBeGreaterThanOrEqual(4)
    for (let i = 1; i < mannered.at.length; i++) expect(mannered.at[i] - mannered.at[i - 1]).toBeGreaterThanOrEqual(300)
    expect(mannered.share).toBeLessThanOrEqual(0.1)
    expect(mannered.status).toMatchObject({ enabled: true, min_interval_s: 300, max_share: 0.1, spoken: mannered.at.length })
    expect(mannered.status.quiet).toMatch(/links are at least 300 s apart|of the airtime/)
  }, 120_000)

  test('off, it says why and stays quiet', async () => {
    const dj = new VoiceDj(dipped, true, { ...DJ_DEFAULTS, off: true }, () => 3600)
    expect(await dj.utterance(null, track('x'), BLOCKS['Morning Drift'])).toBeNull()
    expect(dj.status()).toMatchObject({ enabled: false, quiet: 'the DJ is off (SVC_STATION_DJ=off)' })
  })
})
