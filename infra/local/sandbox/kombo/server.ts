import { createHmac, randomBytes } from 'node:crypto';
import {
  listen,
  matchRoute,
  postWebhook,
  readBody,
  type Route,
  type RunningServer,
  sendJson,
  sleep,
} from '../http-kit';
import { UNSCOPED_PATTERNS } from './unified-ats';
import { createUnifiedAts, serveUnifiedControl, type UnifiedAts, unifiedControlRoutes } from './unified-control';

/**
 * Kombo's part, as its Assessment API documents it (assessment-partner facts, section 4): the packages a partner
 * publishes per integration (`PUT` replaces the list), `order-received` webhooks signed with `X-Kombo-Signature`
 * (HMAC-SHA256 of the body, base64url, no padding) with the nullable fields null, orders listed by status with a
 * cursor, and one result per order, taken only while it is OPEN (`result_url` and, to close it, `completed_at`
 * required; `warnings` answered). More than `concurrencyLimit` writes in flight per integration answer 429
 * `PLATFORM.CONCURRENCY_LIMIT_EXCEEDED`. A 422 to a delivery rejects the order; any other failure leaves it OPEN.
 */
export interface KomboSandboxPackage {
  id: string;
  type: string;
  name: string;
  description: string;
  updated_at: string;
}

export interface KomboResultPut {
  status: string;
  result_url: string;
  completed_at?: string;
  score?: number;
  max_score?: number;
  attributes?: { type: string; label: string; value: string }[];
}

export interface KomboSandboxOrder {
  id: string;
  integration_id: string;
  package_id: string;
  status: 'OPEN' | 'COMPLETED' | 'CANCELLED' | 'REJECTED';
  candidate: { email: string; remote_id: string | null; first_name: string | null; last_name: string | null };
  application: { remote_id: string | null };
  /** The result taken, and the PUTs refused because the order was no longer OPEN. */
  result: KomboResultPut | undefined;
  resultPuts: number;
  refusedPuts: number;
  created_at: string;
  /** What each delivery of its webhook was answered; the message shown to the recruiter when rejected. */
  deliveries: number[];
  rejectedMessage: string | undefined;
}

export interface KomboSandbox {
  url: string;
  apiKey: string;
  webhookSecret: string;
  packages: Map<string, KomboSandboxPackage[]>;
  orders: KomboSandboxOrder[];
  /** Every API call, as `METHOD /path` with its status: what the connector asked of Kombo. */
  calls: { route: string; status: number; integrationId: string | undefined }[];
  /** Calls outside Kombo's documented routes and parameters (this sandbox serves only those). */
  undocumented: string[];
  /** Writes in flight per integration above which Kombo answers 429 (30 by Kombo's docs). */
  concurrencyLimit: number;
  /** How long a write is in flight (so that concurrent writes overlap). */
  writeDelayMs: number;
  /**
   * Share of result PUTs taken whose answer is lost (a 502 after the write, as a proxy in between may give): the
   * partner cannot know the result was taken.
   */
  lostAnswerRate: number;
  random: () => number;
  /** Warnings answered with each result PUT to an integration (Kombo shows them in its dashboard). */
  resultWarnings: Map<string, string[]>;
  /** Where `order-received` goes (the connection's webhook URL). */
  register(webhookUrl: string): void;
  /** A recruiter orders a package for a candidate in the ATS behind `integrationId`; `deliver: false` when down. */
  placeOrder(input: {
    integrationId: string;
    packageId: string;
    email: string;
    firstName?: string | null;
    lastName?: string | null;
    deliver?: boolean;
  }): Promise<KomboSandboxOrder>;
  /**
   * Kombo's unified ATS API on the same server, key and `/v1` base (unified-control.ts): two integrations whose
   * synced data lags their ATS, `data-changed` hints, capabilities per tool, and its control.
   */
  unified: UnifiedAts;
  /** Delivers the order's webhook again (the same event), as a retrying sender does; answers the status. */
  deliver(order: KomboSandboxOrder, options?: { eventId?: string; body?: (raw: string) => string }): Promise<number>;
  close(): Promise<void>;
}

