// The text encoding's hot loops in AssemblyScript, three sections: encoding version 2 (twins in
// engine/encode/text.ts), version 3 (twins in engine/encode/text3.ts) and blake3's output for the word
// streams (its control is hash-wasm). Version 2: the render of a word stream's Gaussian sources and the
// passes that scale the parts, float64 arithmetic in exactly the twin's order and exp as fdlibm
// computes it (V8's Math.exp), so the wavefront is bit for bit the TypeScript one (a test checks).
// Elementwise passes use SIMD (their order does not matter); the sum of squares stays sequential.

const LN2_HI: f64 = 6.93147180369123816490e-01
const LN2_LO: f64 = 1.90821492927058770002e-10
const INV_LN2: f64 = 1.44269504088896338700e+00
const P1: f64 = 1.66666666666666019037e-01
const P2: f64 = -2.77777777770155933842e-03
const P3: f64 = 6.61375632143793436117e-05
const P4: f64 = -1.65339022054652515390e-06
const P5: f64 = 4.13813679705723846039e-08

/**
 * fdlibm's e_exp.c (V8's Math.exp) on two lanes, for -708 < x <= 0 (the render's arguments lie in
 * [-11, 0]): the same operations, so the same result, as the scalar code. Its branches collapse into
 * one formula: for |x| < 1.5 ln2 the general reduction gives the same k, hi and lo; for k = 0 (hi = x,
 * lo = 0, 2^k = 1) the last step equals its k = 0 form, since (x c)/(c - 2) = -((x c)/(2 - c))
 * exactly. Only |x| < 2^-28 keeps its own answer, 1 + x.
 */
@inline function expNeg2(x: v128): v128 {
  const absx = f64x2.abs(x)
  const reduce = f64x2.gt(absx, f64x2.splat(reinterpret<f64>(0x3fd62e42ffffffff))) // high word > 0x3fd62e42
  const tiny = f64x2.lt(absx, f64x2.splat(reinterpret<f64>(0x3e30000000000000))) // high word < 0x3e300000
  // k in i32 lanes 0 and 1, 0 where fdlibm does not reduce (the mask's low words, as i32 lanes)
  const kMask = v128.shuffle<i32>(reduce, i32x4.splat(0), 0, 2, 4, 4)
  const k = v128.and(i32x4.trunc_sat_f64x2_s_zero(f64x2.sub(f64x2.mul(f64x2.splat(INV_LN2), x), f64x2.splat(0.5))), kMask)
  const t = f64x2.convert_low_i32x4_s(k)
  const hi = f64x2.sub(x, f64x2.mul(t, f64x2.splat(LN2_HI)))
  const lo = f64x2.mul(t, f64x2.splat(LN2_LO))
  const r = f64x2.sub(hi, lo)
  const rr = f64x2.mul(r, r)
  let p = f64x2.add(f64x2.splat(P4), f64x2.mul(rr, f64x2.splat(P5)))
  p = f64x2.add(f64x2.splat(P3), f64x2.mul(rr, p))
  p = f64x2.add(f64x2.splat(P2), f64x2.mul(rr, p))
  p = f64x2.add(f64x2.splat(P1), f64x2.mul(rr, p))
  const c = f64x2.sub(r, f64x2.mul(rr, p))
  const q = f64x2.div(f64x2.mul(r, c), f64x2.sub(f64x2.splat(2.0), c))
  const y = f64x2.sub(f64x2.splat(1.0), f64x2.sub(f64x2.sub(lo, q), hi))
  const twopk = i64x2.add(i64x2.shl(i64x2.extend_low_i32x4_s(k), 52), i64x2.splat(0x3ff0000000000000))
  return v128.bitselect(f64x2.add(f64x2.splat(1.0), x), f64x2.mul(y, twopk), tiny)
}

