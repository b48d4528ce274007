// A line chart in SVG for the Observatory (the decay timeline, evolve's generations): round ticks on
// both axes, an optional log scale for y, marks along x, and the values under the pointer.
import { useEffect, useRef, useState, type ReactNode } from 'react'
import { linearTicks, logTicks, tickLabel } from '../chart'

export interface Series {
  label: string
  colour: string
  /** [x, y] pairs in x order. */
  points: readonly (readonly [number, number])[]
  dashed?: boolean
}

export interface XMark {
  x: number
  colour: string
  /** The mark's tooltip and accessible name. */
  label: string
  glyph: string
}

const PAD = { left: 52, right: 18, top: 22, bottom: 32 }

/** `format`: how a value under the pointer is written (the CLI's precision, where the chart mirrors its figures). */
export function LineChart({
  series,
  xLabel,
  yLabel,
  log = false,
  marks = [],
  width = 560,
  height = 220,
  testId,
  describe,
  format = (y) => y.toPrecision(4),
  wholeX = false,
}: {
  series: Series[]
  xLabel: string
  yLabel: string
  log?: boolean
  marks?: XMark[]
  /** The width to draw at before the chart's box has been measured; then it follows the box, so that its text stays at 11 px. */
  width?: number
  height?: number
  testId: string
  describe?: (x: number) => ReactNode
  format?: (y: number) => string
  /** x counts whole things (generations): no ticks between them. */
  wholeX?: boolean
}) {
  const [hover, setHover] = useState<number | undefined>()
  const box = useRef<HTMLDivElement>(null)
  const [measured, setMeasured] = useState<number>()
  useEffect(() => {
    const el = box.current!
    const watch = new ResizeObserver(() => setMeasured(el.clientWidth || undefined))
    watch.observe(el)
    return () => watch.disconnect()
  }, [])
  const W = measured ?? width
  const H = height
  const xs = series.flatMap((s) => s.points.map((p) => p[0]))
  // a log axis shows only positive values; zero and below are left out of the line (a gap)
  const ys = series.flatMap((s) => s.points.map((p) => p[1])).filter((y) => Number.isFinite(y) && (!log || y > 0))
  const x0 = Math.min(...xs)
  const x1 = Math.max(...xs)
  let y0 = log ? Math.min(...ys) : Math.min(0, ...ys)
  let y1 = Math.max(...ys)
  if (!(y1 > y0)) (y0 = log ? y0 / 2 : y0 - 1), (y1 = log ? y1 * 2 || 1 : y1 + 1)
  const yTicks = log ? logTicks(y0, y1) : linearTicks(y0, y1)
  if (!log) (y0 = Math.min(y0, yTicks[0])), (y1 = Math.max(y1, yTicks[yTicks.length - 1]))
  const xTicks = linearTicks(x0, x1, 6, wholeX)
  const sx = (x: number) => PAD.left + ((x - x0) / (x1 - x0 || 1)) * (W - PAD.left - PAD.right)
  const sy = (y: number) =>
    log
      ? H - PAD.bottom - ((Math.log10(y) - Math.log10(y0)) / (Math.log10(y1) - Math.log10(y0) || 1)) * (H - PAD.top - PAD.bottom)
      : H - PAD.bottom - ((y - y0) / (y1 - y0 || 1)) * (H - PAD.top - PAD.bottom)
  const path = (s: Series) => {
    let d = ''
    let pen = false
    for (const [x, y] of s.points) {
      if (!Number.isFinite(y) || (log && y <= 0)) {
        pen = false
        continue
      }
      d += `${pen ? 'L' : 'M'}${sx(x).toFixed(1)},${sy(y).toFixed(1)}`
      pen = true
    }
    return d
  }
  const move = (e: React.MouseEvent<SVGSVGElement>) => {
    const r = e.currentTarget.getBoundingClientRect()
    const x = x0 + (((e.clientX - r.left) * (W / r.width) - PAD.left) / (W - PAD.left - PAD.right)) * (x1 - x0)
    const near = xs.reduce((best, v) => (Math.abs(v - x) < Math.abs(best - x) ? v : best), xs[0])
    setHover(near)
  }
  return (
    <div className="chart" data-testid={testId} ref={box}>
      <svg
        viewBox={`0 0 ${W} ${H}`}
        role="img"
        aria-label={`${yLabel} against ${xLabel}`}
        onMouseMove={move}
        onMouseLeave={() => setHover(undefined)}
      >
        {yTicks.map((t) => (
          <g key={`y${t}`} className="y-tick">
            <line x1={PAD.left} x2={W - PAD.right} y1={sy(t)} y2={sy(t)} className="grid" />
            <text x={PAD.left - 6} y={sy(t) + 4} textAnchor="end">
              {tickLabel(t)}
            </text>
          </g>
        ))}
        {xTicks.map((t) => (
          // the last label ends at its tick so that it is not cut at the edge
          <text key={`x${t}`} className="x-tick" x={sx(t)} y={H - 14} textAnchor={sx(t) > W - PAD.right - 16 ? 'end' : 'middle'}>
            {tickLabel(t)}
          </text>
        ))}
        <text x={W - PAD.right} y={H - 2} textAnchor="end" className="axis-label">
          {xLabel} →
        </text>
        <text x={PAD.left} y={11} className="axis-label">
          {yLabel}
          {log ? ' (log)' : ''}
        </text>
        {marks.map((m) => (
          <g key={`${m.x} ${m.label}`} className="mark">
            <line x1={sx(m.x)} x2={sx(m.x)} y1={PAD.top} y2={H - PAD.bottom} stroke={m.colour} strokeDasharray="2 3" />
            <text x={sx(m.x)} y={PAD.top} textAnchor="middle" fill={m.colour} aria-label={m.label}>
              <title>{m.label}</title>
              {m.glyph}
            </text>
          </g>
        ))}
        {series.map((s) => (
          <path key={s.label} d={path(s)} fill="none" stroke={s.colour} strokeWidth={1.6} strokeDasharray={s.dashed ? '5 4' : undefined} />
        ))}
        {/* a series of one point (a search's first generation) draws no line: a dot shows it */}
        {series.map((s) => {
          const shown = s.points.filter(([, y]) => Number.isFinite(y) && (!log || y > 0))
          return shown.length === 1 ? (
            <circle key={s.label} className="dot" cx={sx(shown[0][0])} cy={sy(shown[0][1])} r={3} fill={s.colour} />
          ) : null
        })}
        {hover !== undefined && <line x1={sx(hover)} x2={sx(hover)} y1={PAD.top} y2={H - PAD.bottom} className="cursor" />}
      </svg>
      <div className="legend" data-testid={`${testId}-values`}>
        {hover !== undefined && describe ? describe(hover) : null}
        {series.map((s) => {
          const at = hover === undefined ? undefined : s.points.find((p) => p[0] === hover)
          return (
            <span key={s.label} style={{ color: s.colour }}>
              {s.label}
              {at ? ` ${format(at[1])}` : ''}
            </span>
          )
        })}
      </div>
    </div>
  )
}
