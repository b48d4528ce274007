// The archive as a map (docs/discovery.md): a material's registered primitives placed in the MAP-Elites
// grid (class x size x standing), each cell coloured by its elite's fitness; click a cell for its elite.
import { useEffect, useMemo, useState } from 'react'
import { get } from '../api'
import { CLASS_NAMES, CLASS_TOKENS, type ClassToken } from '../../engine/contracts/registry'
import { ARCHIVE_CELLS, cellKey, cellOf, SIZE_EDGES, STANDING_EDGES } from '../../engine/discovery/archive'

interface Placed {
  id: string
  class: ClassToken
  material: string
  persistence: number
  noise_tolerance: number
  metrics: Record<string, number>
}

const SIZES = SIZE_EDGES.length + 1
const STANDINGS = STANDING_EDGES.length + 1
/** Primitives registered before the archive existed have no standing in their metrics and cannot be placed. */
const placeable = (p: Placed) => typeof p.metrics.area === 'number' && typeof p.metrics.standing === 'number' && typeof p.metrics.fitness === 'number'
/** Dark blue (low fitness) to amber (high). */
const colour = (f: number) => `hsl(${220 - 180 * f}, 70%, ${25 + 30 * f}%)`

export function ArchiveMap({ material, onSelect }: { material: string; onSelect: (id: string) => void }) {
  const [items, setItems] = useState<Placed[]>([])
  const [error, setError] = useState<string>()
  useEffect(() => {
    if (!material) return
    get<{ items: Placed[] }>(`/primitives?material=${encodeURIComponent(material)}&limit=500`).then(
      (d) => (setItems(d.items), setError(undefined)),
      (e: Error) => setError(e.message),
    )
  }, [material])
  // each cell's elite: the fittest primitive placed there
  const elites = useMemo(() => {
    const cells = new Map<string, Placed>()
    for (const p of items.filter(placeable)) {
      const key = cellKey(cellOf({ class: p.class, area: p.metrics.area, standing: p.metrics.standing }))
      const held = cells.get(key)
      if (!held || held.metrics.fitness < p.metrics.fitness) cells.set(key, p)
    }
    return cells
  }, [items])
  if (!material) return <p className="muted">Choose a material (filter above) to see its archive map.</p>
  if (error) return <p role="alert">{error}</p>
  const qd = [...elites.values()].reduce((s, p) => s + p.metrics.fitness, 0)
  return (
    <figure className="archive-map" data-testid="archive-map">
      <figcaption>
        archive of {material}: {elites.size} of {ARCHIVE_CELLS} cells ({((100 * elites.size) / ARCHIVE_CELLS).toFixed(1)}%), QD-score {qd.toFixed(2)}
        {items.length > items.filter(placeable).length ? ` · ${items.length - items.filter(placeable).length} older primitives without descriptors not shown` : ''}
      </figcaption>
      <table>
        <thead>
          <tr>
            <th />
            {Array.from({ length: SIZES }, (_, s) => (
              <th key={s} colSpan={STANDINGS}>
                size {s + 1}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {CLASS_TOKENS.map((c) => (
            <tr key={c}>
              <th scope="row">{CLASS_NAMES[c]}</th>
              {Array.from({ length: SIZES * STANDINGS }, (_, k) => {
                const cell = { class: c, size_bin: Math.floor(k / STANDINGS), standing_bin: k % STANDINGS }
                const elite = elites.get(cellKey(cell))
                const where = `${CLASS_NAMES[c]}, size bin ${cell.size_bin + 1}, standing bin ${cell.standing_bin + 1}`
                return (
                  <td key={k}>
                    {elite ? (
                      <button className="cell" style={{ background: colour(elite.metrics.fitness) }} title={`${where}: ${elite.id}, fitness ${elite.metrics.fitness.toFixed(3)}`} aria-label={`${where}: ${elite.id}`} onClick={() => onSelect(elite.id)} />
                    ) : (
                      <span className="cell empty" title={`${where}: empty`} />
                    )}
                  </td>
                )
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  )
}