// Scratch for one source: its columns' and rows' squared distances and Gaussian factors (a source
// reaches at most 6 columns and rows; the pairs may fill one slot more).
const gx = memory.data(8 * 8)
const ex = memory.data(8 * 8)
const gy = memory.data(8 * 8)
const ey = memory.data(8 * 8)

/** Whether the centre of cell i lies beyond reach of s (squared distance as the twin computes it). */
@inline function beyond(centres: usize, i: i32, s: f64, reach2: f64): bool {
  const d = load<f64>(centres + (<usize>i << 3)) - s
  return d * d > reach2
}

/**
 * Squared distances from s of the centres of cells i and i + 1 (read from `centres`, (i + 0.5) / n),
 * and their Gaussian factors times a.
 */
@inline function factors(i: i32, s: v128, centres: usize, twoR2: v128, a: v128, g: usize, e: usize): void {
  const d = f64x2.sub(v128.load(centres + (<usize>i << 3)), s)
  const d2 = f64x2.mul(d, d)
  v128.store(g, d2)
  v128.store(e, f64x2.mul(a, expNeg2(f64x2.div(f64x2.neg(d2), twoR2))))
}

/** Rows of the field per band: about 256 KB of it, so that a band's sources hit the cache. */
function bandRows(n: i32): i32 {
  return max(16, (65536 + n - 1) / n)
}

@inline function bands(n: i32): i32 {
  return (n + bandRows(n) - 1) / bandRows(n)
}

@inline function listOffset(n: i32): usize {
  return (((bands(n) + 1) << 2) + 15) & ~15
}

/** Bytes of scratch that render needs for `count` stream words on an n x n field. */
export function scratchBytes(count: i32, n: i32): i32 {
  return <i32>listOffset(n) + ((n + 2) << 3) + (count / 3) * 2 * 12 // a source spans 6 rows at most, so two bands
}

/** The first and last rows a source at height sy reaches (text.ts's render's y0 and y1). */
@inline function firstRow(sy: f64, reach: f64, nf: f64): i32 {
  return max(0, <i32>Math.floor((sy - reach) * nf))
}
@inline function lastRow(sy: f64, reach: f64, nf: f64, n: i32): i32 {
  return min(n - 1, <i32>Math.ceil((sy + reach) * nf))
}

/**
 * Adds the sources of `count` stream words at `words` (three a source: x, y, sign) to the n x n f32
 * field at `out`: text.ts's render, operation for operation, two lanes at a time (exponentials and
 * cells). The field must be followed by 8 bytes of memory (a pair may read and rewrite them unchanged).
 * Sources are visited by bands of rows (a stable counting sort into `scratch`, scratchBytes long):
 * each cell still receives its sources in stream order, so the sums keep their bits, and the
 * scattered updates stay in a band that fits the cache (twice as fast at N = 2048).
 */
