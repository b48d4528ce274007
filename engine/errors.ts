// One error type for the whole product: a stable code, a sentence for people, and where it applies.
// The CLI maps `code` to an exit status and the server to an HTTP status, each through one table.

export type ErrorCode =
  | 'bad_material'
  | 'unknown_material'
  | 'bad_argument'
  | 'backend_unavailable'
  | 'registry_corrupt'
  | 'registry_busy'
  | 'medium_corrupt'
  | 'not_found'
  | 'bad_program'
  | 'missing_credential'
  | 'publish_failed'
  | 'bus_unavailable'
  | 'limit_exceeded'
  | 'busy'
  | 'missing_dependency'
  | 'over_capacity'
  | 'bad_message'
  | 'bad_audio'
  | 'no_music'
  | 'unauthorized'
  | 'forbidden'
  | 'conflict'
  | 'insufficient_funds'
  | 'bad_proposal'
  | 'ledger_corrupt'
  | 'oracle_unavailable'
  | 'voice_unavailable'
  | 'internal'

export interface ErrorPlace {
  file?: string
  field?: string
  line?: number
  column?: number
}

export class CrystalError extends Error {
  override readonly name = 'CrystalError'
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly where: ErrorPlace = {},
    readonly hint?: string,
  ) {
    super(message)
  }
}

export function isCrystalError(e: unknown): e is CrystalError {
  return e instanceof CrystalError
}

/** Throws a bad_argument error unless `value` is a finite number within [min, max]. */
export function requireFinite(field: string, value: number, min = -Infinity, max = Infinity): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new CrystalError('bad_argument', `${field} must be a finite number, got ${String(value)}`, { field })
  }
  if (value < min || value > max) {
    throw new CrystalError('bad_argument', `${field} must be between ${min} and ${max}, got ${value}`, { field })
  }
  return value
}
