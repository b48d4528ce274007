// The server's REST API and live feed, as the Observatory uses them. Errors come back as the
// problem+json detail, in words, for the control that caused them.

export interface Books {
  step: number
  energy: number
  bulk_loss: number
  boundary_loss: number
  saturation: number
  noise_work: number
  injected: number
}

export interface State {
  step: number
  size: number
  field_size: number
  material: string
  temperature_k: number
  backend: string
  memories: number
  field: number[]
  books: Books
  timeline: Books[]
}

export async function post<T>(path: string, body: unknown, headers: Record<string, string> = {}): Promise<T> {
  const r = await fetch(path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })
  const json = await r.json().catch(() => ({}))
  if (!r.ok) throw new ApiError(json.detail ?? `the server answered ${r.status}`, json.errors)
  return json as T
}

export interface Job {
  id: string
  status: 'queued' | 'running' | 'done' | 'failed' | 'cancelled'
  progress: { generation: number; generations: number; best_fitness: number; registered_total: number }
  registered: string[]
  error: string | null
}

export interface ProgramError {
  line: number
  column: number
  message: string
  hint?: string
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
export function follow(size: number, onState: (s: State) => void, onError: (message: string) => void, onJob: (j: Job) => void = () => {}): () => void {
  const feed = new EventSource(`/crystal/feed?size=${size}`)
  feed.addEventListener('state', (e) => onState(JSON.parse((e as MessageEvent).data)))
  feed.addEventListener('job', (e) => onJob(JSON.parse((e as MessageEvent).data)))
  feed.onerror = () => onError('lost the live feed; retrying')
  return () => feed.close()
}
