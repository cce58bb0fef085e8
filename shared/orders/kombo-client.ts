import * as v from 'valibot';
import { errorMessage, OutwardCallError } from '../errors';
import { sendHttpRequest, type HttpResponse } from '../http';
import { parseRetryAfter } from '../http/retry';
import {
  komboErrorSchema,
  komboOrderSchema,
  komboOrderStatusSchema,
  komboOrdersPageSchema,
  komboPackagesSchema,
  komboWarningsSchema,
  type KomboOrder,
} from './kombo.schemas';

/** A package as Kombo takes it: every field required; the connector publishes its tests as video interviews. */
export interface KomboPackage {
  id: string;
  /** `VIDEO_INTERVIEW` for the connector's own; a package published otherwise is kept as Kombo has it. */
  type: string;
  name: string;
  description: string;
}

/** `PUT /assessment/orders/{id}/result`: the one final result of an order. */
export interface KomboResult {
  status: 'COMPLETED' | 'CANCELLED';
  result_url: string;
  completed_at: string;
  score?: number;
  max_score?: number;
  attributes?: { type: 'TEXT'; label: string; value: string }[];
}

export interface KomboApi {
  /**
   * One page of an integration's orders (`statuses`, `ids`, `createdAfter` filter): those that read, each order's
   * id and status however the rest reads, and how many did not read.
   */
  listOrders(
    integrationId: string,
    query: {
      statuses?: readonly string[];
      ids?: readonly string[];
      createdAfter?: string | undefined;
      cursor?: string | undefined;
    },
    signal?: AbortSignal,
  ): Promise<{
    orders: KomboOrder[];
    statuses: { id: string; status: string }[];
    unreadable: number;
    next: string | undefined;
  }>;
  putResult(integrationId: string, orderId: string, result: KomboResult, signal?: AbortSignal): Promise<string[]>;
  getPackages(integrationId: string, signal?: AbortSignal): Promise<KomboPackage[]>;
  /** Replaces the integration's whole list: a package left out is deleted. Answers Kombo's warnings. */
  setPackages(integrationId: string, packages: readonly KomboPackage[], signal?: AbortSignal): Promise<string[]>;
}

const PAGE_SIZE = 250;
/** A concurrency 429 carries no Retry-After: the write is tried again after this. */
const CONCURRENCY_WAIT_MS = 2000;

/** Kombo's API for one account (`Authorization: Bearer <key>`), each call naming its integration. */
export function komboClient(options: { baseUrl: string; apiKey: string; timeoutMs: number }): KomboApi {
  return new KomboClient(options);
}

interface KomboCall {
  integrationId: string;
  method: 'GET' | 'PUT';
  path: string;
  body?: unknown;
  signal?: AbortSignal | undefined;
}

class KomboClient implements KomboApi {
  public constructor(private readonly options: { baseUrl: string; apiKey: string; timeoutMs: number }) {}

  public async listOrders(
    integrationId: string,
    query: Parameters<KomboApi['listOrders']>[1],
    signal?: AbortSignal,
  ): ReturnType<KomboApi['listOrders']> {
    const params = new URLSearchParams({ page_size: String(PAGE_SIZE) });
    if (query.statuses?.length) params.set('statuses', query.statuses.join(','));
    if (query.ids?.length) params.set('ids', query.ids.join(','));
    if (query.createdAfter) params.set('created_after', query.createdAfter);
    if (query.cursor) params.set('cursor', query.cursor);
    const response = await this.call({ integrationId, method: 'GET', path: `/assessment/orders?${params}`, signal });
    const page = v.safeParse(komboOrdersPageSchema, jsonOf(response));
    if (!page.success)
      throw new OutwardCallError('kombo-unreadable', 'GET /assessment/orders: the answer has no data.results', {
        retryable: true,
        status: response.status,
      });
    const orders: KomboOrder[] = [];
    const statuses: { id: string; status: string }[] = [];
    let unreadable = 0;
    for (const item of page.output.data.results) {
      const parsed = v.safeParse(komboOrderSchema, item);
      if (parsed.success) orders.push(parsed.output);
      else unreadable++;
      const status = v.safeParse(komboOrderStatusSchema, item);
      if (status.success) statuses.push(status.output);
    }
    return { orders, statuses, unreadable, next: page.output.data.next ?? undefined };
  }

