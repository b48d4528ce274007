// The fast transform against the plain O(T^2) sum that defines it, at powers of two (fft.js) and at
// the other lengths (Bluestein), forward and back.
import { describe, expect, test } from 'vitest'
import { rng } from '../util/rng.js'
import { fourier } from './fourier.js'

/** X_k = sum_j x_j e^{-2 pi i jk / T}: the definition. */
function dft(re: Float64Array, im: Float64Array): [Float64Array, Float64Array] {
  const t = re.length
  const xr = new Float64Array(t)
  const xi = new Float64Array(t)
  for (let k = 0; k < t; k++) {
    for (let j = 0; j < t; j++) {
      const a = (-2 * Math.PI * ((j * k) % t)) / t
      xr[k] += re[j] * Math.cos(a) - im[j] * Math.sin(a)
      xi[k] += re[j] * Math.sin(a) + im[j] * Math.cos(a)
    }
  }
  return [xr, xi]
}

describe('fourier', () => {
  test.each([1, 2, 3, 5, 12, 31, 32, 100, 127, 128, 257])('length %i: the DFT to 1e-9 of the signal, and back', (t) => {
    const rand = rng(t)
    const re = Float64Array.from({ length: t }, () => rand() - 0.5)
    const im = Float64Array.from({ length: t }, () => rand() - 0.5)
    const [xr, xi] = dft(re, im)
    const f = fourier(t)
    const [yr, yi] = [re.slice(), im.slice()]
    f.forward(yr, yi)
    const scale = Math.sqrt(t)
    for (let k = 0; k < t; k++) {
      expect(Math.abs(yr[k] - xr[k])).toBeLessThan(1e-9 * scale)
      expect(Math.abs(yi[k] - xi[k])).toBeLessThan(1e-9 * scale)
    }
    f.inverse(yr, yi)
    for (let k = 0; k < t; k++) {
      expect(Math.abs(yr[k] - re[k])).toBeLessThan(1e-12 * scale)
      expect(Math.abs(yi[k] - im[k])).toBeLessThan(1e-12 * scale)
    }
  })
})
