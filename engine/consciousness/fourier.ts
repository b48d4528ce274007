// The discrete Fourier transform of any length in O(T log T), for phi's phase-randomised surrogates:
// fft.js (radix-4) where T is a power of two, Bluestein's chirp-z over fft.js for every other T.
import FFT from 'fft.js'

/** Forward (e^{-2 pi i jk / T}) and inverse (e^{+2 pi i jk / T}, divided by T) transforms of length t, in place. */
export interface Fourier {
  readonly length: number
  forward(re: Float64Array, im: Float64Array): void
  inverse(re: Float64Array, im: Float64Array): void
}

export function fourier(t: number): Fourier {
  return t >= 2 && (t & (t - 1)) === 0 ? radix(t) : bluestein(t)
}

/** fft.js over interleaved (re, im) arrays; a length of 1 is its own transform. */
function radix(t: number): Fourier {
  if (t < 2) return { length: t, forward() {}, inverse() {} }
  const plan = new FFT(t)
  const data = plan.createComplexArray() as number[]
  const out = plan.createComplexArray() as number[]
  const run = (re: Float64Array, im: Float64Array, inverse: boolean) => {
    for (let k = 0; k < t; k++) {
      data[2 * k] = re[k]
      data[2 * k + 1] = im[k]
    }
    if (inverse) plan.inverseTransform(out, data)
    else plan.transform(out, data)
    for (let k = 0; k < t; k++) {
      re[k] = out[2 * k]
      im[k] = out[2 * k + 1]
    }
  }
  return { length: t, forward: (re, im) => run(re, im, false), inverse: (re, im) => run(re, im, true) }
}

/**
 * L. Bluestein, "A linear filtering approach to the computation of the discrete Fourier transform"
 * (1970): with 2jk = j^2 + k^2 - (k - j)^2, X_k = w_k sum_j (x_j w_j) conj(w_{k-j}), w_j = e^{-i pi j^2 / T},
 * a circular convolution of length M >= 2T - 1 that a power-of-two FFT computes.
 */
function bluestein(t: number): Fourier {
  let m = 2
  while (m < 2 * t - 1) m *= 2
  const inner = radix(m)
  // w_j, with j^2 taken mod 2T so the angle stays exact for long windows
  const wr = Float64Array.from({ length: t }, (_, j) => Math.cos((Math.PI * ((j * j) % (2 * t))) / t))
  const wi = Float64Array.from({ length: t }, (_, j) => -Math.sin((Math.PI * ((j * j) % (2 * t))) / t))
  // the spectrum of the filter conj(w_j), laid out circularly (j and M - j)
  const br = new Float64Array(m)
  const bi = new Float64Array(m)
  for (let j = 0; j < t; j++) {
    br[j] = br[(m - j) % m] = wr[j]
    bi[j] = bi[(m - j) % m] = -wi[j]
  }
  inner.forward(br, bi)
  const ar = new Float64Array(m)
  const ai = new Float64Array(m)
  const forward = (re: Float64Array, im: Float64Array) => {
    ar.fill(0)
    ai.fill(0)
    for (let j = 0; j < t; j++) [ar[j], ai[j]] = [re[j] * wr[j] - im[j] * wi[j], re[j] * wi[j] + im[j] * wr[j]]
    inner.forward(ar, ai)
    for (let k = 0; k < m; k++) [ar[k], ai[k]] = [ar[k] * br[k] - ai[k] * bi[k], ar[k] * bi[k] + ai[k] * br[k]]
    inner.inverse(ar, ai)
    for (let k = 0; k < t; k++) [re[k], im[k]] = [ar[k] * wr[k] - ai[k] * wi[k], ar[k] * wi[k] + ai[k] * wr[k]]
  }
  // the inverse through the forward: conj(F(conj(X))) / T
  const inverse = (re: Float64Array, im: Float64Array) => {
    for (let k = 0; k < t; k++) im[k] = -im[k]
    forward(re, im)
    for (let k = 0; k < t; k++) [re[k], im[k]] = [re[k] / t, -im[k] / t]
  }
  return { length: t, forward, inverse }
}
