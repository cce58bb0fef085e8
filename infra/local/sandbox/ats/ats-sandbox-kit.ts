import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AtsKind } from '../../../../shared/config';
import { answerFailure, callShape, listen, matchRoute, readBody, seededRandom, sendJson } from '../http-kit';
import type { CallShape, Route, RouteContext } from '../http-kit';
import { addLatency, answeredByFault, noFaults, type AtsFaults } from './faults';
import {
  deliverSigned,
  FixedWindowLimiter,
  TokenBucketLimiter,
  receives,
  type DeliveryRecord,
  type WebhookTarget,
} from './signed-webhooks';

export interface KitStage {
  id: string;
  name: string;
}
export interface KitJob {
  id: string;
  name: string;
  stages: KitStage[];
  /** Where the ATS has job states (Workable: draft, published, closed, archived); published unless said. */
  state?: string;
}
export interface KitCandidate {
  id: string;
  firstName: string;
  lastName: string;
  email: string;
}
export interface KitApplication {
  id: string;
  candidateId: string;
  jobId: string;
  stageId: string;
  status: 'active' | 'archived';
  /** Why it left the process, while it is out (`status: 'archived'`): set and cleared by `changeLifecycle`. */
  exit?: KitExit | undefined;
  updatedAt: string;
}

/** A recruiter's action on an application's place in the process, as a sandbox control (`/_sandbox/lifecycle`). */
export const LIFECYCLE_ACTIONS = ['reject', 'withdraw', 'hire', 'unreject'] as const;
export type LifecycleAction = (typeof LIFECYCLE_ACTIONS)[number];

/** An application out of the process: rejected by the company, withdrawn by the candidate, or hired. */
export interface KitExit {
  kind: 'rejected' | 'withdrawn' | 'hired';
  /** The ATS's reason text (a rejection reason, an archive reason). */
  reason: string;
  at: string;
}
export interface KitNote {
  id: string;
  applicationId: string;
  candidateId: string;
  body: string;
  author?: string | undefined;
  at: string;
}

export interface AtsSandboxState {
  jobs: KitJob[];
  candidates: KitCandidate[];
  applications: KitApplication[];
  notes: KitNote[];
  moves: { applicationId: string; fromStageId: string; toStageId: string; at: string }[];
  links: { applicationId: string; url: string }[];
  /** Tags by the id the ATS keys them on (Lever's opportunity, Workable's and Ashby's candidate). */
  tags: Record<string, string[]>;
  deliveries: DeliveryRecord[];
  webhooks: WebhookTarget[];
  requests: Record<string, number>;
  /** The distinct shapes of the API requests served (infra/local/sandbox/http-kit.ts, `callShape`), by key. */
  calls: Record<string, CallShape>;
  /** 429s answered because the caller's window was spent (injected 429s are not counted). */
  throttled: number;
  faults: AtsFaults;
}

/** What the local stack, the demo and the tests need of any ATS sandbox. */
export interface AtsSandboxView {
  kind: AtsKind;
  url: string;
  /** Secrets a connection to this sandbox uses (API key, OAuth client). */
  credentials: { atsApiKey?: string; atsClientId?: string; atsClientSecret?: string };
  demoJobId: string;
  /** Registers the connector's webhook; answers the secrets the ATS issued for it, per event type, if any. */
  registerWebhook(target: WebhookTarget): Promise<{ issued?: Record<string, string> | undefined }>;
  /** Switches every webhook on or off, as an admin (or the ATS after failed deliveries) would. */
  setWebhooksEnabled(enabled: boolean): void;
  addCandidate(input: { firstName: string; lastName: string; email: string; jobId?: string }): KitApplication;
  /** Moves the application and sends the signed stage-change webhook `repeat` times (one delivery, resent). */
  moveCandidate(input: {
    applicationId: string;
    stageName?: string;
    stageId?: string;
    repeat?: number;
  }): Promise<DeliveryRecord[]>;
  /**
   * Deletes the candidate of the application and all their applications, as a recruiter would in the ATS, and
   * sends the deletion webhook where the ATS has one.
   */
  deleteCandidate(applicationId: string): Promise<void>;
  /**
   * Rejects (archives, disqualifies), withdraws, hires or unrejects the application as a recruiter would, and sends
   * the webhook(s) the ATS documents for it (`deliver: false`: the webhook is lost, as one never delivered).
   */
  changeLifecycle(input: {
    applicationId: string;
    action: LifecycleAction;
    reason?: string | undefined;
    deliver?: boolean | undefined;
    repeat?: number | undefined;
  }): Promise<DeliveryRecord[]>;
  /** The application's current stage sent again as a new delivery. */
  resendStageChange(applicationId: string): Promise<DeliveryRecord[]>;
  notesOf(applicationId: string): string[];
  /** The tags the application (or its candidate, where the ATS tags candidates) carries. */
  tagsOf(applicationId: string): string[];
  stageNameOf(applicationId: string): string;
  /** Names of the stages the application was moved into, in order (by the API or the control endpoint). */
  movesOf(applicationId: string): string[];
  setFaults(faults: Partial<AtsSandboxState['faults']>): void;
  /** API requests per route, faults included. */
  requests(): Record<string, number>;
  /** The distinct shapes of the API requests served: method, route, query parameters and body fields. */
  calls(): CallShape[];
  /** 429s answered because the caller's rate-limit window was spent. */
  throttled(): number;
  close(): Promise<void>;
}