export function render(words: usize, count: i32, n: i32, out: usize, margin: f64, radiusCells: f64, scratch: usize): void {
  const nf = <f64>n
  const radius = radiusCells / nf
  const reach = 3 * radius
  const span = 1 - 2 * margin
  const rows = bandRows(n)
  const ends = scratch // u32 per band + 1: counts, then starts, then (as sources are placed) ends
  const centres = scratch + listOffset(n) // (i + 0.5) / n for i = 0 .. n + 1, as the twin computes it
  for (let i = 0; i < n + 2; i++) store<f64>(centres + (<usize>i << 3), (<f64>i + 0.5) / nf)
  const list = centres + ((n + 2) << 3) // each band's sources' three words, in stream order
  memory.fill(ends, 0, (bands(n) + 1) << 2)
  for (let k = 0; k + 3 <= count; k += 3) {
    const sy = margin + span * (<f64>load<u32>(words + (<usize>k << 2), 4) / 4294967296.0)
    for (let b = firstRow(sy, reach, nf) / rows, b1 = lastRow(sy, reach, nf, n) / rows; b <= b1; b++) {
      const e = ends + (<usize>(b + 1) << 2)
      store<u32>(e, load<u32>(e) + 1)
    }
  }
  for (let b = 1; b <= bands(n); b++) store<u32>(ends + (<usize>b << 2), load<u32>(ends + (<usize>b << 2)) + load<u32>(ends + (<usize>(b - 1) << 2)))
  for (let k = 0; k + 3 <= count; k += 3) {
    const p = words + (<usize>k << 2)
    const sy = margin + span * (<f64>load<u32>(p, 4) / 4294967296.0)
    for (let b = firstRow(sy, reach, nf) / rows, b1 = lastRow(sy, reach, nf, n) / rows; b <= b1; b++) {
      const e = ends + (<usize>b << 2)
      const at = list + <usize>load<u32>(e) * 12
      store<u32>(e, load<u32>(e) + 1)
      store<u64>(at, load<u64>(p))
      store<u32>(at, load<u32>(p, 8), 8)
    }
  }
  let from: u32 = 0
  for (let b = 0; b < bands(n); b++) {
    const to = load<u32>(ends + (<usize>b << 2))
    for (let s = from; s < to; s++) renderSource(list + <usize>s * 12, n, out, centres, margin, radiusCells, b * rows, min(n, (b + 1) * rows) - 1)
    from = to
  }
}

