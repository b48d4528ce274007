// Errors as problem+json (RFC 9457), from one table: an error code to an honest HTTP status.
import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify'
import { CrystalError, isCrystalError, type ErrorCode } from '../engine/errors.js'

export const HTTP_STATUS: Record<ErrorCode, number> = {
  bad_argument: 400,
  unknown_material: 422,
  bad_material: 422,
  backend_unavailable: 503,
  registry_corrupt: 503,
  registry_busy: 503,
  medium_corrupt: 503,
  not_found: 404,
  bad_program: 422,
  missing_credential: 500,
  publish_failed: 502,
  bus_unavailable: 503,
  limit_exceeded: 413,
  busy: 429,
  missing_dependency: 503,
  over_capacity: 422,
  bad_message: 500,
  bad_audio: 422,
  no_music: 503,
  unauthorized: 401,
  forbidden: 403,
  conflict: 409,
  insufficient_funds: 422,
  bad_proposal: 422,
  ledger_corrupt: 503,
  oracle_unavailable: 503,
  voice_unavailable: 503,
  internal: 500,
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
}

export function problem(reply: FastifyReply, status: number, detail: string, extra: Record<string, unknown> = {}): FastifyReply {
  return reply
    .code(status)
    .type('application/problem+json')
    .send(JSON.stringify({ type: 'about:blank', title: TITLES[status] ?? 'Error', status, detail, ...extra }))
}

/** A refusal that names the field, its value and the limit (by its name in API_LIMITS). */
export function limit(field: string, value: number, max: number, limitName: string): CrystalError {
  return new CrystalError('limit_exceeded', `${field} is ${value}, over the limit of ${max} (${limitName})`, { field })
}

/** One of Ajv's errors, as far as the refusal reads it. */
interface SchemaError {
  keyword?: string
  instancePath?: string
  message?: string
  params?: { additionalProperty?: string; missingProperty?: string; allowedValue?: unknown; allowedValues?: unknown[] }
}

/**
 * The values a field allows where it failed as one of a list (an enum, or TypeBox's union of literals,
 * which fails once a literal: "must be equal to constant" said nothing of the choices), else undefined.
 */
function choicesAt(errors: readonly SchemaError[], path: string | undefined): string | undefined {
  const here = errors.filter((x) => x.instancePath === path)
  const values = here.flatMap((x) =>
    x.keyword === 'enum' ? (x.params?.allowedValues ?? []) : x.keyword === 'const' ? [x.params?.allowedValue] : [],
  )
  return values.length ? values.map((x) => JSON.stringify(x)).join(', ') : undefined
}

export function registerErrors(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | CrystalError, request, reply) => {
    if (isCrystalError(error)) {
      const status = HTTP_STATUS[error.code]
      if (status >= 500) request.log.error(error)
      const where = Object.keys(error.where).length ? { where: error.where } : {}
      return problem(reply, status, error.message, { code: error.code, ...where, ...(error.hint ? { hint: error.hint } : {}) })
    }
    const e = error as FastifyError
    if (e.validation) {
      const v = e.validation[0] as SchemaError | undefined
      const where = `${e.validationContext ?? 'request'}${v?.instancePath ?? ''}`
      const choices = choicesAt(e.validation as SchemaError[], v?.instancePath)
      const detail = v?.params?.additionalProperty
        ? `${where} has an unknown field "${v.params.additionalProperty}"`
        : v?.params?.missingProperty
          ? `${where} is missing the field "${v.params.missingProperty}"`
          : choices
            ? `${where} must be one of ${choices}`
            : `${where} ${v?.message ?? e.message}`
      // the field as a handler's errors name it: body/candidates/0/material is candidates[0].material
      const path = [...(v?.instancePath ?? '').split('/').filter(Boolean), v?.params?.missingProperty ?? v?.params?.additionalProperty]
        .filter((p): p is string => p !== undefined)
        .reduce((field, p) => (/^\d+$/.test(p) ? `${field}[${p}]` : field ? `${field}.${p}` : p), '')
      return problem(reply, 400, detail, { code: 'bad_request', ...(path ? { where: { field: path } } : {}) })
    }
    if (e.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
      return problem(reply, 413, `the body is over the limit of ${app.initialConfig.bodyLimit} bytes (body_bytes)`, {
        code: 'limit_exceeded',
      })
    // Fastify's own refusals (a body that is not JSON, a media type it does not read) in the product's one code for bad
    // input; a plugin's refusal keeps the code the product gave it (the markets' rate limit: rate_limited)
    if (e.statusCode && e.statusCode >= 400 && e.statusCode < 500)
      return problem(reply, e.statusCode, e.message, { code: e.code && !e.code.startsWith('FST_') ? e.code : 'bad_request' })
    request.log.error(e)
    return problem(reply, 500, 'the server failed on this request; see its log', { code: 'internal' })
  })
  app.setNotFoundHandler((request, reply) =>
    problem(reply, 404, `no route ${request.method} ${request.url.split('?')[0]}`, { code: 'not_found' }),
  )
}
