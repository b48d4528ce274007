// Detection on constructed stability maps: each shape gets its class, and a signature that does not
// depend on where the shape sits.
import { describe, expect, test } from 'vitest'
import { cosine } from '../util/vector.js'
import { detect } from './detect.js'

const N = 64
/** A stability map from a function of the cell's position in normalized coordinates. */
function map(f: (x: number, y: number) => number, n = N): Float32Array {
  const out = new Float32Array(n * n)
  for (let j = 0; j < n; j++) for (let i = 0; i < n; i++) out[j * n + i] = f((i + 0.5) / n, (j + 0.5) / n)
  return out
}
const gauss = (d2: number, s: number) => Math.exp(-d2 / (2 * s * s))
const ring = (cx: number, cy: number, r = 0.2, w = 0.03) => map((x, y) => gauss((Math.hypot(x - cx, y - cy) - r) ** 2, w))

describe('classes of constructed fields', () => {
  test('a ring is an echo_ring', async () => {
    const [s] = await detect(ring(0.5, 0.5), N)
    expect(s.class).toBe('echo_ring')
    expect(s.features.annularity).toBeGreaterThan(0.9)
    expect(s.features.angular_gaps).toBe(0)
    expect(s.confidence).toBeGreaterThan(0.5)
  })

  test('an elongated bridge is a harmonic_bridge', async () => {
    const [s] = await detect(map((x, y) => gauss((x - 0.5) ** 2, 0.2) * gauss((y - 0.5) ** 2, 0.03)), N)
    expect(s.class).toBe('harmonic_bridge')
    expect(s.features.elongation).toBeGreaterThan(2.5)
  })

  test('a small seed is a memory_seed', async () => {
    const [s] = await detect(map((x, y) => gauss((x - 0.3) ** 2 + (y - 0.7) ** 2, 0.015)), N)
    expect(s.class).toBe('memory_seed')
    expect(s.features.area).toBeLessThan(0.01)
  })

  test('a compact blob is a standing_echo, a field-wide one an attractor_field, a broken ring a phase_knot', async () => {
    expect((await detect(map((x, y) => gauss((x - 0.5) ** 2 + (y - 0.5) ** 2, 0.06)), N))[0].class).toBe('standing_echo')
    expect((await detect(map((x, y) => gauss((x - 0.5) ** 2 + (y - 0.5) ** 2, 0.3)), N))[0].class).toBe('attractor_field')
    // a pinched (elliptical) ring: a hole in the middle, but not a round echo
    const pinched = map((x, y) => gauss((Math.hypot((x - 0.5) / 0.25, (y - 0.5) / 0.12) - 1) ** 2, 0.15))
    const [knot] = await detect(pinched, N)
    expect(knot.features.annularity).toBeGreaterThan(0.5)
    expect(knot.class).toBe('phase_knot')
  })

  test('several structures come out strongest first; an empty map has none', async () => {
    const two = map((x, y) => gauss((x - 0.25) ** 2 + (y - 0.5) ** 2, 0.04) + 0.8 * gauss((x - 0.75) ** 2 + (y - 0.5) ** 2, 0.04))
    const found = await detect(two, N)
    expect(found).toHaveLength(2)
    expect(found[0].features.centroid_x).toBeLessThan(0.5)
    expect(await detect(new Float32Array(N * N), N)).toEqual([])
  })
})

describe('signatures', () => {
  test('the same shape elsewhere on the field has the same signature and hash', async () => {
    const [a] = await detect(ring(0.4, 0.45, 0.15), N)
    const [b] = await detect(ring(0.4 + 10 / N, 0.45 + 7 / N, 0.15), N) // moved by whole cells
    expect(cosine(a.signature, b.signature)).toBeGreaterThan(0.999)
    expect(a.hash).toBe(b.hash)
    expect(Math.hypot(...a.signature)).toBeCloseTo(1, 9)
  })

  test('the same shape at another resolution has a nearly equal signature; a different shape does not', async () => {
    const [a] = await detect(ring(0.5, 0.5), N)
    const [b] = await detect(map((x, y) => gauss((Math.hypot(x - 0.5, y - 0.5) - 0.2) ** 2, 0.03), 128), 128)
    const [c] = await detect(map((x, y) => gauss((x - 0.5) ** 2 + (y - 0.5) ** 2, 0.1)), N)
    expect(cosine(a.signature, b.signature)).toBeGreaterThan(0.95)
    expect(cosine(a.signature, c.signature)).toBeLessThan(0.9)
    expect(a.hash).toMatch(/^[0-9a-f]{64}$/)
  })
})
