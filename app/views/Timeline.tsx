// The decay timeline: energy, bulk loss and boundary leakage over steps, on a linear or a log scale,
// with marks where energy went in (a write, a pulse) or a dream took it out, and the values under the pointer.
import { useState } from 'react'
import type { BooksType as Books } from '../../engine/contracts/api.js'
import { marksOf } from '../chart'
import { LineChart } from './LineChart'

const SERIES = [
  { key: 'energy', label: 'energy', colour: '#f5b942' },
  { key: 'bulk_loss', label: 'bulk loss', colour: '#6fa8ff' },
  { key: 'boundary_loss', label: 'boundary leakage', colour: '#e0607e' },
] as const

const MARK = {
  in: { colour: '#7fd18b', glyph: '▼', says: 'energy put in (a write or a pulse, or a dream amplifying)' },
  dream: { colour: '#c39bff', glyph: '◆', says: 'a dream took energy out' },
} as const

/** `points`: the timeline's samples, then the books now (so that a write or dream since the last sample shows at once). */
export function Timeline({ points }: { points: Books[] }) {
  const [log, setLog] = useState(false)
  if (points.length < 2)
    return (
      <div className="timeline empty" data-testid="timeline">
        The timeline fills as the field resonates: press Resonate.
      </div>
    )
  const marks = marksOf(points).map((m) => ({
    x: m.step,
    colour: MARK[m.kind].colour,
    glyph: MARK[m.kind].glyph,
    label: `step ${m.step}: ${MARK[m.kind].says}, ${m.delta > 0 ? '+' : ''}${m.delta.toPrecision(3)}`,
  }))
  return (
    <div className="timeline" data-testid="timeline">
      <div className="chart-options">
        <label className="muted">
          <input type="checkbox" name="timeline-log" checked={log} onChange={(e) => setLog(e.target.checked)} /> log scale
        </label>
        {marks.length > 0 && (
          <span className="muted" data-testid="timeline-marks">
            <span style={{ color: MARK.in.colour }}>{MARK.in.glyph}</span> energy in ·{' '}
            <span style={{ color: MARK.dream.colour }}>{MARK.dream.glyph}</span> dream
            {` · ${marks.length} ${marks.length === 1 ? 'mark' : 'marks'}`}
          </span>
        )}
      </div>
      <LineChart
        testId="timeline-chart"
        width={960}
        height={260}
        series={SERIES.map((s) => ({ label: s.label, colour: s.colour, points: points.map((p) => [p.step, p[s.key]] as const) }))}
        xLabel="step"
        yLabel="energy"
        log={log}
        marks={marks}
        describe={(x) => `step ${x}: `}
      />
    </div>
  )
}
