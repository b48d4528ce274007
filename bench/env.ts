// The variables that scale a benchmark down or up (docs/discovery.md, docs/recall.md), read when the
// benchmark starts and checked as the product's are (engine/config.ts): a bad value stops it naming
// the variable, where `Number("abc")` ran a benchmark of NaN seeds.
import { Type } from '@sinclair/typebox'
import { choice, readEnv } from '../engine/config.js'

export const BENCH_ENV = Type.Object({
  CRYSTAL_BENCH_SEEDS: Type.Optional(Type.Integer({ minimum: 1 })),
  CRYSTAL_BENCH_EVALUATIONS: Type.Optional(Type.Integer({ minimum: 1 })),
  CRYSTAL_BENCH_SIZE: Type.Optional(Type.Integer({ minimum: 16, maximum: 4096 })),
  CRYSTAL_BENCH_MATERIALS: Type.Optional(Type.String()),
  CRYSTAL_BENCH_LONG: choice('0', '1'),
})

export const benchEnv = (env: Record<string, string | undefined> = process.env) => readEnv(env, BENCH_ENV)