/** One source (three words at p) added to rows [lo, hi] of the field. */
@inline function renderSource(p: usize, n: i32, out: usize, centres: usize, margin: f64, radiusCells: f64, lo: i32, hi: i32): void {
  const nf = <f64>n
  const radius = radiusCells / nf
  const reach = 3 * radius
  const reach2 = f64x2.splat(reach * reach)
  const twoR2 = f64x2.splat(2 * radius * radius)
  const span = 1 - 2 * margin
  const one = f64x2.splat(1)
  const sx = margin + span * (<f64>load<u32>(p) / 4294967296.0)
  const sy = margin + span * (<f64>load<u32>(p, 4) / 4294967296.0)
  // the twin's window, narrowed to the columns and rows whose own squared distance is within reach:
  // the others fail its test gx + dy2 <= reach^2 in every cell (about half the window)
  const r2 = reach * reach
  let x0 = max(0, <i32>Math.floor((sx - reach) * nf))
  let x1 = min(n - 1, <i32>Math.ceil((sx + reach) * nf))
  let y0 = max(lo, firstRow(sy, reach, nf))
  let y1 = min(hi, lastRow(sy, reach, nf, n))
  while (x0 <= x1 && beyond(centres, x0, sx, r2)) x0++
  while (x1 >= x0 && beyond(centres, x1, sx, r2)) x1--
  while (y0 <= y1 && beyond(centres, y0, sy, r2)) y0++
  while (y1 >= y0 && beyond(centres, y1, sy, r2)) y1--
  const sxv = f64x2.splat(sx)
  const syv = f64x2.splat(sy)
  const amplitude = load<u32>(p, 8) & 1 ? one : f64x2.neg(one)
  for (let i = x0; i <= x1; i += 2) factors(i, sxv, centres, twoR2, one, gx + (<usize>(i - x0) << 3), ex + (<usize>(i - x0) << 3))
  for (let j = y0; j <= y1; j += 2) factors(j, syv, centres, twoR2, amplitude, gy + (<usize>(j - y0) << 3), ey + (<usize>(j - y0) << 3))
  // columns two at a time: a pair's second column past x1 (a real cell, or the next row's first)
  // is left as it was, its squared distance set beyond reach
  store<f64>(gx + (<usize>(x1 - x0 + 1) << 3), Infinity)
  for (let j = y0; j <= y1; j++) {
    const dy2 = f64x2.splat(load<f64>(gy + (<usize>(j - y0) << 3)))
    const e = f64x2.splat(load<f64>(ey + (<usize>(j - y0) << 3)))
    const row = out + ((<usize>j * <usize>n) << 2)
    for (let i = x0; i <= x1; i += 2) {
      const o = <usize>(i - x0) << 3
      const q = row + (<usize>i << 2)
      const v = f64x2.promote_low_f32x4(v128.load64_zero(q))
      const inside = f64x2.le(f64x2.add(v128.load(gx + o), dy2), reach2)
      v128.store64_lane(q, f32x4.demote_f64x2_zero(v128.bitselect(f64x2.add(v, f64x2.mul(e, v128.load(ex + o))), v, inside)), 0)
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

/** a[i] = f32(a[i] * s), or f32(a[i] / s) if `divide` (not times 1 / s: that rounds otherwise), in f64. */
export function scale(a: usize, len: i32, s: f64, divide: bool): void {
  const sv = f64x2.splat(s)
  for (let i = 0; i < len; i += 4) {
    const p = a + (<usize>i << 2)
    const v = v128.load(p)
    v128.store(p, divide ? pack(f64x2.div(low(v), sv), f64x2.div(high(v), sv)) : pack(f64x2.mul(low(v), sv), f64x2.mul(high(v), sv)))
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

// ---- Encoding version 3 (engine/encode/text3.ts is the twin; docs/recall.md, "The encoding") ----
// Integer sources on a grid of 16 sub-cells: each adds a signed 4 x 4 block of a weight table to an
// i32 field with a 2-cell border. Integer sums do not depend on order, so the sources may be taken in
// any order (here by bands of rows, for the cache) and the combination's f32 steps are per cell.

/** Sub-cells a cell (Q): a position is P = 16 c + f. */
const Q: i32 = 16

/** Rows of the padded part per band: about 256 KB of it, so that a band's sources hit the cache. */
function bandRows3(n: i32): i32 {
  return max(8, 65536 / (n + 4))
}

@inline function bands3(n: i32): i32 {
  return (n + 4 + bandRows3(n) - 1) / bandRows3(n)
}

@inline function listOffset3(n: i32): usize {
  return (((bands3(n) + 1) << 2) + 15) & ~15
}

/** Bytes of scratch that render3 needs for `count` stream words (two a source) on an n x n field. */
export function scratchBytes3(count: i32, n: i32): i32 {
  return <i32>listOffset3(n) + (count >> 1) * 8
}

/** A coordinate's position on the sub-cell grid: lo + floor(w (hi - lo) / 2^32), lo = ceil(2 n Q / 25). */
@inline function position(w: u32, lo: u32, span: u32): u32 {
  return lo + <u32>((<u64>w * <u64>span) >> 32)
}

/**
 * Zeroes the (n + 4)^2 i32 part at `part` and adds the sources of `count` stream words at `words`
 * (two a source: x, then y; the sign is bit 0 of x) to it. Each source adds +-W[fy][fx] (`table`:
 * 256 blocks of 4 x 4 i32, row by row) to the 4 x 4 cells from (cx - 2 + (fx >> 3), cy - 2 + (fy >> 3)),
 * which lie inside the border for any n. Sources are placed by bands of the block's first row (a
 * counting sort into `scratch`, scratchBytes3 long) so that the scattered rows stay in cache.
 */
export function render3(words: usize, count: i32, n: i32, part: usize, table: usize, scratch: usize): void {
  const stride = n + 4
  memory.fill(part, 0, <usize>stride * <usize>stride * 4)
  const lo = <u32>((2 * n * Q + 24) / 25)
  const span = <u32>(n * Q) - 2 * lo
  const rows = bandRows3(n)
  const ends = scratch // u32 per band + 1: counts, then starts, then (as sources are placed) ends
  const list = scratch + listOffset3(n) // each source's first cell and its block's offset and sign
  memory.fill(ends, 0, (bands3(n) + 1) << 2)
  const sources = count >> 1
  for (let k = 0; k < sources; k++) {
    const py = position(load<u32>(words + (<usize>k << 3), 4), lo, span)
    const e = ends + (<usize>((<i32>(py >> 4) + <i32>((py & 15) >> 3)) / rows + 1) << 2)
    store<u32>(e, load<u32>(e) + 1)
  }
  for (let b = 1; b <= bands3(n); b++) store<u32>(ends + (<usize>b << 2), load<u32>(ends + (<usize>b << 2)) + load<u32>(ends + (<usize>(b - 1) << 2)))
  for (let k = 0; k < sources; k++) {
    const wx = load<u32>(words + (<usize>k << 3))
    const px = position(wx, lo, span)
    const py = position(load<u32>(words + (<usize>k << 3), 4), lo, span)
    const fx = px & 15
    const fy = py & 15
    // the block's first cell in the padded part: (c - 2 + (f >> 3)) + 2
    const row = (py >> 4) + (fy >> 3)
    const e = ends + (<usize>(<i32>row / rows) << 2)
    const at = list + (<usize>load<u32>(e) << 3)
    store<u32>(e, load<u32>(e) + 1)
    store<u32>(at, row * <u32>stride + (px >> 4) + (fx >> 3))
    store<u32>(at, ((fy << 4) | fx) << 6 | (wx << 31), 4) // the block's byte offset; the sign in bit 31 (1: +)
  }
  const rowBytes = <usize>stride << 2
  for (let s = 0; s < sources; s++) {
    const at = list + (<usize>s << 3)
    const meta = load<u32>(at, 4)
    const q = part + (<usize>load<u32>(at) << 2)
    const w = table + <usize>(meta & 0x7fffffff)
    const neg = i32x4.splat((<i32>meta >> 31) ^ -1) // 0 for +, -1 for -: (w ^ neg) - neg is +-w
    for (let t: usize = 0; t < 4; t++) {
      const p = q + t * rowBytes
      v128.store(p, i32x4.add(v128.load(p), i32x4.sub(v128.xor(v128.load(w + (t << 4)), neg), neg)))
    }
  }
}

/** The energy of the n x n cells inside the border of a part: the sum of v^2, exact in u64. */
export function energy3(part: usize, n: i32): f64 {
  const stride = n + 4
  let acc = i64x2.splat(0)
  let tail: u64 = 0
  for (let r = 2; r < n + 2; r++) {
    const row = part + ((<usize>r * <usize>stride + 2) << 2)
    let c = 0
    for (; c + 4 <= n; c += 4) {
      const v = v128.load(row + (<usize>c << 2))
      acc = i64x2.add(acc, i64x2.add(i64x2.extmul_low_i32x4_s(v, v), i64x2.extmul_high_i32x4_s(v, v)))
    }
    for (; c < n; c++) {
      const v = <i64>load<i32>(row + (<usize>c << 2))
      tail += <u64>(v * v)
    }
  }
  return <f64>(<u64>i64x2.extract_lane(acc, 0) + <u64>i64x2.extract_lane(acc, 1) + tail)
}

/**
 * out[r][c] = f32(out[r][c] + f32(f32(v) * s)) for v the part's cell (r + 2, c + 2), on f32 lanes
 * (the twin's Math.fround of each operation). Returns max |out| after the addition.
 */
export function combine3(part: usize, n: i32, out: usize, s: f32): f32 {
  const stride = n + 4
  const sv = f32x4.splat(s)
  let m = f32x4.splat(0)
  let peak: f32 = 0
  for (let r = 0; r < n; r++) {
    const src = part + ((<usize>(r + 2) * <usize>stride + 2) << 2)
    const dst = out + ((<usize>r * <usize>n) << 2)
    let c = 0
    for (; c + 4 <= n; c += 4) {
      const o = <usize>c << 2
      const v = f32x4.add(v128.load(dst + o), f32x4.mul(f32x4.convert_i32x4_s(v128.load(src + o)), sv))
      v128.store(dst + o, v)
      m = f32x4.max(m, f32x4.abs(v))
    }
    for (; c < n; c++) {
      const o = <usize>c << 2
      const v = load<f32>(dst + o) + <f32>load<i32>(src + o) * s
      store<f32>(dst + o, v)
      peak = max(peak, abs(v))
    }
  }
  return max(peak, max(max(f32x4.extract_lane(m, 0), f32x4.extract_lane(m, 1)), max(f32x4.extract_lane(m, 2), f32x4.extract_lane(m, 3))))
}

/** a[i] = f32(a[i] / d) for len a multiple of 4 (the padding stays 0). */
export function divide3(a: usize, len: i32, d: f32): void {
  const dv = f32x4.splat(d)
  for (let i = 0; i < len; i += 4) {
    const p = a + (<usize>i << 2)
    v128.store(p, f32x4.div(v128.load(p), dv))
  }
}

// ---- blake3's extendable output for a one-chunk input (at most 1,024 bytes; text.ts's blake3Words) ----
// The chunk's blocks chain as in the specification; the root's output blocks (counter t) are
// independent, so four are computed at once, one in each i32x4 lane. A test checks it against hash-wasm.

const B3_IV = memory.data<u32>([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19])
const B3_PERM = memory.data<u8>([2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8])
const CHUNK_START: u32 = 1
const CHUNK_END: u32 = 2
const ROOT: u32 = 8
/** The message word each G takes, round by round: 7 x 16 indices, the permutation applied r times. */
const b3Schedule = memory.data(7 * 16)
const b3State = memory.data(16 * 16) // 16 v128: the state of four compressions
const b3Message = memory.data(16 * 16) // 16 v128: the block's words, the same in each lane
const b3Cv = memory.data(8 * 4) // the chaining value
const b3Block = memory.data(64) // the block, zero-padded

@inline function b3Rotr(x: v128, n: i32): v128 {
  return v128.or(i32x4.shr_u(x, n), i32x4.shl(x, 32 - n))
}

@inline function b3G(a: usize, b: usize, c: usize, d: usize, mx: v128, my: v128): void {
  const s = b3State
  let va = v128.load(s + (a << 4))
  let vb = v128.load(s + (b << 4))
  let vc = v128.load(s + (c << 4))
  let vd = v128.load(s + (d << 4))
  va = i32x4.add(i32x4.add(va, vb), mx)
  vd = b3Rotr(v128.xor(vd, va), 16)
  vc = i32x4.add(vc, vd)
  vb = b3Rotr(v128.xor(vb, vc), 12)
  va = i32x4.add(i32x4.add(va, vb), my)
  vd = b3Rotr(v128.xor(vd, va), 8)
  vc = i32x4.add(vc, vd)
  vb = b3Rotr(v128.xor(vb, vc), 7)
  v128.store(s + (a << 4), va)
  v128.store(s + (b << 4), vb)
  v128.store(s + (c << 4), vc)
  v128.store(s + (d << 4), vd)
}

@inline function b3M(r: i32, i: i32): v128 {
  return v128.load(b3Message + (<usize>load<u8>(b3Schedule + <usize>(r * 16 + i)) << 4))
}

/** Four compressions of the block in b3Message under b3Cv, counters t .. t + 3, into b3State. */
function b3Compress(t: u32, blockLen: u32, flags: u32): void {
  const s = b3State
  for (let i = 0; i < 8; i++) v128.store(s + (<usize>i << 4), i32x4.splat(load<u32>(b3Cv + (<usize>i << 2))))
  for (let i = 0; i < 4; i++) v128.store(s + (<usize>(8 + i) << 4), i32x4.splat(load<u32>(B3_IV + (<usize>i << 2))))
  v128.store(s + (12 << 4), i32x4(t, t + 1, t + 2, t + 3))
  v128.store(s + (13 << 4), i32x4.splat(0))
  v128.store(s + (14 << 4), i32x4.splat(blockLen))
  v128.store(s + (15 << 4), i32x4.splat(flags))
  for (let r = 0; r < 7; r++) {
    b3G(0, 4, 8, 12, b3M(r, 0), b3M(r, 1))
    b3G(1, 5, 9, 13, b3M(r, 2), b3M(r, 3))
    b3G(2, 6, 10, 14, b3M(r, 4), b3M(r, 5))
    b3G(3, 7, 11, 15, b3M(r, 6), b3M(r, 7))
    b3G(0, 5, 10, 15, b3M(r, 8), b3M(r, 9))
    b3G(1, 6, 11, 12, b3M(r, 10), b3M(r, 11))
    b3G(2, 7, 8, 13, b3M(r, 12), b3M(r, 13))
    b3G(3, 4, 9, 14, b3M(r, 14), b3M(r, 15))
  }
}

/** Loads block b of the input (len bytes at `input`) into b3Message, zero-padded; returns its length. */
function b3LoadBlock(input: usize, len: i32, b: i32): u32 {
  const blockLen = min(64, len - b * 64)
  memory.fill(b3Block, 0, 64)
  memory.copy(b3Block, input + <usize>(b * 64), <usize>max(0, blockLen))
  for (let i = 0; i < 16; i++) v128.store(b3Message + (<usize>i << 4), i32x4.splat(load<u32>(b3Block + (<usize>i << 2))))
  return <u32>max(0, blockLen)
}

/**
 * The first `words` u32 of blake3's output for the `len` bytes at `input` (len <= 1,024), written to
 * `out`, which must hold `words` rounded up to 64.
 */
export function blake3(input: usize, len: i32, out: usize, words: i32): void {
  for (let i = 0; i < 16; i++) store<u8>(b3Schedule + <usize>i, <u8>i)
  for (let r = 1; r < 7; r++)
    for (let i = 0; i < 16; i++) store<u8>(b3Schedule + <usize>(r * 16 + i), load<u8>(b3Schedule + <usize>((r - 1) * 16 + load<u8>(B3_PERM + <usize>i))))
  memory.copy(b3Cv, B3_IV, 32)
  const blocks = max(1, (len + 63) / 64)
  for (let b = 0; b < blocks - 1; b++) {
    b3LoadBlock(input, len, b)
    b3Compress(0, 64, b ? 0 : CHUNK_START)
    for (let i = 0; i < 8; i++)
      store<u32>(b3Cv + (<usize>i << 2), i32x4.extract_lane(v128.xor(v128.load(b3State + (<usize>i << 4)), v128.load(b3State + (<usize>(i + 8) << 4))), 0))
  }
  const lastLen = b3LoadBlock(input, len, blocks - 1)
  const flags = (blocks == 1 ? CHUNK_START : 0) | CHUNK_END | ROOT
  for (let t: u32 = 0; <i32>t * 16 < words; t += 4) {
    b3Compress(t, lastLen, flags)
    for (let i = 0; i < 8; i++) {
      const lo = v128.load(b3State + (<usize>i << 4))
      const hi = v128.load(b3State + (<usize>(i + 8) << 4))
      const w = v128.xor(lo, hi)
      const x = v128.xor(hi, i32x4.splat(load<u32>(b3Cv + (<usize>i << 2))))
      const o = out + (<usize>t << 6) + (<usize>i << 2)
      store<i32>(o, i32x4.extract_lane(w, 0))
      store<i32>(o, i32x4.extract_lane(w, 1), 64)
      store<i32>(o, i32x4.extract_lane(w, 2), 128)
      store<i32>(o, i32x4.extract_lane(w, 3), 192)
      store<i32>(o, i32x4.extract_lane(x, 0), 32)
      store<i32>(o, i32x4.extract_lane(x, 1), 96)
      store<i32>(o, i32x4.extract_lane(x, 2), 160)
      store<i32>(o, i32x4.extract_lane(x, 3), 224)
    }
  }
}
