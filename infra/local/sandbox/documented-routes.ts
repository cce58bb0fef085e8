import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AtsKind } from '../../../shared/config';
import type { CallShape } from './http-kit';

export interface DocumentedRoute {
  method: string;
  path: string;
  query: string[];
  body: string[] | null;
  source: string;
}

/**
 * The vendors documented-routes.json lists: the ATS kinds, and Kombo's unified ATS API, whose paths are written as
 * requested (`/v1/ats/…`, its base ending in /v1). `AtsKind | 'kombo'` stays right once `kombo` is an `AtsKind`.
 */
export type DocumentedVendor = AtsKind | 'kombo';

let loaded: Record<DocumentedVendor, DocumentedRoute[]> | undefined;

/** The routes each vendor documents (documented-routes.json beside this file, each route with its source). */
export function documentedRoutes(): Record<DocumentedVendor, DocumentedRoute[]> {
  loaded ??= (
    JSON.parse(readFileSync(join(import.meta.dirname, 'documented-routes.json'), 'utf8')) as {
      ats: Record<DocumentedVendor, DocumentedRoute[]>;
    }
  ).ats;
  return loaded;
}

/** Kombo's unified ATS routes the connector may call (the sandbox of Kombo serves these and refuses the rest). */
export const documentedKomboRoutes = (): DocumentedRoute[] => documentedRoutes().kombo;

/** `/v3/applications/:id/move` and `/v3/applications/{id}/move` are one template. */
const template = (path: string) => path.replace(/:[A-Za-z]+|\{[^}]+\}/g, '{}');

/** The query parameters the vendor documents for a sandbox's route, where it documents the route. */
export const documentedQuery = (kind: DocumentedVendor, method: string, pattern: string): string[] | undefined =>
  documentedRoutes()[kind].find((r) => r.method === method && template(r.path) === template(pattern))?.query;

/** A route's template matches a sandbox's template of the same route, or a concrete path (`/v3/applications/7`). */
function matches(route: DocumentedRoute, path: string): boolean {
  const wanted = template(route.path);
  if (wanted === template(path)) return true;
  const pattern = wanted.split('{}').map((part) => part.replace(/[.*+?^$()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${pattern.join('[^/]+')}$`).test(path);
}

/**
 * Each call the connector made that the vendor does not document: a method and path no route has, or a query
 * parameter or body field its route does not list. Empty when every call is documented.
 */
export function undocumentedCalls(
  kind: DocumentedVendor,
  calls: readonly CallShape[],
  routes = documentedRoutes(),
): string[] {
  const problems: string[] = [];
  for (const call of calls) {
    const route = routes[kind].find((r) => r.method === call.method && matches(r, call.route));
    const name = `${kind} ${call.method} ${call.route}`;
    if (!route) {
      problems.push(`${name}: no documented route`);
      continue;
    }
    const query = call.query.filter((q) => !route.query.includes(q));
    if (query.length) problems.push(`${name}: undocumented query parameter ${query.join(', ')}`);
    const body = call.body.filter((f) => !(route.body ?? []).includes(f));
    if (body.length) problems.push(`${name}: undocumented body field ${body.join(', ')}`);
  }
  return problems;
}

/**
 * The ATS a request's path belongs to, by each API's own shape: Workable `/spi/v3/…`, Greenhouse Harvest `/v3/…` and
 * its `/token`, Kombo's unified ATS `/v1/ats/…` and `/v1/integrations/…` (before Lever's), Lever `/v1/…`, Ashby's
 * RPC `/noun.verb`. Undefined for any other path (not an ATS's).
 */
export function atsOfPath(path: string): DocumentedVendor | undefined {
  if (path.startsWith('/spi/v3/')) return 'workable';
  if (/^\/v1\/(ats|integrations)\//.test(path)) return 'kombo';
  if (path.startsWith('/v3/') || path === '/token') return 'greenhouse';
  if (path.startsWith('/v1/')) return 'lever';
  if (/^\/[A-Za-z]+\.[A-Za-z]+$/.test(path)) return 'ashby';
  return undefined;
}
