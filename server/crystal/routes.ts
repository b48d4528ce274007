// The crystal routes: the one engine (write, pulse, step, dream, probe, recall, state, feed) and
// the long work beside it (evolve jobs, .crystal programs). Schemas from engine/contracts/api.ts.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import * as api from '../../engine/contracts/api.js'
import { PULSE_DEFAULTS } from '../../engine/encode/pulse.js'
import { CrystalError } from '../../engine/errors.js'
import type { MaterialCatalog } from '../../engine/field/materials.js'
import { programCost, stepBudget, type CommandCost } from '../../engine/lang/cost.js'
import { check, parse } from '../../engine/lang/parse.js'
import type { Registry } from '../../engine/registry/registry.js'
import { limit, problem } from '../errors.js'
import { FEED_INTERVAL_MS, type CrystalService } from './service.js'
import type { ConsciousnessPublisher } from '../../engine/consciousness/publisher.js'

export interface CrystalRoutesOptions {
  service: CrystalService
  catalog: MaterialCatalog
  registry: () => Registry
  /** Present when the server publishes to the bus: dreams are announced through it. */
  publisher?: ConsciousnessPublisher
}

const problems = { 400: api.Problem, 401: api.Problem, 404: api.Problem, 413: api.Problem, 422: api.Problem, 429: api.Problem }