export interface AtsSandbox extends AtsSandboxView {
  state: AtsSandboxState;
}

export interface KitContext {
  state: AtsSandboxState;
  application(id: string): KitApplication | undefined;
  candidate(id: string): KitCandidate | undefined;
  job(id: string): KitJob | undefined;
  stage(jobId: string, stageId: string): KitStage | undefined;
  /** The application's candidate and job, which the sandbox always creates with it. */
  parties(application: KitApplication): { candidate: KitCandidate; job: KitJob };
  /** Records a move made through the API, and fires the stage-change webhook as the real ATS would. */
  moveByApi(application: KitApplication, toStageId: string): void;
  addNote(application: KitApplication, body: string, author?: string): KitNote;
  json(request: IncomingMessage): Promise<Record<string, unknown>>;
}

export interface SignedDelivery {
  body: Buffer;
  headers: Record<string, string>;
  eventId: string;
  /** The ATS's event type, which decides the webhooks it goes to. */
  event?: string;
}

export interface AtsSandboxSpec {
  kind: AtsKind;
  port: number;
  jobs: KitJob[];
  /**
   * Requests per window, counted per principal (`authenticate`), each window from its first request; with `burst`, a
   * token bucket instead: `limit` per `windowMs` sustained, `burst` at most at once.
   */
  rateLimit: { limit: number; windowMs: number; burst?: number };
  /** Answers 429: each ATS announces the wait its own way. */
  rateLimited(response: ServerResponse, resetMs: number): void;
  /** Headers every answer carries about the caller's window (its profile's rate headers), if the ATS sends any. */
  rateHeaders?(window: { remaining: number; resetMs: number }): Record<string, string>;
  credentials: AtsSandbox['credentials'];
  /** The principal the rate limit counts against, or undefined for 401. */
  authenticate(request: IncomingMessage): string | undefined;
  unauthorized(response: ServerResponse): void;
  /** Answers a query parameter the route does not document, as the ATS refuses one. */
  unknownParameter(response: ServerResponse, name: string): void;
  /** The query parameters of a route that lists none (Ashby's RPC routes take theirs in the body: none). */
  defaultQuery?: readonly string[];
  routes(kit: KitContext): Route[];
  /** The signed webhook(s) one stage change produces (Ashby also fans out an applicationUpdate). */
  stageChange(
    kit: KitContext,
    application: KitApplication,
    target: WebhookTarget,
    previousStageId: string | undefined,
  ): SignedDelivery[];
  /**
   * The signed webhook(s) the ATS sends when an application leaves the process or comes back (`application.exit` is
   * already set or cleared), as the vendor documents them; empty where it documents none for that action.
   */
  lifecycleChange(
    kit: KitContext,
    application: KitApplication,
    target: WebhookTarget,
    action: LifecycleAction,
  ): SignedDelivery[];
  /** The signed webhook a deleted candidate produces, where the ATS has one. */
  candidateDeleted?(
    candidate: KitCandidate,
    applications: KitApplication[],
    target: WebhookTarget,
  ): SignedDelivery | undefined;
  /** Secrets the ATS issues when a webhook is registered (Lever's signature token per event type). */
  issueSecrets?(): Record<string, string>;
  ping?(secret: string): SignedDelivery | undefined;
}

