// A search's generations as line charts, for evolve (the Lab) and explore (the Swarm view): the QD-score
// per generation of every run kept (this one solid, earlier ones dashed), and this run's best and mean fitness.
import type { GenerationReport } from '../../engine/contracts/api.js'
import { LineChart } from './LineChart'

const RUN_COLOURS = ['#f5b942', '#6fa8ff', '#e0607e', '#7fd18b', '#c39bff', '#5fd6d6']
/** Runs kept for comparison on the QD chart, newest last. */
export const KEPT_RUNS = 6

/** The figures of a generation the charts draw (an evolve job's report, or an explorer's message on the bus). */
export type ChartedGeneration = Pick<GenerationReport, 'generation' | 'best_fitness' | 'mean_fitness' | 'qd_score'>

/** One search as the charts draw it: a stable key, its name in the legend and its generations so far. */
export interface ChartedRun {
  key: string
  label: string
  history: readonly ChartedGeneration[]
}

/**
 * The figures under the pointer are written as `crystal evolve` and `crystal explore` write them (QD-score
 * to 2 decimals, fitness to 3). `testId` names the two charts: `${testId}-qd` and `${testId}-fitness`.
 */
export function GenerationCharts({
  runs,
  current,
  testId,
  unit,
}: {
  runs: readonly ChartedRun[]
  current: string
  testId: string
  /** What one search is called there: an evolve's run, an explore's round. */
  unit: 'run' | 'round'
}) {
  const gens = (r: ChartedRun, pick: (g: ChartedGeneration) => number) => r.history.map((g) => [g.generation, pick(g)] as const)
  // a run joins the charts at its first generation
  const drawn = runs.filter((r) => r.history.length > 0)
  const now = drawn.find((r) => r.key === current)
  if (!drawn.length) return null
  return (
    <div className="generations" data-testid={`${testId}-history`}>
      <LineChart
        testId={`${testId}-qd`}
        width={380}
        height={190}
        xLabel="generation"
        wholeX
        yLabel="QD-score"
        series={drawn.map((r, i) => ({
          label: r.label,
          colour: RUN_COLOURS[i % RUN_COLOURS.length],
          points: gens(r, (g) => g.qd_score),
          dashed: r.key !== current,
        }))}
        describe={(x) => `generation ${x}: `}
        format={(y) => y.toFixed(2)}
      />
      {now && (
        <LineChart
          testId={`${testId}-fitness`}
          width={380}
          height={170}
          xLabel="generation"
          wholeX
          yLabel={`fitness, this ${unit}`}
          series={[
            { label: 'best', colour: '#f5b942', points: gens(now, (g) => g.best_fitness) },
            { label: 'mean', colour: '#6fa8ff', points: gens(now, (g) => g.mean_fitness) },
          ]}
          describe={(x) => `generation ${x}: `}
          format={(y) => y.toFixed(3)}
        />
      )}
    </div>
  )
}
