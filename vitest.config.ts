import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: [
      'engine/**/*.test.ts',
      'app/**/*.test.ts',
      'cli/**/*.test.ts',
      'server/**/*.test.ts',
      'e2e/**/*.test.ts',
      'scripts/*.test.ts',
      'testing/*.test.ts',
    ],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // browser and bus tests share 2 cores with the rest of the suite: let polled claims take their time
    expect: { poll: { timeout: 15_000 } },
    // GPU tests share one Dawn device per file; files run in parallel forks. Two, on 2 cores: Vitest's
    // default (cores - 1) ran one file at a time, and the station's, the bus's and the browser's files
    // mostly wait on the clock (the Node 20 run took 1,089 s where 1,847 with one).
    pool: 'forks',
    maxWorkers: 2,
    coverage: {
      // the gate issue 7 sets: the consciousness core and the contracts, lines and functions
      enabled: true,
      provider: 'v8',
      include: ['engine/consciousness/**/*.ts', 'engine/contracts/**/*.ts'],
      exclude: ['**/*.test.ts'],
      reporter: ['text-summary'],
      thresholds: { lines: 80, functions: 80 },
    },
  },
})
