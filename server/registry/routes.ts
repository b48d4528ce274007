// The registry and material routes: primitives with filters and paging, one primitive, materials.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import * as api from '../../engine/contracts/api.js'
import type { MaterialCatalog } from '../../engine/field/materials.js'
import { CrystalError, isCrystalError } from '../../engine/errors.js'
import { quality, type Registry } from '../../engine/registry/registry.js'

export interface RegistryRoutesOptions {
  catalog: MaterialCatalog
  registry: () => Registry
}

export const registryRoutes: FastifyPluginAsyncTypebox<RegistryRoutesOptions> = async (app, { catalog, registry }) => {
  app.get(
    '/primitives',
    {
      schema: {
        tags: ['registry'],
        summary: 'Primitives, filtered, sorted and paged',
        querystring: api.PrimitivesQuery,
        response: { 200: api.PrimitivesReply, 400: api.Problem, 404: api.Problem },
      },
    },
    async (req) => {
      const q = req.query
      const reg = registry()
      const base = q.similar_to ? (await reg.similar(q.similar_to, 500, 'similar_to')).map((h) => h.primitive) : await reg.list()
      const all = base.filter(
        (p) =>
          (!q.material || p.material === q.material) &&
          (!q.class || p.class === q.class) &&
          (q.min_persistence === undefined || p.persistence >= q.min_persistence),
      )
      // similar_to keeps similarity order unless a sort is asked for
      if (q.sort || !q.similar_to) {
        const key = q.sort ?? 'id'
        const value = (p: (typeof all)[number]) => (key === 'quality' ? quality(p) : key === 'id' ? 0 : p[key])
        const sign = (q.order ?? (key === 'id' ? 'asc' : 'desc')) === 'asc' ? 1 : -1
        all.sort((a, b) => sign * (value(a) - value(b) || a.id.localeCompare(b.id)))
      }
      const offset = q.offset ?? 0
      const limit = q.limit ?? 50
      return { total: all.length, offset, limit, items: all.slice(offset, offset + limit) }
    },
  )

  app.get(
    '/primitives/:id',
    {
      schema: {
        tags: ['registry'],
        summary: 'One primitive',
        params: api.IdParams,
        response: { 200: api.PrimitiveSchemaRef, 404: api.Problem },
      },
    },
    async (req) => registry().get(req.params.id),
  )

  app.post(
    '/primitives',
    {
      schema: {
        tags: ['registry'],
        summary: 'Register discoveries made elsewhere (a browser tab): novelty and caps apply',
        body: api.RegisterBody,
        response: { 200: api.RegisterReply, 400: api.Problem, 401: api.Problem, 413: api.Problem, 422: api.Problem },
      },
    },
    async (req) => {
      // A tab's own find was made with one of this server's materials (it reads them from /materials);
      // an import (with provenance) is another node's find, whose material may be that node's own file,
      // so it is taken as `crystal archive` takes it. The registry then checks every signature.
      req.body.candidates.forEach((c, index) => {
        if (c.provenance) return
        try {
          catalog.get(c.material)
        } catch (e) {
          if (!isCrystalError(e)) throw e
          throw new CrystalError(e.code, `candidates[${index}]: ${e.message}`, { field: `candidates[${index}].material` }, e.hint)
        }
      })
      const out = await registry().register(req.body.candidates)
      return {
        assigned: out.assigned,
        registered: out.registered.map((p) => p.id),
        rejected: out.rejected.map(({ index, duplicate_of, similarity }) => ({ index, duplicate_of, similarity })),
      }
    },
  )

  app.get('/materials', { schema: { tags: ['registry'], summary: 'The materials', response: { 200: api.MaterialsReply } } }, async () =>
    catalog.list().map((e) => ({ ...e.material, source: e.source })),
  )
}