const DEFAULT_REASONS: Record<KitExit['kind'], string> = {
  rejected: 'Not a fit',
  withdrawn: 'Withdrew',
  hired: 'Hired',
};

/** The application's place in the process after `action`: out of it with its reason, or back in it. */
export function applyLifecycle(application: KitApplication, action: LifecycleAction, reason?: string): void {
  application.updatedAt = new Date().toISOString();
  if (action === 'unreject') {
    application.exit = undefined;
    application.status = 'active';
    return;
  }
  const kind = action === 'reject' ? 'rejected' : action === 'withdraw' ? 'withdrawn' : 'hired';
  application.exit = { kind, reason: reason ?? DEFAULT_REASONS[kind], at: application.updatedAt };
  application.status = 'archived';
}

/** A sandbox of one ATS: the spec gives its API and webhooks; the kit keeps state, limits, faults and control. */
export async function startAtsSandbox(spec: AtsSandboxSpec, options: { seed?: number } = {}): Promise<AtsSandbox> {
  const state: AtsSandboxState = {
    jobs: structuredClone(spec.jobs),
    candidates: [],
    applications: [],
    notes: [],
    moves: [],
    links: [],
    tags: {},
    deliveries: [],
    webhooks: [],
    requests: {},
    calls: {},
    throttled: 0,
    faults: noFaults(),
  };
  const { limit, windowMs, burst } = spec.rateLimit;
  const limiter =
    burst === undefined ? new FixedWindowLimiter(limit, windowMs) : new TokenBucketLimiter(limit, windowMs, burst);
  const random = seededRandom(options.seed ?? 11);
  const previous = new Map<string, string>();

  async function send(application: KitApplication, fromStageId: string | undefined): Promise<DeliveryRecord[]> {
    const records: DeliveryRecord[] = [];
    for (const target of state.webhooks) {
      for (const delivery of spec.stageChange(kit, application, target, fromStageId)) {
        if (!receives(target, delivery.event)) continue;
        records.push(
          await deliverSigned(
            target,
            delivery.body,
            delivery.headers,
            state.deliveries,
            'stage-change',
            delivery.eventId,
          ),
        );
      }
    }
    return records;
  }

  const kit: KitContext = {
    state,
    application: (id) => state.applications.find((a) => a.id === id),
    candidate: (id) => state.candidates.find((c) => c.id === id),
    job: (id) => state.jobs.find((j) => j.id === id),
    stage: (jobId, stageId) => state.jobs.find((j) => j.id === jobId)?.stages.find((s) => s.id === stageId),
    parties: (application) => {
      const candidate = state.candidates.find((c) => c.id === application.candidateId);
      const job = state.jobs.find((j) => j.id === application.jobId);
      if (!candidate || !job) throw new Error(`sandbox state: application ${application.id} lost its candidate or job`);
      return { candidate, job };
    },
    moveByApi(application, toStageId) {
      state.moves.push({
        applicationId: application.id,
        fromStageId: application.stageId,
        toStageId,
        at: new Date().toISOString(),
      });
      const from = application.stageId;
      application.stageId = toStageId;
      application.updatedAt = new Date().toISOString();
      void send(application, from);
    },
    addNote(application, body, author) {
      const note: KitNote = {
        id: randomUUID(),
        applicationId: application.id,
        candidateId: application.candidateId,
        body,
        author,
        at: new Date().toISOString(),
      };
      state.notes.push(note);
      return note;
    },
    async json(request) {
      const text = (await readBody(request)).toString('utf8');
      return text ? (JSON.parse(text) as Record<string, unknown>) : {};
    },
  };

  const api = spec.routes(kit);
  const control: Route[] = [
    { method: 'GET', pattern: '/_sandbox/state', handle: ({ response }) => sendJson(response, 200, state) },
    {
      method: 'POST',
      pattern: '/_sandbox/candidates',
      handle: async ({ request, response }) =>
        sendJson(response, 201, sandbox.addCandidate((await kit.json(request)) as never)),
    },
    {
      method: 'POST',
      pattern: '/_sandbox/move',
      handle: async ({ request, response }) =>
        sendJson(response, 200, { deliveries: await sandbox.moveCandidate((await kit.json(request)) as never) }),
    },
    {
      method: 'POST',
      pattern: '/_sandbox/delete-candidate',
      handle: async ({ request, response }) =>
        sendJson(response, 200, await sandbox.deleteCandidate(String((await kit.json(request)).applicationId))),
    },
    {
      method: 'POST',
      pattern: '/_sandbox/lifecycle',
      handle: async ({ request, response }) => {
        const body = await kit.json(request);
        const deliveries = await sandbox.changeLifecycle({
          applicationId: String(body.applicationId ?? body.application_id),
          action: body.action as LifecycleAction,
          reason: typeof body.reason === 'string' ? body.reason : undefined,
          deliver: body.deliver !== false,
        });
        sendJson(response, 200, { deliveries });
      },
    },
    {
      method: 'POST',
      pattern: '/_sandbox/webhooks/enabled',
      handle: async ({ request, response }) => {
        sandbox.setWebhooksEnabled((await kit.json(request)).enabled !== false);
        sendJson(response, 200, { webhooks: state.webhooks.length });
      },
    },
    {
      method: 'POST',
      pattern: '/_sandbox/faults',
      handle: async ({ request, response }) =>
        sendJson(response, 200, Object.assign(state.faults, await kit.json(request))),
    },
  ];

  async function handleApi(context: RouteContext, route: Route): Promise<void> {
    const name = `${context.request.method} ${route.pattern}`;
    state.requests[name] = (state.requests[name] ?? 0) + 1;
    await addLatency(state.faults);
    const principal = spec.authenticate(context.request);
    if (!principal) return spec.unauthorized(context.response);
    const limit = limiter.take(principal);
    for (const [name, value] of Object.entries(spec.rateHeaders?.(limit) ?? {}))
      context.response.setHeader(name, value);
    const roll = random();
    if (!limit.allowed) {
      state.throttled++;
      return spec.rateLimited(context.response, Math.max(1000, limit.resetMs));
    }
    // An injected 429 asks for a one-second wait; only a spent window announces its whole reset.
    if (roll < state.faults.rate429) return spec.rateLimited(context.response, 1000);
    if (await answeredByFault(context.response, state.faults, roll, random, name)) return;
    try {
      const documented = route.query ?? spec.defaultQuery;
      const unknown = documented && [...context.url.searchParams.keys()].find((key) => !documented.includes(key));
      if (unknown) return spec.unknownParameter(context.response, unknown);
      await route.handle(context);
    } finally {
      const shape = callShape(context.request, route.pattern, context.url);
      state.calls[JSON.stringify(shape)] = shape;
    }
  }

  let baseUrl = '';
  const running = await listen((request, response) => {
    const url = new URL(request.url ?? '/', baseUrl);
    const method = request.method ?? 'GET';
    const controlMatch = matchRoute(control, method, url.pathname);
    const apiMatch = controlMatch ? undefined : matchRoute(api, method, url.pathname);
    const work = controlMatch
      ? controlMatch.route.handle({ request, response, url, params: controlMatch.params })
      : apiMatch
        ? handleApi({ request, response, url, params: apiMatch.params }, apiMatch.route)
        : sendJson(response, 404, { message: `No route ${method} ${url.pathname}` });
    Promise.resolve(work).catch((error: unknown) => {
      // A body that is not JSON is the client's mistake, as a real API would say.
      if (error instanceof SyntaxError && !response.headersSent) sendJson(response, 400, { message: error.message });
      else answerFailure(request, response, error);
    });
  }, spec.port);
  baseUrl = running.url;

  const sandbox: AtsSandbox = {
    kind: spec.kind,
    url: running.url,
    state,
    credentials: spec.credentials,
    demoJobId: (state.jobs[0] as KitJob).id,
    async registerWebhook(input) {
      const target: WebhookTarget = { ...input, issued: spec.issueSecrets?.() };
      state.webhooks.push(target);
      const ping = spec.ping?.(target.secret);
      if (ping) await deliverSigned(target, ping.body, ping.headers, state.deliveries, 'ping', ping.eventId);
      return { issued: target.issued };
    },
    addCandidate(input) {
      const job = kit.job(input.jobId ?? sandbox.demoJobId);
      if (!job) throw new Error(`jobId: no job ${input.jobId}`);
      const candidate: KitCandidate = {
        id: randomUUID(),
        firstName: input.firstName,
        lastName: input.lastName,
        email: input.email,
      };
      const application: KitApplication = {
        id: randomUUID(),
        candidateId: candidate.id,
        jobId: job.id,
        stageId: (job.stages[0] as KitStage).id,
        status: 'active',
        updatedAt: new Date().toISOString(),
      };
      state.candidates.push(candidate);
      state.applications.push(application);
      return application;
    },
    async deleteCandidate(applicationId) {
      const application = kit.application(applicationId);
      if (!application) throw new Error(`applicationId: no application ${applicationId}`);
      const { candidate } = kit.parties(application);
      const removed = state.applications.filter((a) => a.candidateId === candidate.id);
      state.candidates = state.candidates.filter((c) => c.id !== candidate.id);
      state.applications = state.applications.filter((a) => a.candidateId !== candidate.id);
      for (const target of state.webhooks) {
        const delivery = spec.candidateDeleted?.(candidate, removed, target);
        if (delivery && receives(target, delivery.event))
          await deliverSigned(target, delivery.body, delivery.headers, state.deliveries, 'deleted', delivery.eventId);
      }
    },
    async changeLifecycle(input) {
      const application = kit.application(input.applicationId);
      if (!application) throw new Error(`applicationId: no application ${input.applicationId}`);
      if (!LIFECYCLE_ACTIONS.includes(input.action)) throw new Error(`action: one of ${LIFECYCLE_ACTIONS.join(', ')}`);
      applyLifecycle(application, input.action, input.reason);
      if (input.deliver === false) return [];
      const records: DeliveryRecord[] = [];
      for (let i = 0; i < Math.max(1, input.repeat ?? 1); i++)
        for (const target of state.webhooks)
          for (const d of spec.lifecycleChange(kit, application, target, input.action))
            if (receives(target, d.event))
              records.push(await deliverSigned(target, d.body, d.headers, state.deliveries, input.action, d.eventId));
      return records;
    },
    async moveCandidate(input) {
      const application = kit.application(input.applicationId);
      if (!application) throw new Error(`applicationId: no application ${input.applicationId}`);
      const stage = kit
        .job(application.jobId)
        ?.stages.find((s) => s.id === input.stageId || s.name === input.stageName);
      if (!stage) throw new Error(`stage: no stage ${input.stageId ?? input.stageName}`);
      state.moves.push({
        applicationId: application.id,
        fromStageId: application.stageId,
        toStageId: stage.id,
        at: new Date().toISOString(),
      });
      previous.set(application.id, application.stageId);
      application.stageId = stage.id;
      application.updatedAt = new Date().toISOString();
      const records: DeliveryRecord[] = [];
      if (state.faults.dropStageChangeRate > 0 && random() < state.faults.dropStageChangeRate) {
        const dropped = { eventId: randomUUID(), url: '', action: 'stage-change', at: Date.now(), dropped: true };
        state.deliveries.push(dropped);
        return [dropped];
      }
      const deliveries = state.webhooks.flatMap((target) =>
        spec
          .stageChange(kit, application, target, previous.get(application.id))
          .filter((d) => receives(target, d.event))
          .map((d) => ({ target, d })),
      );
      for (let i = 0; i < Math.max(1, input.repeat ?? 1); i++) {
        for (const { target, d } of deliveries)
          records.push(await deliverSigned(target, d.body, d.headers, state.deliveries, 'stage-change', d.eventId));
      }
      return records;
    },
    resendStageChange: (applicationId) =>
      send(kit.application(applicationId) as KitApplication, previous.get(applicationId)),
    notesOf: (applicationId) => state.notes.filter((n) => n.applicationId === applicationId).map((n) => n.body),
    tagsOf: (applicationId) =>
      state.tags[applicationId] ?? state.tags[kit.application(applicationId)?.candidateId ?? ''] ?? [],
    stageNameOf(applicationId) {
      const application = kit.application(applicationId) as KitApplication;
      return kit.stage(application.jobId, application.stageId)?.name ?? application.stageId;
    },
    movesOf: (applicationId) => {
      const application = kit.application(applicationId);
      return state.moves
        .filter((m) => m.applicationId === applicationId)
        .map((m) => (application && kit.stage(application.jobId, m.toStageId)?.name) ?? m.toStageId);
    },
    setWebhooksEnabled: (enabled) => {
      for (const target of state.webhooks) target.enabled = enabled;
    },
    setFaults: (faults) => void Object.assign(state.faults, faults),
    requests: () => state.requests,
    calls: () => Object.values(state.calls),
    throttled: () => state.throttled,
    close: running.close,
  };
  return sandbox;
}
