// The server's REST API and live feed, as the Observatory uses them. Errors come back as the
// problem+json detail, in words, for the control that caused them.

// The wire types are engine/contracts/api.ts's.
import type { Job, ProgramError, State } from '../engine/contracts/api.js'

export async function post<T>(path: string, body: unknown, headers: Record<string, string> = {}): Promise<T> {
  const r = await fetch(path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })
  const json = await r.json().catch(() => ({}))
  if (!r.ok) throw new ApiError(json.detail ?? `the server answered ${r.status}`, json.errors)
  return json as T
}

export class ApiError extends Error {
  constructor(
    message: string,
    readonly errors: ProgramError[] = [],
  ) {
    super(message)
  }
}

export async function get<T>(path: string): Promise<T> {
  const r = await fetch(path)
  const json = await r.json().catch(() => ({}))
  if (!r.ok) throw new ApiError(json.detail ?? `the server answered ${r.status}`)
  return json as T
}

/** Follows the server's feed (server-sent events): states and job progress; returns a function that stops it. */
export function follow(
  size: number,
  onState: (s: State) => void,
  onError: (message: string) => void,
  onJob: (j: Job) => void = () => {},
): () => void {
  const feed = new EventSource(`/crystal/feed?size=${size}`)
  feed.addEventListener('state', (e) => onState(JSON.parse((e as MessageEvent).data)))
  feed.addEventListener('job', (e) => onJob(JSON.parse((e as MessageEvent).data)))
  feed.onerror = () => onError('lost the live feed; retrying')
  return () => feed.close()
}
