// Wave memory: phase patterns stored, recalled from damaged cues, aged, and dreamed.
import { describe, expect, test } from 'vitest'
import { rng } from '../util/rng.js'
import { RECOGNIZED, WaveMemory } from './wave.js'

const N = 200
const pattern = (seed: number) => {
  const rand = rng(seed)
  return Float64Array.from({ length: N }, () => 2 * Math.PI * rand())
}

describe('wave memory', () => {
  test('a damaged cue settles onto the stored pattern it came from', () => {
    const m = new WaveMemory(N)
    for (let k = 0; k < 5; k++) m.store(pattern(k + 1), `p${k}`)
    const rand = rng(99)
    // 40% of the phases scrambled, and a global phase shift (phase memories ignore it)
    const cue = pattern(3).map((t) => (rand() < 0.4 ? 2 * Math.PI * rand() : t) + 1.234)
    const [top, second] = m.recall(cue, 2)
    expect(top.label).toBe('p2')
    expect(top.overlap).toBeGreaterThan(0.95)
    expect(second.overlap).toBeLessThan(0.3)
  })

  test('strengths decay as exp(-decay t)', () => {
    const m = new WaveMemory(N, { decay: 0.1, learning_rate: 0.1, settle_iterations: 8 })
    m.store(pattern(1), 'a', 2)
    m.age(10)
    expect(m.recall(pattern(1), 1)[0].strength).toBeCloseTo(2 * Math.exp(-1), 12)
  })

  test('dreaming strengthens the memories random cues settle onto, and counts the rest as hallucinations', () => {
    const m = new WaveMemory(N)
    m.store(pattern(1), 'a')
    m.store(pattern(2), 'b')
    const tally = m.dream(20, 7)
    expect(tally.samples).toBe(20)
    expect(tally.memories_strengthened + tally.hallucinations).toBe(20)
    expect(tally.memories_strengthened).toBeGreaterThan(10)
    const strengths = m.recall(pattern(1), 2).map((r) => r.strength)
    expect(strengths.reduce((s, x) => s + x, 0)).toBeCloseTo(2 + 0.1 * tally.memories_strengthened, 9)
    // with nothing stored, every dream is a hallucination
    expect(new WaveMemory(N).dream(5, 1)).toEqual({ samples: 5, memories_strengthened: 0, hallucinations: 5 })
    expect(RECOGNIZED).toBe(0.8)
  })

  test('serializes to JSON and back', () => {
    const m = new WaveMemory(N)
    m.store(pattern(1), 'a', 0.7)
    const back = WaveMemory.fromJSON(JSON.parse(JSON.stringify(m)))
    expect(back.toJSON()).toEqual(m.toJSON())
    expect(back.recall(pattern(1), 1)).toEqual(m.recall(pattern(1), 1))
  })
})