const error = (code: string, message: string) => ({
  status: 'error',
  error: { code, title: null, message, log_url: null },
});

export async function startKomboSandbox(
  port = 0,
  options: { syncLagMs?: number; seed?: number } = {},
): Promise<KomboSandbox> {
  const apiKey = `kombo-${randomBytes(12).toString('hex')}`;
  const webhookSecret = randomBytes(24).toString('base64url');
  const unified = createUnifiedAts({ ...options, defaultSecret: webhookSecret });
  const unifiedControl = unifiedControlRoutes(unified);
  let webhookUrl: string | undefined;
  const inFlight = new Map<string, number>();
  const events = new Map<string, string>();
  let nextId = 1;
  const sandbox: Omit<KomboSandbox, 'url' | 'close'> = {
    apiKey,
    webhookSecret,
    packages: new Map(),
    orders: [],
    calls: [],
    undocumented: [],
    concurrencyLimit: 30,
    writeDelayMs: 20,
    lostAnswerRate: 0,
    random: Math.random,
    resultWarnings: new Map(),
    unified,
    register: (url) => {
      webhookUrl = url;
    },
    async placeOrder(input) {
      const order: KomboSandboxOrder = {
        id: `ko${String(nextId++).padStart(6, '0')}${randomBytes(4).toString('hex')}`,
        integration_id: input.integrationId,
        package_id: input.packageId,
        status: 'OPEN',
        candidate: {
          email: input.email,
          remote_id: null,
          first_name: input.firstName ?? null,
          last_name: input.lastName ?? null,
        },
        application: { remote_id: null },
        created_at: new Date().toISOString(),
        result: undefined,
        resultPuts: 0,
        refusedPuts: 0,
        deliveries: [],
        rejectedMessage: undefined,
      };
      sandbox.orders.push(order);
      if (input.deliver !== false) await sandbox.deliver(order);
      return order;
    },
    async deliver(order, options = {}) {
      if (!webhookUrl) throw new Error('no Kombo webhook is registered');
      const eventId = options.eventId ?? events.get(order.id) ?? `evt_${randomBytes(8).toString('hex')}`;
      events.set(order.id, eventId);
      const payload = {
        id: eventId,
        type: 'assessment:order-received',
        data: {
          id: order.id,
          package_id: order.package_id,
          status: order.status,
          integration_id: order.integration_id,
          candidate: { ...order.candidate, phone: null },
          application: order.application,
          job: {
            remote_id: null,
            name: 'Backend Engineer',
            job_code: null,
            description: null,
            location: null,
            hiring_team: [],
          },
        },
      };
      const raw = JSON.stringify(payload);
      const signature = createHmac('sha256', webhookSecret).update(raw).digest('base64url');
      const sent = options.body ? options.body(raw) : raw;
      const answer = await postWebhook(webhookUrl, sent, { headers: { 'x-kombo-signature': signature } });
      const [status, body] = 'error' in answer ? [0, ''] : [answer.status, answer.text];
      order.deliveries.push(status);
      // 422 rejects the order, its message shown in the ATS; any other failure leaves it OPEN.
      if (status === 422 && order.status === 'OPEN') {
        order.status = 'REJECTED';
        try {
          order.rejectedMessage = (JSON.parse(body) as { message?: string }).message;
        } catch {
          order.rejectedMessage = undefined;
        }
      }
      return status;
    },
  };

  const integrationOf = (context: { request: { headers: Record<string, unknown> } }) => {
    const id = context.request.headers['x-integration-id'];
    return typeof id === 'string' && /^[a-z0-9_-]+:[A-Za-z0-9_.-]+$/.test(id) ? id : undefined;
  };
  /** A write: counted in flight per integration, refused past the limit. */
  const write = async (integrationId: string, response: import('node:http').ServerResponse, work: () => void) => {
    const current = inFlight.get(integrationId) ?? 0;
    if (current >= sandbox.concurrencyLimit) {
      response.setHeader('concurrency-limit', String(sandbox.concurrencyLimit));
      response.setHeader('concurrency-remaining', '0');
      return sendJson(response, 429, error('PLATFORM.CONCURRENCY_LIMIT_EXCEEDED', 'Too many concurrent actions'));
    }
    inFlight.set(integrationId, current + 1);
    try {
      await sleep(sandbox.writeDelayMs);
      work();
    } finally {
      inFlight.set(integrationId, (inFlight.get(integrationId) ?? 1) - 1);
    }
  };
  const readJson = async (
    request: import('node:http').IncomingMessage,
  ): Promise<Record<string, unknown> | undefined> => {
    try {
      const parsed = JSON.parse((await readBody(request)).toString('utf8')) as unknown;
      return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
        ? (parsed as Record<string, unknown>)
        : undefined;
    } catch {
      return undefined;
    }
  };

  const assessmentRoutes: Route[] = [
    {
      method: 'GET',
      pattern: '/v1/assessment/packages',
      handle: ({ response, request }) => {
        const integrationId = integrationOf({ request }) as string;
        sendJson(response, 200, { status: 'success', data: { packages: sandbox.packages.get(integrationId) ?? [] } });
      },
    },
    {
      method: 'PUT',
      pattern: '/v1/assessment/packages',
      handle: async ({ request, response }) => {
        const integrationId = integrationOf({ request }) as string;
        const body = await readJson(request);
        const packages = body?.packages;
        const valid =
          Array.isArray(packages) &&
          packages.every(
            (p: Record<string, unknown>) =>
              ['id', 'name', 'description'].every((field) => typeof p?.[field] === 'string') &&
              ['SKILLS_TEST', 'VIDEO_INTERVIEW', 'BEHAVIORAL', 'BACKGROUND_CHECK', 'REFERENCE_CHECK'].includes(
                p?.type as string,
              ),
          );
        if (!valid)
          return sendJson(response, 400, error('PLATFORM.INPUT_INVALID', 'packages: id, type, name, description'));
        await write(integrationId, response, () => {
          const now = new Date().toISOString();
          sandbox.packages.set(
            integrationId,
            (packages as KomboSandboxPackage[]).map((p) => ({ ...p, updated_at: now })),
          );
          sendJson(response, 200, { status: 'success', data: {}, warnings: [] });
        });
      },
    },
    {
      method: 'GET',
      pattern: '/v1/assessment/orders',
      query: ['cursor', 'page_size', 'ids', 'statuses', 'created_after'],
      handle: ({ request, response, url }) => {
        const integrationId = integrationOf({ request }) as string;
        const statuses = url.searchParams.get('statuses')?.split(',');
        const ids = url.searchParams.get('ids')?.split(',');
        const createdAfter = url.searchParams.get('created_after');
        const size = Math.min(250, Math.max(1, Number(url.searchParams.get('page_size') ?? 100) || 100));
        const start = Number(url.searchParams.get('cursor') ?? 0) || 0;
        const matching = sandbox.orders.filter(
          (o) =>
            o.integration_id === integrationId &&
            (!statuses || statuses.includes(o.status)) &&
            (!ids || ids.includes(o.id)) &&
            (!createdAfter || o.created_at >= createdAfter),
        );
        const page = matching.slice(start, start + size).map(({ integration_id: _i, result: _r, ...o }) => ({
          id: o.id,
          package_id: o.package_id,
          status: o.status,
          candidate: { ...o.candidate, phone: null },
          application: o.application,
          job: { remote_id: null, name: null, job_code: null, description: null, location: null, hiring_team: [] },
        }));
        const next = start + size < matching.length ? String(start + size) : null;
        sendJson(response, 200, { status: 'success', data: { next, results: page } });
      },
    },
    {
      method: 'PUT',
      pattern: '/v1/assessment/orders/:orderId/result',
      handle: async ({ request, response, params }) => {
        const integrationId = integrationOf({ request }) as string;
        const order = sandbox.orders.find((o) => o.id === params.orderId && o.integration_id === integrationId);
        if (!order) return sendJson(response, 404, error('PLATFORM.INPUT_INVALID', 'No such assessment order'));
        const body = await readJson(request);
        const status = body?.status;
        const problem = !['COMPLETED', 'CANCELLED', 'OPEN'].includes(status as string)
          ? 'status: required, COMPLETED, CANCELLED or OPEN'
          : typeof body?.result_url !== 'string'
            ? 'result_url: required'
            : status !== 'OPEN' &&
                (typeof body?.completed_at !== 'string' || Number.isNaN(Date.parse(body.completed_at)))
              ? 'completed_at: required (an ISO timestamp) for COMPLETED and CANCELLED'
              : ['score', 'max_score'].find((f) => body?.[f] !== undefined && typeof body[f] !== 'number');
        if (problem) return sendJson(response, 400, error('PLATFORM.INPUT_INVALID', problem));
        await write(integrationId, response, () => {
          // The status can be changed only while it is OPEN.
          if (order.status !== 'OPEN') {
            order.refusedPuts++;
            return sendJson(response, 400, error('PLATFORM.INPUT_INVALID', `The order is ${order.status}, not OPEN`));
          }
          order.status = status as KomboSandboxOrder['status'];
          order.result = body as unknown as KomboResultPut;
          order.resultPuts++;
          if (sandbox.random() < sandbox.lostAnswerRate)
            return sendJson(response, 502, error('PLATFORM.UNKNOWN_ERROR', 'Bad gateway'));
          const warnings = (sandbox.resultWarnings.get(integrationId) ?? []).map((message) => ({ message }));
          sendJson(response, 200, { status: 'success', data: {}, warnings });
        });
      },
    },
  ];

  const routes = [...assessmentRoutes, ...unified.routes];

  const control = async (
    request: import('node:http').IncomingMessage,
    response: import('node:http').ServerResponse,
  ): Promise<void> => {
    if (request.method === 'GET') return sendJson(response, 200, { orders: sandbox.orders });
    const body = await readJson(request);
    const { integration_id: integrationId, package_id: packageId, email } = body ?? {};
    if (typeof integrationId !== 'string' || typeof packageId !== 'string' || typeof email !== 'string')
      return sendJson(response, 400, { message: 'integration_id, package_id and email are required' });
    const order = await sandbox.placeOrder({ integrationId, packageId, email });
    sendJson(response, 200, order);
  };

  const running: RunningServer = await listen(async (request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    const matched = matchRoute(routes, request.method ?? 'GET', url.pathname);
    const integrationId = integrationOf({ request });
    const route = `${request.method} ${matched?.route.pattern ?? url.pathname}`;
    // Kombo's Assessment UI, for a person trying it: place an order (its webhook delivered), see every order.
    if (url.pathname === '/_sandbox/orders') return control(request, response);
    const context = { request, response, url, params: {} };
    if (url.pathname.startsWith('/_sandbox/unified/') && (await serveUnifiedControl(unifiedControl, context))) return;
    const record = () => sandbox.calls.push({ route, status: response.statusCode, integrationId });
    response.on('finish', record);
    if (request.headers.authorization !== `Bearer ${apiKey}`)
      return sendJson(response, 401, error('PLATFORM.AUTHENTICATION_INVALID', 'The API key is not valid'));
    if (!matched) {
      sandbox.undocumented.push(route);
      return sendJson(response, 404, error('PLATFORM.NOT_FOUND', `No route ${route}`));
    }
    const unknownQuery = [...url.searchParams.keys()].find((k) => !(matched.route.query ?? []).includes(k));
    if (unknownQuery) {
      sandbox.undocumented.push(`${route}?${unknownQuery}`);
      return sendJson(response, 400, error('PLATFORM.INPUT_INVALID', `unknown parameter ${unknownQuery}`));
    }
    if (!integrationId && !UNSCOPED_PATTERNS.has(matched.route.pattern))
      return sendJson(response, 404, error('PLATFORM.INTEGRATION_NOT_FOUND', 'X-Integration-Id: no such integration'));
    await matched.route.handle({ request, response, params: matched.params, url });
  }, port);
  unified.state.origin = running.url;
  const close = async () => {
    unified.close();
    await running.close();
  };
  // The same object the routes read: a test's change of the limit or the delay applies at once.
  return Object.assign(sandbox, { url: `${running.url}/v1`, close });
}
