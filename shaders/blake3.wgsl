// blake3's extendable output for one-chunk inputs (at most 1,024 bytes), the streams encoding version 3
// reads (engine/encode/text.ts blake3Words: 4,096 words an input, the stream going on with
// input + "\0#" + c). `chain` runs an input's blocks but the last into its chaining value and keeps
// that and the last block; `xof` makes the root's output blocks, one invocation a block (counter t),
// into one part's stream. engine/gpu/encode3.ts drives both; `struct Blake3` is generated there.
// CPU twin: blake3Words (the WebAssembly kernel and hash-wasm); test: engine/gpu/encode3.test.ts.

@group(0) @binding(0) var<uniform> B: Blake3;
// the inputs' UTF-8 bytes, each zero-padded to whole 64-byte blocks
@group(0) @binding(1) var<storage, read> bytes: array<u32>;
// [input] (word offset into bytes, length in bytes)
@group(0) @binding(2) var<storage, read> descs: array<u32>;
// [input] 32 words: the chaining value (8), the last block (16), its length, its flags
@group(0) @binding(3) var<storage, read_write> roots: array<u32>;
@group(0) @binding(4) var<storage, read_write> streams: array<u32>;

const IV = array<u32, 8>(0x6a09e667u, 0xbb67ae85u, 0x3c6ef372u, 0xa54ff53au, 0x510e527fu, 0x9b05688cu, 0x1f83d9abu, 0x5be0cd19u);
const PERM = array<u32, 16>(2u, 6u, 3u, 10u, 7u, 0u, 4u, 13u, 1u, 11u, 12u, 5u, 9u, 14u, 15u, 8u);
const CHUNK_START = 1u;
const CHUNK_END = 2u;
const ROOT = 8u;
const WORDS_PER_INPUT = 4096u;

fn rotr(x: u32, n: u32) -> u32 {
  return (x >> n) | (x << (32u - n));
}

fn g(v: ptr<function, array<u32, 16>>, a: u32, b: u32, c: u32, d: u32, x: u32, y: u32) {
  (*v)[a] = (*v)[a] + (*v)[b] + x;
  (*v)[d] = rotr((*v)[d] ^ (*v)[a], 16u);
  (*v)[c] = (*v)[c] + (*v)[d];
  (*v)[b] = rotr((*v)[b] ^ (*v)[c], 12u);
  (*v)[a] = (*v)[a] + (*v)[b] + y;
  (*v)[d] = rotr((*v)[d] ^ (*v)[a], 8u);
  (*v)[c] = (*v)[c] + (*v)[d];
  (*v)[b] = rotr((*v)[b] ^ (*v)[c], 7u);
}

// The compression's 16-word state after its 7 rounds (counter t, its high word 0).
fn compress(cv: array<u32, 8>, block: array<u32, 16>, t: u32, len: u32, flags: u32) -> array<u32, 16> {
  var v = array<u32, 16>(cv[0], cv[1], cv[2], cv[3], cv[4], cv[5], cv[6], cv[7], IV[0], IV[1], IV[2], IV[3], t, 0u, len, flags);
  var m = block;
  for (var r = 0u; r < 7u; r++) {
    g(&v, 0u, 4u, 8u, 12u, m[0], m[1]);
    g(&v, 1u, 5u, 9u, 13u, m[2], m[3]);
    g(&v, 2u, 6u, 10u, 14u, m[4], m[5]);
    g(&v, 3u, 7u, 11u, 15u, m[6], m[7]);
    g(&v, 0u, 5u, 10u, 15u, m[8], m[9]);
    g(&v, 1u, 6u, 11u, 12u, m[10], m[11]);
    g(&v, 2u, 7u, 8u, 13u, m[12], m[13]);
    g(&v, 3u, 4u, 9u, 14u, m[14], m[15]);
    var next: array<u32, 16>;
    for (var i = 0u; i < 16u; i++) { next[i] = m[PERM[i]]; }
    m = next;
  }
  return v;
}

// One invocation an input of this part: B.first .. B.first + B.inputs.
@compute @workgroup_size(64)
fn chain(@builtin(global_invocation_id) gid: vec3<u32>) {
  if (gid.x >= B.inputs) { return; }
  let k = B.first + gid.x;
  let at = descs[2u * k];
  let len = descs[2u * k + 1u];
  let blocks = max(1u, (len + 63u) / 64u);
  var cv = IV;
  var block: array<u32, 16>;
  for (var b = 0u; b + 1u < blocks; b++) {
    for (var w = 0u; w < 16u; w++) { block[w] = bytes[at + 16u * b + w]; }
    let v = compress(cv, block, 0u, 64u, select(0u, CHUNK_START, b == 0u));
    for (var w = 0u; w < 8u; w++) { cv[w] = v[w] ^ v[w + 8u]; }
  }
  let last = blocks - 1u;
  for (var w = 0u; w < 8u; w++) { roots[32u * k + w] = cv[w]; }
  for (var w = 0u; w < 16u; w++) { roots[32u * k + 8u + w] = bytes[at + 16u * last + w]; }
  roots[32u * k + 24u] = len - 64u * last;
  roots[32u * k + 25u] = select(0u, CHUNK_START, blocks == 1u) | CHUNK_END | ROOT;
}

// One invocation an output block of the part's stream (B.count words at B.stream_at): block i is
// block t = i % 256 of input B.first + i / 256.
@compute @workgroup_size(64)
fn xof(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = gid.y * 65535u * 64u + gid.x;
  if (16u * i >= B.count) { return; }
  let k = B.first + i / (WORDS_PER_INPUT / 16u);
  var cv: array<u32, 8>;
  var block: array<u32, 16>;
  for (var w = 0u; w < 8u; w++) { cv[w] = roots[32u * k + w]; }
  for (var w = 0u; w < 16u; w++) { block[w] = roots[32u * k + 8u + w]; }
  let v = compress(cv, block, i % (WORDS_PER_INPUT / 16u), roots[32u * k + 24u], roots[32u * k + 25u]);
  for (var w = 0u; w < 16u; w++) {
    if (16u * i + w < B.count) {
      var word = v[w] ^ v[(w + 8u) % 16u];
      if (w >= 8u) { word = v[w] ^ cv[w - 8u]; }
      streams[B.stream_at + 16u * i + w] = word;
    }
  }
}
