// The primitive browser: the registry with filters (class, material, minimum persistence), sorting
// and paging done by the server, and a detail view: the signature as an image, the metrics, the
// lineage as a graph, and the most similar primitives.
import { useEffect, useRef, useState } from 'react'
import type { Static } from '@sinclair/typebox'
import type { PrimitivesQuery } from '../../engine/contracts/api.js'
import { CLASS_NAMES, CLASS_TOKENS, type ClassToken, type Primitive } from '../../engine/contracts/registry.js'
import { get } from '../api'
import { SIGNATURE_SIDE } from '../../engine/detect/detect'
import { ArchiveMap } from './ArchiveMap'

/** A class for people: its display name and its token. */
export const className = (c: ClassToken) => `${CLASS_NAMES[c]} (${c})`
type Sort = NonNullable<Static<typeof PrimitivesQuery>['sort']>
const pct = (v: number) => `${(100 * v).toFixed(1)}`

/** The signature's shape part (SIGNATURE_SIDE^2 floats; the modal map after it is not drawn). */
function Signature({ values: all }: { values: number[] }) {
  const canvas = useRef<HTMLCanvasElement>(null)
  const side = SIGNATURE_SIDE
  const values = all.slice(0, side * side)
  useEffect(() => {
    const ctx = canvas.current!.getContext('2d')!
    const img = ctx.createImageData(side, side)
    const peak = Math.max(...values.map(Math.abs), 1e-9)
    values.forEach((v, i) => {
      const t = Math.abs(v) / peak
      img.data.set([20 + 225 * t, 22 + 163 * t, 30 + 36 * t, 255], i * 4)
    })
    ctx.putImageData(img, 0, 0)
  }, [all])
  return <canvas ref={canvas} width={side} height={side} className="signature" role="img" aria-label="signature" data-testid="signature" />
}

/** Ancestors up to three generations back, laid out by generation. */
function Lineage({ root, fetchOne }: { root: Primitive; fetchOne: (id: string) => Promise<Primitive | undefined> }) {
  const [levels, setLevels] = useState<string[][]>([[root.id]])
  const [edges, setEdges] = useState<[string, string][]>([])
  useEffect(() => {
    let live = true
    // fetchOne answers undefined for an ancestor it cannot fetch (drawn as a bare id); it does not reject
    void (async () => {
      const lv: string[][] = [[root.id]]
      const ed: [string, string][] = []
      const seen = new Set([root.id])
      let frontier: Primitive[] = [root]
      for (let depth = 0; depth < 3 && frontier.length; depth++) {
        const next: Primitive[] = []
        for (const p of frontier) {
          for (const parent of p.lineage) {
            ed.push([parent, p.id])
            if (seen.has(parent)) continue
            seen.add(parent)
            const found = await fetchOne(parent)
            if (found) next.push(found)
            else next.push({ ...root, id: parent, lineage: [] })
          }
        }
        if (next.length) lv.push(next.map((p) => p.id))
        frontier = next
      }
      if (live) {
        setLevels(lv)
        setEdges(ed)
      }
    })()
    return () => {
      live = false
    }
  }, [root, fetchOne])
  const W = 360
  const at = new Map<string, [number, number]>()
  levels.forEach((ids, d) => ids.forEach((id, k) => at.set(id, [((k + 1) * W) / (ids.length + 1), 24 + d * 56])))
  const H = 48 + (levels.length - 1) * 56
  return (
    <svg className="lineage" viewBox={`0 0 ${W} ${H}`} role="img" aria-label="lineage" data-testid="lineage">
      {edges.map(([a, b]) => {
        const [x1, y1] = at.get(a) ?? [0, 0]
        const [x2, y2] = at.get(b) ?? [0, 0]
        return <line key={`${a}-${b}`} x1={x1} y1={y1} x2={x2} y2={y2} />
      })}
      {[...at.entries()].map(([id, [x, y]]) => (
        <g key={id} className={id === root.id ? 'self' : ''}>
          <rect x={x - 46} y={y - 11} width={92} height={22} rx={4} />
          <text x={x} y={y + 4} textAnchor="middle">
            {id}
          </text>
        </g>
      ))}
    </svg>
  )
}