  public async putResult(integrationId: string, orderId: string, result: KomboResult, signal?: AbortSignal) {
    const path = `/assessment/orders/${encodeURIComponent(orderId)}/result`;
    return warningsOf(await this.call({ integrationId, method: 'PUT', path, body: result, signal }));
  }

  public async getPackages(integrationId: string, signal?: AbortSignal): Promise<KomboPackage[]> {
    const response = await this.call({ integrationId, method: 'GET', path: '/assessment/packages', signal });
    const parsed = v.safeParse(komboPackagesSchema, jsonOf(response));
    if (!parsed.success)
      throw new OutwardCallError('kombo-unreadable', 'GET /assessment/packages: the answer has no data.packages', {
        retryable: true,
      });
    return parsed.output.data.packages.map((p) => ({
      id: p.id,
      type: p.type,
      name: p.name ?? '',
      description: p.description ?? '',
    }));
  }

  public async setPackages(integrationId: string, packages: readonly KomboPackage[], signal?: AbortSignal) {
    const path = '/assessment/packages';
    return warningsOf(await this.call({ integrationId, method: 'PUT', path, body: { packages }, signal }));
  }

  private async call({ integrationId, method, path, body, signal }: KomboCall): Promise<HttpResponse> {
    let response: HttpResponse;
    try {
      response = await sendHttpRequest({
        url: `${this.options.baseUrl.replace(/\/$/, '')}${path}`,
        method,
        headers: {
          authorization: `Bearer ${this.options.apiKey}`,
          'x-integration-id': integrationId,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        timeoutMs: this.options.timeoutMs,
        signal,
      });
    } catch (error) {
      // No answer in time (a timeout, a lost connection, the worker's deadline) is never a verdict: retried.
      throw new OutwardCallError('kombo-unavailable', `${method} ${path.split('?')[0]}: ${errorMessage(error)}`, {
        retryable: true,
        mayHaveSucceeded: method !== 'GET',
        cause: error,
      });
    }
    if (response.status >= 200 && response.status < 300) return response;
    throw komboRefused(method, path, response);
  }
}

function jsonOf(response: HttpResponse): unknown {
  try {
    return JSON.parse(response.bodyText);
  } catch {
    return undefined;
  }
}

/** A 2xx is done whatever its body: warnings are read when they are there, never a reason to fail. */
function warningsOf(response: HttpResponse): string[] {
  const parsed = v.safeParse(komboWarningsSchema, jsonOf(response));
  return parsed.success ? (parsed.output.warnings ?? []).map((w) => w.message ?? '(no message)') : [];
}

/**
 * Kombo's refusal, by its `code` (Kombo asks partners to branch on it, not on the status): a concurrency or rate
 * 429 is a wait; 5xx is tried again; a refused key (401, 403) is tried again once the secret is fixed; any other
 * 4xx (an order no longer OPEN, invalid input) is for good.
 */
export function komboRefused(method: string, path: string, response: HttpResponse): OutwardCallError {
  const parsed = v.safeParse(komboErrorSchema, jsonOf(response));
  const code = parsed.success ? (parsed.output.error.code ?? undefined) : undefined;
  const message = parsed.success ? parsed.output.error.message : undefined;
  const status = response.status;
  const rateLimited = status === 429;
  // A refused key, or a set-up error (409), is fixed by an operator; a 408 is a time-out: each is tried again.
  const credential = status === 401 || status === 403 || status === 409 || status === 408;
  return new OutwardCallError(
    rateLimited ? 'kombo-rate-limited' : credential ? 'kombo-unauthorized' : 'kombo-refused',
    `Kombo answered ${status}${code ? ` ${code}` : ''} to ${method} ${path.split('?')[0]}` +
      (message ? `: ${message}` : ''),
    {
      status,
      retryable: rateLimited || credential || status >= 500,
      rateLimited,
      retryAfterMs: rateLimited ? (parseRetryAfter(response.headers) ?? CONCURRENCY_WAIT_MS) : undefined,
      definitelyNotSent: status < 500,
    },
  );
}
