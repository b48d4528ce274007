// The decay timeline: energy, bulk loss and boundary leakage over steps, with axes and the values
// under the pointer.
import { useState } from 'react'
import type { BooksType as Books } from '../../engine/contracts/api.js'

const SERIES = [
  { key: 'energy', label: 'energy', colour: '#f5b942' },
  { key: 'bulk_loss', label: 'bulk loss', colour: '#6fa8ff' },
  { key: 'boundary_loss', label: 'boundary leakage', colour: '#e0607e' },
] as const

const W = 560
const H = 220
const PAD = { left: 56, right: 12, top: 12, bottom: 30 }

export function Timeline({ points }: { points: Books[] }) {
  const [hover, setHover] = useState<number | undefined>()
  if (points.length < 2) return <div className="timeline empty" data-testid="timeline">The timeline fills as the field resonates.</div>
  const x0 = points[0].step
  const x1 = points[points.length - 1].step
  const ymax = Math.max(...points.flatMap((p) => SERIES.map((s) => p[s.key]))) || 1
  const sx = (step: number) => PAD.left + ((step - x0) / (x1 - x0 || 1)) * (W - PAD.left - PAD.right)
  const sy = (v: number) => H - PAD.bottom - (v / ymax) * (H - PAD.top - PAD.bottom)
  const ticks = [0, 0.25, 0.5, 0.75, 1]
  const at = hover === undefined ? undefined : points[hover]
  const move = (e: React.MouseEvent<SVGSVGElement>) => {
    const r = e.currentTarget.getBoundingClientRect()
    const step = x0 + (((e.clientX - r.left) * (W / r.width) - PAD.left) / (W - PAD.left - PAD.right)) * (x1 - x0)
    let best = 0
    points.forEach((p, i) => (Math.abs(p.step - step) < Math.abs(points[best].step - step) ? (best = i) : 0))
    setHover(best)
  }
  return (
    <div className="timeline" data-testid="timeline">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label="energy timeline" onMouseMove={move} onMouseLeave={() => setHover(undefined)}>
        {ticks.map((t) => (
          <g key={t}>
            <line x1={PAD.left} x2={W - PAD.right} y1={sy(t * ymax)} y2={sy(t * ymax)} className="grid" />
            <text x={PAD.left - 6} y={sy(t * ymax) + 4} textAnchor="end">{(t * ymax).toPrecision(3)}</text>
            <text x={sx(x0 + t * (x1 - x0))} y={H - 10} textAnchor="middle">{Math.round(x0 + t * (x1 - x0))}</text>
          </g>
        ))}
        <text x={W - PAD.right} y={H - PAD.bottom - 6} textAnchor="end" className="axis-label">step →</text>
        {SERIES.map((s) => (
          <polyline key={s.key} fill="none" stroke={s.colour} strokeWidth={1.6} points={points.map((p) => `${sx(p.step)},${sy(p[s.key])}`).join(' ')} />
        ))}
        {at && <line x1={sx(at.step)} x2={sx(at.step)} y1={PAD.top} y2={H - PAD.bottom} className="cursor" />}
      </svg>
      <div className="legend" data-testid="timeline-values">
        {at ? `step ${at.step}: ` : `${points.length} samples `}
        {SERIES.map((s) => (
          <span key={s.key} style={{ color: s.colour }}>
            {s.label}
            {at ? ` ${at[s.key].toPrecision(4)}` : ''}
          </span>
        ))}
      </div>
    </div>
  )
}
