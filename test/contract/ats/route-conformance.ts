import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AtsKind } from '../../../shared/config';
import type { CallShape } from '../../../infra/local/sandbox/http-kit';

export interface DocumentedRoute {
  method: string;
  path: string;
  query: string[];
  body: string[] | null;
  source: string;
}

/** The documented routes per ATS (fixtures/documented-routes.json, each with its vendor source). */
export function documentedRoutes(): Record<AtsKind, DocumentedRoute[]> {
  const file = join(import.meta.dirname, 'fixtures', 'documented-routes.json');
  return (JSON.parse(readFileSync(file, 'utf8')) as { ats: Record<AtsKind, DocumentedRoute[]> }).ats;
}

/** `/v3/applications/:id/move` and `/v3/applications/{id}/move` are one template. */
const template = (path: string) => path.replace(/:[A-Za-z]+|\{[^}]+\}/g, '{}');

/**
 * Each call the connector made that the vendor does not document: a method and path no route has, or a query
 * parameter or body field its route does not list. Empty when every call is documented.
 */
export function undocumentedCalls(kind: AtsKind, calls: readonly CallShape[], routes = documentedRoutes()): string[] {
  const problems: string[] = [];
  for (const call of calls) {
    const route = routes[kind].find((r) => r.method === call.method && template(r.path) === template(call.route));
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
