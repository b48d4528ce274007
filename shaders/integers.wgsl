// Integers wider than a word, in u32 words (WGSL has no 64-bit integer): two's-complement 64-bit
// integers as vec2<u32> (low, high; `wide_*`), signed integers of BIG words (`big_*`), and a cell's
// side of a part's principal axis decided exactly (`side_of`). Prepended to the modules that decide
// from a part's integer sums: shaders/components.wgsl and shaders/erase.wgsl (engine/gpu/components.ts,
// engine/gpu/inject.ts). Their tests: engine/gpu/components.test.ts (side_of at N = 4096 among them).

/** a b as 64 bits (low, high), from 16-bit halves. */
fn wide_mul(a: u32, b: u32) -> vec2<u32> {
  let a0 = a & 0xffffu;
  let a1 = a >> 16u;
  let b0 = b & 0xffffu;
  let b1 = b >> 16u;
  let cross0 = a0 * b1;
  let cross1 = a1 * b0;
  let low0 = a0 * b0;
  let low1 = low0 + (cross0 << 16u);
  let low = low1 + (cross1 << 16u);
  let carries = select(0u, 1u, low1 < low0) + select(0u, 1u, low < low1);
  return vec2<u32>(low, a1 * b1 + (cross0 >> 16u) + (cross1 >> 16u) + carries);
}

fn wide_add(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  let low = a.x + b.x;
  return vec2<u32>(low, a.y + b.y + select(0u, 1u, low < a.x));
}

fn wide_less(a: vec2<u32>, b: vec2<u32>) -> bool {
  return a.y < b.y || (a.y == b.y && a.x < b.x);
}

/** floor(a / d) and its remainder, by long division: d under 2^31, the quotient under 2^32. */
fn wide_div(a: vec2<u32>, d: u32) -> vec2<u32> {
  var q = 0u;
  var r = 0u;
  for (var bit = 63i; bit >= 0i; bit--) {
    let word = select(a.x, a.y, bit >= 32i);
    r = (r << 1u) | ((word >> (u32(bit) & 31u)) & 1u);
    q = q << 1u;
    if (r >= d) {
      r -= d;
      q |= 1u;
    }
  }
  return vec2<u32>(q, r);
}

/** floor(sqrt(d)): an f32 root (good to a few units under 2^26), corrected in integers until r^2 <= d < (r + 1)^2. */
fn wide_sqrt(d: vec2<u32>) -> u32 {
  var r = u32(sqrt(f32(d.y) * 4294967296.0 + f32(d.x)));
  loop {
    if (!wide_less(d, wide_mul(r, r))) { break; }
    r -= 1u;
  }
  loop {
    if (wide_less(d, wide_mul(r + 1u, r + 1u))) { break; }
    r += 1u;
  }
  return r;
}

/** -a of a two's-complement 64-bit integer. */
fn wide_neg(a: vec2<u32>) -> vec2<u32> {
  let low = ~a.x + 1u;
  return vec2<u32>(low, ~a.y + select(0u, 1u, low == 0u));
}

fn wide_negative(a: vec2<u32>) -> bool {
  return (a.y >> 31u) != 0u;
}

/** a m (two's complement, m a word), where it fits 64 bits. */
fn wide_times(a: vec2<u32>, m: u32) -> vec2<u32> {
  let low = wide_mul(a.x, m);
  return vec2<u32>(low.x, low.y + a.y * m);
}

/** floor(a / d) of a two's-complement a, d under 2^31, where the quotient is an i32. */
fn floor_div(a: vec2<u32>, d: u32) -> i32 {
  if (a.y == 0u) { return i32(a.x / d); }
  if (!wide_negative(a)) { return i32(wide_div(a, d).x); }
  let q = wide_div(wide_neg(a), d);
  return -i32(q.x + select(0u, 1u, q.y != 0u));
}

/** floor(a / d) of i32s, d > 0 (WGSL's division truncates toward 0). */
fn floor_div32(a: i32, d: i32) -> i32 {
  let q = a / d;
  return q - select(0, 1, q * d != a && a < 0);
}

fn wide_max(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  return select(a, b, wide_less(a, b));
}

// how clear of f32's rounding a side's sum must be to be taken: its terms are each some tens of ulps
// (2^-23) from the exact ones at most (the root's scaling, squares and WGSL's sqrt among them), so 2^-12
// of their sum is far outside
const SIDE_MARGIN: f32 = 0.000244140625;

// A signed integer of BIG words (two's complement, low first): the axis's A and B and the side test's
// products, under 2^146 at N = 4096 (|c x - sx| < N^3, |A| < N^6).
const BIG: u32 = 6u;

alias Big = array<u32, 6>;

/** A two's-complement 64-bit integer as a Big. */
fn big_of(a: vec2<u32>) -> Big {
  let fill = select(0u, 0xffffffffu, wide_negative(a));
  return Big(a.x, a.y, fill, fill, fill, fill);
}

fn big_add(a: Big, b: Big) -> Big {
  var x = a;
  var y = b;
  var sum: Big;
  var carry = 0u;
  for (var k = 0u; k < BIG; k++) {
    let s = x[k] + y[k];
    sum[k] = s + carry;
    carry = select(0u, 1u, s < x[k]) + select(0u, 1u, sum[k] < s);
  }
  return sum;
}

fn big_neg(a: Big) -> Big {
  var x = a;
  var carry = 1u;
  for (var k = 0u; k < BIG; k++) {
    x[k] = ~x[k] + carry;
    carry = select(0u, 1u, carry == 1u && x[k] == 0u);
  }
  return x;
}