export const crystalRoutes: FastifyPluginAsyncTypebox<CrystalRoutesOptions> = async (app, { service, catalog, registry, publisher }) => {
  const changed = async () => ({ step: service.engine.step_count, memories: service.engine.memories.length, books: service.books })
  const tags = ['crystal']

  app.post(
    '/crystal/write',
    { schema: { tags, summary: 'Write text into the field', body: api.WriteBody, response: { 200: api.MutationReply, ...problems } } },
    async (req) => {
      await service.mutate((e) => {
        const held = e.memories.length
        if (held >= api.API_LIMITS.memories) throw limit('memories', held + 1, api.API_LIMITS.memories, 'memories')
        return e.write(req.body.text, req.body.importance ?? 1)
      })
      return changed()
    },
  )

  app.post(
    '/crystal/pulse',
    {
      schema: {
        tags,
        summary: 'Add a pulse (normalized coordinates)',
        body: api.PulseBody,
        response: { 200: api.MutationReply, ...problems },
      },
    },
    async (req) => {
      await service.mutate((e) => e.pulse({ ...PULSE_DEFAULTS, ...req.body }))
      return changed()
    },
  )

  app.post(
    '/crystal/step',
    { schema: { tags, summary: 'Step the field', body: api.StepBody, response: { 200: api.MutationReply, ...problems } } },
    async (req) => {
      if (req.body.steps > api.API_LIMITS.steps_per_request)
        throw limit('steps', req.body.steps, api.API_LIMITS.steps_per_request, 'steps_per_request')
      await service.step(req.body.steps)
      return changed()
    },
  )

  app.post(
    '/crystal/dream',
    { schema: { tags, summary: 'Dream (light or deep)', body: api.DreamBody, response: { 200: api.DreamReply, ...problems } } },
    async (req) => {
      return service.mutate(async (e) => {
        const dream = async () => (await e.dream(req.body.mode))[0]
        return publisher ? publisher.around(req.body.mode, dream) : dream()
      })
    },
  )

  app.post(
    '/crystal/probe',
    {
      schema: { tags, summary: 'Resonance of a text with the field', body: api.ProbeBody, response: { 200: api.ProbeReply, ...problems } },
    },
    async (req) => service.exclusive((e) => e.probe(req.body.text)),
  )

  app.post(
    '/crystal/recall',
    { schema: { tags, summary: 'Ranked recall of the memories', body: api.RecallBody, response: { 200: api.RecallReply, ...problems } } },
    async (req) => service.exclusive((e) => e.recall(req.body.text, req.body.k ?? 5)),
  )

  app.post(
    '/crystal/conditions',
    {
      schema: {
        tags,
        summary: 'Change the material, temperature or noise of the field',
        body: api.ConditionsBody,
        response: { 200: api.ConditionsReply, ...problems },
      },
    },
    async (req) => {
      const b = req.body
      const material = b.material === undefined ? undefined : catalog.get(b.material)
      return service.mutate(async (e) => {
        if (material) e.setMaterial(material)
        if (b.temperature_k !== undefined) e.setTemperature(b.temperature_k)
        if (b.noise !== undefined) e.setNoise(b.noise)
        return { material: e.material.name, temperature_k: e.temperature_k, noise: e.noise, step: e.step_count }
      })
    },
  )

  app.post(
    '/crystal/evolve',
    {
      schema: {
        tags,
        summary: 'Start an evolve job (progress on the feed)',
        body: api.EvolveBody,
        response: { 202: api.JobSchema, ...problems },
      },
    },
    async (req, reply) => {
      const b = req.body
      if (b.generations > api.API_LIMITS.generations) throw limit('generations', b.generations, api.API_LIMITS.generations, 'generations')
      if ((b.population ?? api.SEARCH_DEFAULTS.population) > api.API_LIMITS.population)
        throw limit('population', b.population!, api.API_LIMITS.population, 'population')
      if ((b.size ?? api.SEARCH_DEFAULTS.size) > api.API_LIMITS.evolve_size)
        throw limit('size', b.size!, api.API_LIMITS.evolve_size, 'evolve_size')
      return reply.code(202).send(service.startEvolve(b, catalog.get(b.material)))
    },
  )

  app.get(
    '/crystal/jobs/:id',
    { schema: { tags, summary: 'An evolve job', params: api.IdParams, response: { 200: api.JobSchema, ...problems } } },
    async (req) => {
      const job = service.job(req.params.id)
      if (!job) throw new CrystalError('not_found', `no job ${req.params.id}`)
      return job
    },
  )

  app.post(
    '/crystal/run',
    {
      schema: {
        tags,
        summary: 'Run a .crystal program (in its own field)',
        body: api.RunBody,
        response: { 200: api.RunReply, ...problems },
      },
    },
    async (req, reply) => {
      const { commands, errors } = parse(req.body.program, 'program')
      const reg = registry()
      const genomes = new Map((await reg.list()).map((p) => [p.id, p.genome.resonate_steps]))
      errors.push(
        ...check(commands, { materials: catalog.list().map((e) => e.material.name), primitiveIds: new Set(genomes.keys()) }, 'program'),
      )
      if (errors.length) {
        errors.sort((a, b) => a.line - b.line || a.column - b.column)
        return problem(reply, 422, `the program has ${errors.length} error${errors.length === 1 ? '' : 's'}; nothing was run`, {
          code: 'bad_program',
          errors: errors.map(({ line, column, message, hint }) => ({ line, column, message, ...(hint ? { hint } : {}) })),
        })
      }
      const size = service.engine.size
      overBudget(
        programCost(commands, (id) => genomes.get(id) ?? 0),
        size,
      )
      const trace = await service.runProgram({ commands, size, materials: catalog.list() })
      return { trace }
    },
  )

  app.get(
    '/crystal/state',
    {
      schema: {
        tags,
        summary: 'The field (downsampled) and its energy books and timeline',
        querystring: api.StateQuery,
        response: { 200: api.StateReply, ...problems },
      },
    },
    async (req, reply) => {
      const size = req.query.size ?? 64
      if (size > api.API_LIMITS.state_size) throw limit('size', size, api.API_LIMITS.state_size, 'state_size')
      // the cached JSON text (a StateReply) goes out as it is: no re-serialization per request
      return reply
        .type('application/json')
        .serializer((s: unknown) => s as string)
        .send((await service.state(size)) as never)
    },
  )

  app.get(
    '/crystal/field',
    {
      schema: {
        tags,
        summary:
          'The whole field (u and u_prev, float32 in base64), its step, memories, their text encoding and its conditions: for a tab to resume it',
        response: { 200: api.FieldReply, ...problems },
      },
    },
    async () =>
      service.exclusive(async (e) => {
        const { u, prev } = await e.read([0])
        return api.encodeField({
          size: e.size,
          step_count: e.step_count,
          material: e.material.name,
          temperature_k: e.temperature_k,
          noise: e.noise,
          encoding: e.encoding,
          memories: e.memories.map(({ text, importance, step }) => ({ text, importance, step })),
          u,
          prev,
        })
      }),
  )

  app.get(
    '/crystal/feed',
    {
      schema: {
        tags,
        summary: 'Server-sent events: `state` (as GET /crystal/state) on every change, at most every 100 ms; `job` on job progress',
        querystring: api.StateQuery,
        response: { 200: Type.String({ description: 'text/event-stream' }), ...problems },
      },
    },
    async (req, reply) => {
      const size = req.query.size ?? 64
      // as GET /crystal/state: refused, not quietly made smaller
      if (size > api.API_LIMITS.state_size) throw limit('size', size, api.API_LIMITS.state_size, 'state_size')
      reply.hijack()
      const out = reply.raw
      out.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' })
      let pending: NodeJS.Timeout | undefined
      let closed = false
      const write = (text: string) => closed || out.writableEnded || out.write(text)
      const send = (event: string, data: string) => write(`event: ${event}\ndata: ${data}\n\n`)
      const unsubscribe = service.subscribe((e) => {
        if (e.event === 'job') send('job', JSON.stringify(e.job))
        else pending ??= setTimeout(() => ((pending = undefined), sendState()), FEED_INTERVAL_MS)
      }, size)
      const heartbeat = setInterval(() => write(': keep-alive\n\n'), 15_000)
      const close = () => {
        closed = true
        unsubscribe()
        clearInterval(heartbeat)
        clearTimeout(pending)
      }
      req.raw.on('close', close)
      // a state that cannot be read (the device lost) ends the stream: the client's EventSource sees it and retries
      const sendState = () =>
        void service.state(size).then(
          (body) => send('state', body),
          (error: Error) => {
            req.log.warn({ err: error }, 'the feed could not read a state: ending the stream')
            close()
            out.end()
          },
        )
      sendState()
    },
  )
}

/** Refuses (413) a program whose steps, all its commands together, exceed the budget at this N, naming the costliest line. */
function overBudget(costs: readonly CommandCost[], size: number): void {
  const budget = stepBudget(api.API_LIMITS.program_cell_updates, size)
  const steps = costs.reduce((sum, c) => sum + c.steps, 0)
  if (steps <= budget) return
  const worst = costs.reduce((a, b) => (b.steps > a.steps ? b : a))
  throw new CrystalError(
    'limit_exceeded',
    `the program would run ${steps} field steps at N = ${size}, over the budget of ${budget} (program_cell_updates / N^2); nothing was run`,
    { file: 'program', line: worst.line, column: worst.column },
    `line ${worst.line} (${worst.command}) costs the most: ${worst.steps} steps`,
  )
}