export function Primitives() {
  const [filters, setFilters] = useState({ class: '', material: '', min_persistence: '' })
  const [sort, setSort] = useState<{ by: Sort; order: 'asc' | 'desc' }>({ by: 'id', order: 'asc' })
  const [page, setPage] = useState({ offset: 0, limit: 20 })
  const [data, setData] = useState<{ total: number; items: Primitive[] }>({ total: 0, items: [] })
  const [error, setError] = useState<string>()
  const [selected, setSelected] = useState<Primitive>()
  const [similar, setSimilar] = useState<Primitive[]>([])

  useEffect(() => {
    const q = new URLSearchParams({ offset: String(page.offset), limit: String(page.limit), sort: sort.by, order: sort.order })
    if (filters.class) q.set('class', filters.class)
    if (filters.material) q.set('material', filters.material)
    if (filters.min_persistence) q.set('min_persistence', String(Number(filters.min_persistence) / 100))
    get<{ total: number; items: Primitive[] }>(`/primitives?${q}`).then(
      (d) => (setData(d), setError(undefined)),
      (e: Error) => setError(e.message),
    )
  }, [filters, sort, page])

  useEffect(() => {
    if (!selected) return
    get<{ items: Primitive[] }>(`/primitives?similar_to=${selected.id}&limit=5`).then(
      (d) => setSimilar(d.items),
      () => setSimilar([]),
    )
  }, [selected])

  const fetchOne = useRef((id: string) => get<Primitive>(`/primitives/${id}`).catch(() => undefined)).current
  const header = (by: Sort, label: string) => (
    <th aria-sort={sort.by === by ? (sort.order === 'asc' ? 'ascending' : 'descending') : 'none'}>
      <button
        className="sort"
        onClick={() =>
          setSort({ by, order: sort.by === by && sort.order === 'desc' ? 'asc' : by === 'id' && sort.by !== 'id' ? 'asc' : 'desc' })
        }
      >
        {label}
      </button>
    </th>
  )
  const set = (k: keyof typeof filters, v: string) => (setFilters({ ...filters, [k]: v }), setPage({ ...page, offset: 0 }))

  return (
    <div className="primitives">
      <div className="filters">
        <label>
          class{' '}
          <select name="filter-class" value={filters.class} onChange={(e) => set('class', e.target.value)}>
            <option value="">any</option>
            {CLASS_TOKENS.map((c) => (
              <option key={c} value={c}>
                {className(c)}
              </option>
            ))}
          </select>
        </label>
        <label>
          material <input name="filter-material" value={filters.material} onChange={(e) => set('material', e.target.value)} size={14} />
        </label>
        <label>
          min persistence %{' '}
          <input
            name="filter-persistence"
            value={filters.min_persistence}
            onChange={(e) => set('min_persistence', e.target.value)}
            inputMode="decimal"
            size={4}
          />
        </label>
        <label>
          per page{' '}
          <select name="page-size" value={page.limit} onChange={(e) => setPage({ offset: 0, limit: Number(e.target.value) })}>
            {[5, 20, 50].map((n) => (
              <option key={n}>{n}</option>
            ))}
          </select>
        </label>
      </div>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      <ArchiveMap material={filters.material} onSelect={(id) => void fetchOne(id).then((p) => p && setSelected(p))} />
      <table data-testid="primitives-table">
        <thead>
          <tr>
            {header('id', 'ID')}
            <th>Type</th>
            {header('persistence', 'Persistence %')}
            {header('noise_tolerance', 'Noise Tol. %')}
            <th>Material</th>
            <th>Lineage</th>
          </tr>
        </thead>
        <tbody>
          {data.items.map((p) => (
            <tr key={p.id} className={selected?.id === p.id ? 'selected' : ''}>
              <td>
                <button className="link" onClick={() => setSelected(p)}>
                  {p.id}
                </button>
              </td>
              <td>{className(p.class)}</td>
              <td>{pct(p.persistence)}</td>
              <td>{pct(p.noise_tolerance)}</td>
              <td>{p.material}</td>
              <td>{p.lineage.join(' ') || '-'}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <div className="pager">
        <button disabled={page.offset === 0} onClick={() => setPage({ ...page, offset: Math.max(0, page.offset - page.limit) })}>
          Previous
        </button>
        <span data-testid="page">
          {data.total ? `${page.offset + 1}–${Math.min(page.offset + page.limit, data.total)} of ${data.total}` : 'no primitives match'}
        </span>
        <button disabled={page.offset + page.limit >= data.total} onClick={() => setPage({ ...page, offset: page.offset + page.limit })}>
          Next
        </button>
      </div>
      {selected && (
        <section className="detail" data-testid="primitive-detail" aria-label={`primitive ${selected.id}`}>
          <h2>
            {selected.id} <span className="muted">{className(selected.class)}</span>
          </h2>
          <div className="detail-grid">
            <Signature values={selected.signature} />
            <dl>
              <dt>persistence</dt>
              <dd>{pct(selected.persistence)}%</dd>
              <dt>noise tolerance</dt>
              <dd>{pct(selected.noise_tolerance)}%</dd>
              <dt>material</dt>
              <dd>{selected.material}</dd>
              <dt>genome</dt>
              <dd>
                {selected.genome.pulses.length} pulse(s), {selected.genome.resonate_steps} steps, dream {selected.genome.dream}
              </dd>
              {Object.entries(selected.metrics).map(([k, v]) => (
                <div key={k} className="metric">
                  <dt>{k.replace(/_/g, ' ')}</dt>
                  <dd>{Number.isInteger(v) ? v : v.toFixed(3)}</dd>
                </div>
              ))}
            </dl>
            <Lineage root={selected} fetchOne={fetchOne} />
          </div>
          <h3>Similar</h3>
          <ul data-testid="similar">
            {similar.map((p) => (
              <li key={p.id}>
                <button className="link" onClick={() => setSelected(p)}>
                  {p.id}
                </button>{' '}
                {className(p.class)}, persistence {pct(p.persistence)}%
              </li>
            ))}
          </ul>
        </section>
      )}
    </div>
  )
}