fn big_sign(a: Big) -> i32 {
  var x = a;
  if ((x[BIG - 1u] >> 31u) != 0u) { return -1; }
  for (var k = 0u; k < BIG; k++) {
    if (x[k] != 0u) { return 1; }
  }
  return 0;
}

/** a as an f32, to a few ulps (under 2^128). */
fn big_f32(a: Big) -> f32 {
  let negative = big_sign(a) < 0;
  var x = a;
  if (negative) { x = big_neg(a); }
  var v = 0.0;
  for (var k = BIG; k > 0u; k--) { v = v * 4294967296.0 + f32(x[k - 1u]); }
  return select(v, -v, negative);
}

fn wide_sign(a: vec2<u32>) -> i32 {
  if (wide_negative(a)) { return -1; }
  return select(1, 0, a.x == 0u && a.y == 0u);
}

/** A two's-complement 64-bit integer as an f32, to a few ulps. */
fn wide_f32(a: vec2<u32>) -> f32 {
  let m = select(a, wide_neg(a), wide_negative(a));
  let v = f32(m.y) * 4294967296.0 + f32(m.x);
  return select(v, -v, wide_negative(a));
}

/** A halved part's axis (A, B) as `regions` sides its cells by: |A| and |B|, their signs, and A, B and sqrt(A^2 + 4 B^2) as f32s. */
struct Axis {
  a: Big,
  b: Big,
  signs: vec2<i32>,
  floats: vec3<f32>,
}

fn big_abs(a: Big) -> Big {
  if (big_sign(a) < 0) { return big_neg(a); }
  return a;
}

fn axis_of(A: Big, B: Big) -> Axis {
  // sqrt(A^2 + 4 B^2) scaled by the larger term, so that no square passes f32's range
  let af = big_f32(A);
  let bf = big_f32(B);
  let scale = max(abs(af), 2.0 * abs(bf));
  var root = 0.0;
  if (scale > 0.0) { root = scale * sqrt((af / scale) * (af / scale) + (2.0 * bf / scale) * (2.0 * bf / scale)); }
  return Axis(big_abs(A), big_abs(B), vec2<i32>(big_sign(A), big_sign(B)), vec3<f32>(af, bf, root));
}

/** a m of magnitudes, m of two words, where it fits BIG words: a word of m at a time, none where it is 0. */
fn big_times(a: Big, m: vec2<u32>) -> Big {
  var x = a;
  var product: Big;
  for (var k = 0u; k < 2u; k++) {
    let word = select(m.x, m.y, k == 1u);
    if (word == 0u) { continue; }
    var carry = 0u;
    for (var j = 0u; j + k < BIG; j++) {
      let p = wide_add(wide_add(wide_mul(x[j], word), vec2<u32>(product[j + k], 0u)), vec2<u32>(carry, 0u));
      product[j + k] = p.x;
      carry = p.y;
    }
  }
  return product;
}

/** 1, 0 or -1 as magnitude a is more than b, as much, or less. */
fn big_compare(a: Big, b: Big) -> i32 {
  var x = a;
  var y = b;
  for (var k = BIG; k > 0u; k--) {
    if (x[k - 1u] != y[k - 1u]) { return select(-1, 1, x[k - 1u] > y[k - 1u]); }
  }
  return 0;
}

/** The sign of s1 m1 + s2 m2, of magnitudes m1, m2 and signs s1, s2 (0 where its term is 0). */
fn sum_sign(s1: i32, m1: Big, s2: i32, m2: Big) -> i32 {
  if (s1 == 0) { return s2; }
  if (s2 == 0 || s1 == s2) { return s1; }
  return s1 * big_compare(m1, m2);
}

fn wide_abs(a: vec2<u32>) -> vec2<u32> {
  return select(a, wide_neg(a), wide_negative(a));
}

/**
 * The sign of P + Q sqrt(R), P = dX A + 2 dY B, Q = dX, R = A^2 + 4 B^2 (detect.ts exactSide), B != 0:
 * where P and Q differ in sign, that of the larger of P^2 and Q^2 R, whose difference is
 * 4 B (dX dY A + B (|dY| - |dX|) (|dY| + |dX|)): no square of P, and each sign from a comparison of
 * two products' magnitudes (at N = 96, a word or two each).
 */
fn exact_side(dX: vec2<u32>, dY: vec2<u32>, axis: Axis) -> i32 {
  let sx = wide_sign(dX);
  let sy = wide_sign(dY);
  let ax = wide_abs(dX);
  let ay = wide_abs(dY);
  let sp = sum_sign(sx * axis.signs.x, big_times(axis.a, ax), sy * axis.signs.y, big_times(axis.b, wide_times(ay, 2u)));
  if (sx == 0 || sp == sx) { return select(sx, sp, sp != 0); }
  let d = wide_add(ay, wide_neg(ax));
  let t = sum_sign(
    sx * sy * axis.signs.x,
    big_times(big_times(axis.a, ax), ay),
    axis.signs.y * wide_sign(d),
    big_times(big_times(axis.b, wide_abs(d)), wide_add(ay, ax)),
  );
  let dd = axis.signs.y * t;
  if (dd == 0) { return 0; }
  return select(sx, sp, dd > 0);
}

/** exact_side's sign: f32's where clear of its rounding, else exact_side's. */
fn side_of(dX: vec2<u32>, dY: vec2<u32>, axis: Axis) -> i32 {
  let dx = wide_f32(dX);
  let p1 = dx * axis.floats.x;
  let p2 = (2.0 * wide_f32(dY)) * axis.floats.y;
  let q = dx * axis.floats.z;
  let s = (p1 + p2) + q;
  if (abs(s) > SIDE_MARGIN * (abs(p1) + abs(p2) + abs(q))) { return select(-1, 1, s > 0.0); }
  return exact_side(dX, dY, axis);
}
