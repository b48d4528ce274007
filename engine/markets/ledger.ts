// The public ledger's chain: each entry's hash covers its fields and the previous entry's hash, so
// changing any byte of any entry breaks the chain there. The hash function is passed in (SHA-256 in Node).
export const LEDGER_KINDS = ['mint', 'escrow', 'trade', 'payout', 'refund'] as const
export type LedgerKind = (typeof LEDGER_KINDS)[number]

/** The hash before the first entry. */
export const GENESIS = '0'.repeat(64)

export interface LedgerEntry {
  seq: number
  ts: string
  kind: LedgerKind
  agent_id: string | null
  market_id: string | null
  /** Minor units, signed as the agent's balance sees it: + mint, payout, refund; - escrow, a buy. */
  amount: number
  /** Canonical JSON (RFC 8785) of the entry's details (shares, outcome, prices ...), kept as text so that the hash covers the bytes stored. */
  detail: string
  prev_hash: string
  hash: string
}

/** The text an entry's hash is taken of: its fields in a fixed order, as a JSON array. */
export function entryText(e: Omit<LedgerEntry, 'hash'>): string {
  return JSON.stringify([e.seq, e.ts, e.kind, e.agent_id, e.market_id, e.amount, e.detail, e.prev_hash])
}

export type Verdict = { ok: true; entries: number; head: string } | { ok: false; entries: number; first_bad: number; reason: string }

/** Recomputes the chain; names the first entry whose hash, link or sequence is wrong. */
export function verifyChain(entries: Iterable<LedgerEntry>, hash: (text: string) => string): Verdict {
  let prev = GENESIS
  let expected = 1
  let n = 0
  for (const e of entries) {
    n++
    if (e.seq !== expected)
      return {
        ok: false,
        entries: n,
        first_bad: e.seq,
        reason: `sequence number ${e.seq} where ${expected} was expected (an entry is missing or out of order)`,
      }
    if (e.prev_hash !== prev)
      return { ok: false, entries: n, first_bad: e.seq, reason: `its prev_hash is not the hash of entry ${e.seq - 1}` }
    if (hash(entryText(e)) !== e.hash)
      return { ok: false, entries: n, first_bad: e.seq, reason: 'its hash does not match its contents (the entry was altered)' }
    prev = e.hash
    expected++
  }
  return { ok: true, entries: n, head: prev }
}
