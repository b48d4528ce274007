// blake3 (hash-wasm) for content hashes: the registry file, the medium and detection's fingerprints.
import { createBLAKE3 } from 'hash-wasm'

/** One hasher for the process, loaded once; callers init it before each use. */
export const blake3 = createBLAKE3()

/** blake3 of a string or bytes, as hex. */
export async function blake3Hex(data: string | Uint8Array): Promise<string> {
  const h = await blake3
  h.init()
  h.update(data)
  return h.digest('hex')
}
