// Canonical JSON (RFC 8785, the `canonicalize` package) of an array and its blake3, made incremental
// for arrays that only grow: the registry file's content hash.
import canonicalize from 'canonicalize'
import { blake3 } from './hash.js'

/** Each item's canonical JSON, computed once: items (primitives) are never changed in place. */
const canonicalForms = new WeakMap<object, string>()

function canonicalForm(p: object): string {
  let form = canonicalForms.get(p)
  if (form === undefined) canonicalForms.set(p, (form = canonicalize(p)!))
  return form
}

/** The last array made canonical and hashed, kept so that an array extending it costs only its new part. */
let memo: { items: object[]; bytes: Uint8Array; length: number; state: Uint8Array } | undefined
const utf8 = new TextEncoder()

/**
 * The canonical (RFC 8785) JSON of an array (the registry's primitives), as UTF-8 bytes, and its blake3. JCS writes
 * an array as its elements' canonical forms joined by commas, so when the array extends the previous
 * one (a registry that only grows, like an archivist's) only the new elements are serialized, encoded
 * and hashed: the bytes (in a buffer that doubles as it fills) and the hasher's state carry over.
 * Anything else (a pruned or reordered array) is done in full.
 */
export async function canonicalAndHash(primitives: readonly object[]): Promise<{ bytes: Uint8Array; hash: string }> {
  const h = await blake3
  let start = 0
  let bytes: Uint8Array = new Uint8Array(1 << 16)
  let length = 0
  if (memo && memo.items.length <= primitives.length && memo.items.every((p, i) => p === primitives[i])) {
    ;({ bytes, length } = memo)
    start = memo.items.length
    h.load(memo.state)
  } else {
    h.init()
    bytes[length++] = 0x5b // '['
    h.update('[')
  }
  if (start < primitives.length) {
    const piece = utf8.encode(
      primitives
        .slice(start)
        .map((p, k) => (start + k === 0 ? '' : ',') + canonicalForm(p))
        .join(''),
    )
    if (length + piece.length + 1 > bytes.length) {
      const grown = new Uint8Array(Math.max(2 * bytes.length, length + piece.length + 1))
      grown.set(bytes.subarray(0, length))
      bytes = grown
    }
    bytes.set(piece, length)
    length += piece.length
    h.update(piece)
  }
  memo = { items: [...primitives], bytes, length, state: h.save() }
  h.update(']')
  const out = new Uint8Array(length + 1)
  out.set(bytes.subarray(0, length))
  out[length] = 0x5d // ']'
  return { bytes: out, hash: h.digest('hex') }
}
