import {
  receiveWholeBody,
  seededRandom,
  sendJson,
  serveRoutes,
  sleep,
  type Route,
  type RouteContext,
} from '../http-kit';
import { DEFAULT_PAGE_SIZE, envelope, NO_FAULTS, requestAccount } from './control';
import { reportFileRoutes } from './files';
import { ServiceRecords } from './records';
import { serviceApiRoutes, serviceControlRoutes } from './routes';
import { seedApplicants } from './seed';
import type { CompletionRequest, ReportFile, SandboxFaults, SandboxWebhook } from './types';
import { ReportDeliveries } from './webhooks';
export type { SandboxState } from './types';
import type { SandboxState } from './types';
import { errorMessage } from '../../../../shared/errors';

export const SANDBOX_DEFAULTS = {
  port: 4010,
  apiKey: 'sandbox-key',
  limitedApiKey: 'sandbox-limited-key',
  /** The live service takes 2 to 5 minutes; locally a second keeps demos short. */
  reportDelayMs: 1000,
  /** The service waits 30 s for a webhook answer (facts "Webhook deliveries"). */
  webhookTimeoutMs: 30_000,
  defaultPageSize: DEFAULT_PAGE_SIZE,
  seed: 42,
} as const;

export interface InterviewServiceSandboxOptions {
  port?: number;
  apiKey?: string;
  limitedApiKey?: string;
  reportDelayMs?: number;
  webhookTimeoutMs?: number;
  faults?: Partial<SandboxFaults>;
  seed?: number;
  /** Completed reports present at start, so `GET /interview/reports` shows data at once. */
  seededReports?: number;
}

export interface InterviewServiceSandbox {
  url: string;
  port: number;
  apiKey: string;
  limitedApiKey: string;
  state: SandboxState;
  setFaults(faults: Partial<SandboxFaults>): SandboxFaults;
  /** Another customer account: its key sees only its own interviews, reports and webhooks. */
  addAccount(apiKey: string): void;
  /** Registers a webhook for the account of `apiKey` (default: the sandbox's main key). */
  registerWebhook(url: string, event?: string, apiKey?: string): SandboxWebhook;
  /** `notify: false`: the report is made and its webhook never sent (a delivery lost for good). */
  completeInterview(request: CompletionRequest, notify?: boolean): { candidate_id: string; report_id: string };
  /** How the file host serves a report's PDF (made or still to come): its `report_url` now; throws for no report. */
  setReportFile(reportId: string, file: ReportFile): { report_url: string | null };
  /** Resolves once every scheduled report is created and every delivery answered, or rejects after `timeoutMs`. */
  whenIdle(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * A faithful stand-in of the interview service on 127.0.0.1 (interview-service-api.md), with control endpoints: its
 * records per account (records.ts), its API and control routes as tables (routes.ts), its report webhooks
 * (webhooks.ts), and here what every API call passes first: the API key, injected faults, the limited key's refusal.
 */
export async function startInterviewServiceSandbox(
  options: InterviewServiceSandboxOptions = {},
): Promise<InterviewServiceSandbox> {
  const apiKey = options.apiKey ?? SANDBOX_DEFAULTS.apiKey;
  const limitedApiKey = options.limitedApiKey ?? SANDBOX_DEFAULTS.limitedApiKey;
  const random = seededRandom(options.seed ?? SANDBOX_DEFAULTS.seed);
  const state: SandboxState = {
    emailsSent: [],
    refusals: [],
    interviews: [],
    invites: [],
    reports: [],
    webhooks: [],
    deliveries: [],
    applicants: seedApplicants(),
    reportFiles: {},
    requests: {},
    faults: { ...NO_FAULTS, ...options.faults },
  };
  const deliveries = new ReportDeliveries(state, random, options.webhookTimeoutMs ?? SANDBOX_DEFAULTS.webhookTimeoutMs);
  const reportDelayMs = options.reportDelayMs ?? SANDBOX_DEFAULTS.reportDelayMs;
  const records = new ServiceRecords(state, { apiKey, limitedApiKey, reportDelayMs }, random, deliveries);
  const apiRoutes: Route[] = serviceApiRoutes(records);
  // The file host's links need no key either: they are matched before the API's door.
  const controlRoutes: Route[] = [...serviceControlRoutes(records), ...reportFileRoutes(records)];
  async function handleApi(context: RouteContext, route: Route): Promise<void> {
    const { request, response } = context;
    state.requests[`${request.method} ${route.pattern}`] =
      (state.requests[`${request.method} ${route.pattern}`] ?? 0) + 1;
    if (state.faults.latencyMs > 0) await sleep(state.faults.latencyMs);
    const key = request.headers['x-api-key'];
    if (typeof key !== 'string' || key === '')
      return envelope(response, 401, { status: false, message: 'API key is missing' });
    const account = records.accountOfKey(key);
    if (!account) return envelope(response, 401, { status: false, message: 'Invalid or expired API key' });
    requestAccount.set(request, account);
    const roll = random();
    if (roll < state.faults.rate429) {
      // The gateway's throttling answer: a bare message, no envelope.
      return sendJson(
        response,
        429,
        { message: 'Too Many Requests' },
        { 'retry-after': String(state.faults.retryAfterSeconds) },
      );
    }
    // The documented 500 is `{status: false}` with no message.
    if (roll < state.faults.rate429 + state.faults.rate500) return envelope(response, 500, { status: false });
    // A slow answer: the work is done, the answer comes after the client stopped waiting.
    if (random() < state.faults.slowRate) {
      await receiveWholeBody(request);
      await sleep(state.faults.slowMs);
    }
    if (key === limitedApiKey && route.pattern === '/interview/reports') {
      return envelope(response, 403, { status: false, message: 'This API key has no permission for reports' });
    }
    await route.handle(context);
  }

  const running = await serveRoutes(
    {
      ...{
        open: controlRoutes,
        api: apiRoutes,
        gate: handleApi,
        path: (url) => url.pathname.replace(/\/+$/, '') || '/',
      },
      // The service's API Gateway answers a route it does not have with 403 and a bare message.
      unrouted: ({ response }) => sendJson(response, 403, { message: 'Missing Authentication Token' }),
      failed: ({ response }, error) => {
        if (!response.headersSent) envelope(response, 500, { status: false, message: errorMessage(error) });
      },
    },
    options.port ?? SANDBOX_DEFAULTS.port,
  );
  records.baseUrl = running.url;
  if (options.seededReports ?? 3) records.seedReports(options.seededReports ?? 3);

  return {
    url: running.url,
    port: running.port,
    apiKey,
    limitedApiKey,
    state,
    setFaults: (faults) => records.setFaults(faults),
    addAccount: (key) => records.addAccount(key),
    registerWebhook: (url, event, key) => records.registerWebhook(url, event, '', key),
    completeInterview: (request, notify) => records.completeInterview(request, notify),
    setReportFile: (reportId, file) => {
      const served = records.setReportFile(reportId, file);
      if (!served) throw new Error(`report_id: no report ${reportId}`);
      return served;
    },
    whenIdle: (timeoutMs) => deliveries.whenIdle(timeoutMs),
    async close() {
      records.stop();
      await running.close();
    },
  };
}
