// The text encoding's hot loops (engine/encode/text.ts, whose TypeScript functions are the twins) in
// AssemblyScript: the render of a word stream's Gaussian sources and the passes that scale the parts.
// Float64 arithmetic in exactly the twin's order, and exp as fdlibm computes it (V8's Math.exp), so
// the wavefront is bit for bit the TypeScript one (a test checks). Elementwise passes use SIMD (their
// order does not matter); the sum of squares stays sequential, as the twin adds it.

const LN2_HI: f64 = 6.93147180369123816490e-01
const LN2_LO: f64 = 1.90821492927058770002e-10
const INV_LN2: f64 = 1.44269504088896338700e+00
const P1: f64 = 1.66666666666666019037e-01
const P2: f64 = -2.77777777770155933842e-03
const P3: f64 = 6.61375632143793436117e-05
const P4: f64 = -1.65339022054652515390e-06
const P5: f64 = 4.13813679705723846039e-08

/**
 * fdlibm's e_exp.c for -708 < x <= 0 (the render's arguments lie in [-11, 0]): the same operations,
 * so the same result, as V8's Math.exp. Its |x| < 1.5 ln2 branch gives the same k, hi and lo as the
 * general one, so it is folded into it.
 */
@inline function expNeg(x: f64): f64 {
  const hx = <u32>(reinterpret<u64>(x) >> 32) & 0x7fffffff
  let k: i32 = 0
  let hi: f64 = 0
  let lo: f64 = 0
  if (hx > 0x3fd62e42) {
    k = <i32>(INV_LN2 * x - 0.5)
    const t = <f64>k
    hi = x - t * LN2_HI
    lo = t * LN2_LO
    x = hi - lo
  } else if (hx < 0x3e300000) {
    return 1.0 + x
  }
  const t = x * x
  const c = x - t * (P1 + t * (P2 + t * (P3 + t * (P4 + t * P5))))
  if (k == 0) return 1.0 - ((x * c) / (c - 2.0) - x)
  const y = 1.0 - ((lo - (x * c) / (2.0 - c)) - hi)
  return y * reinterpret<f64>(<u64>(0x3ff00000 + (k << 20)) << 32)
}

// The window's columns: squared distances and Gaussian factors (a source reaches at most 8 columns).
const gx = memory.data(8 * 8)
const ex = memory.data(8 * 8)

/**
 * Adds the sources of `count` stream words at `words` (three a source: x, y, sign) to the n x n f32
 * field at `out`: text.ts's renderReference, operation for operation.
 */
export function render(words: usize, count: i32, n: i32, out: usize, margin: f64, radiusCells: f64): void {
  const nf = <f64>n
  const radius = radiusCells / nf
  const reach = 3 * radius
  const reach2 = reach * reach
  const twoR2 = 2 * radius * radius
  const span = 1 - 2 * margin
  for (let k = 0; k + 3 <= count; k += 3) {
    const p = words + (<usize>k << 2)
    const sx = margin + span * (<f64>load<u32>(p) / 4294967296.0)
    const sy = margin + span * (<f64>load<u32>(p, 4) / 4294967296.0)
    const amplitude: f64 = load<u32>(p, 8) & 1 ? 1 : -1
    const x0 = max(0, <i32>Math.floor((sx - reach) * nf))
    const x1 = min(n - 1, <i32>Math.ceil((sx + reach) * nf))
    const y0 = max(0, <i32>Math.floor((sy - reach) * nf))
    const y1 = min(n - 1, <i32>Math.ceil((sy + reach) * nf))
    for (let i = x0; i <= x1; i++) {
      const d = (<f64>i + 0.5) / nf - sx
      const g = d * d
      const o = <usize>(i - x0) << 3
      store<f64>(gx + o, g)
      store<f64>(ex + o, expNeg(-g / twoR2))
    }
    for (let j = y0; j <= y1; j++) {
      const dy = (<f64>j + 0.5) / nf - sy
      const dy2 = dy * dy
      const ey = amplitude * expNeg(-dy2 / twoR2)
      const row = out + ((<usize>j * <usize>n) << 2)
      for (let i = x0; i <= x1; i++) {
        const o = <usize>(i - x0) << 3
        if (load<f64>(gx + o) + dy2 <= reach2) {
          const q = row + (<usize>i << 2)
          store<f32>(q, <f32>(<f64>load<f32>(q) + ey * load<f64>(ex + o)))
        }
      }
    }
  }
}

/** Sum of the squares of `len` f32 at `a`, in f64 and in order (the twin's order: it sets the bits). */
export function sumSquares(a: usize, len: i32): f64 {
  let s: f64 = 0
  for (let i = 0; i < len; i++) {
    const v = <f64>load<f32>(a + (<usize>i << 2))
    s += v * v
  }
  return s
}

// The elementwise passes take len a multiple of 4: the caller pads the fields with zeros, which
// every pass keeps zero. Each lane is the twin's f32 -> f64 operation -> f32, so lanes change nothing.
@inline function low(v: v128): v128 {
  return f64x2.promote_low_f32x4(v)
}
@inline function high(v: v128): v128 {
  return f64x2.promote_low_f32x4(v128.shuffle<f32>(v, v, 2, 3, 0, 1))
}
@inline function pack(lo: v128, hi: v128): v128 {
  return v128.shuffle<f32>(f32x4.demote_f64x2_zero(lo), f32x4.demote_f64x2_zero(hi), 0, 1, 4, 5)
}

/** a[i] = f32(a[i] * s), in f64. */
export function scale(a: usize, len: i32, s: f64): void {
  const sv = f64x2.splat(s)
  for (let i = 0; i < len; i += 4) {
    const p = a + (<usize>i << 2)
    const v = v128.load(p)
    v128.store(p, pack(f64x2.mul(low(v), sv), f64x2.mul(high(v), sv)))
  }
}

/** dst[i] = f32(dst[i] + src[i] * s), in f64. */
export function addScaled(dst: usize, src: usize, len: i32, s: f64): void {
  const sv = f64x2.splat(s)
  for (let i = 0; i < len; i += 4) {
    const o = <usize>i << 2
    const d = v128.load(dst + o)
    const v = v128.load(src + o)
    v128.store(dst + o, pack(f64x2.add(low(d), f64x2.mul(low(v), sv)), f64x2.add(high(d), f64x2.mul(high(v), sv))))
  }
}

/** a[i] = f32(a[i] / d), in f64. */
export function divide(a: usize, len: i32, d: f64): void {
  const dv = f64x2.splat(d)
  for (let i = 0; i < len; i += 4) {
    const p = a + (<usize>i << 2)
    const v = v128.load(p)
    v128.store(p, pack(f64x2.div(low(v), dv), f64x2.div(high(v), dv)))
  }
}

/** The largest |a[i]|. */
export function peakAbs(a: usize, len: i32): f32 {
  let m = f32x4.splat(0)
  for (let i = 0; i < len; i += 4) m = f32x4.max(m, f32x4.abs(v128.load(a + (<usize>i << 2))))
  return max(max(f32x4.extract_lane(m, 0), f32x4.extract_lane(m, 1)), max(f32x4.extract_lane(m, 2), f32x4.extract_lane(m, 3)))
}

/** Where the caller's buffers may start: past the static data (the window above). */
export function heapBase(): usize {
  return (__heap_base + 15) & ~15
}
