import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { VendorProfile } from '../../../../shared/ats/profile';
import type { AtsKind } from '../../../../shared/config';
import { errorMessage } from '../../../../shared/errors';
import { readBody, seededRandom, sendJson } from '../http-kit';
import type { CallShape, Route } from '../http-kit';
import { startEdge, type EdgeSpec, type EdgeState } from './edge';
import { noFaults } from './faults';
import type { RateOptions } from './limits';
import {
  deliverSigned,
  sendChange,
  switchWebhooks,
  type DeliveryRecord,
  type SignedDelivery,
  type WebhookHub,
} from './signed-webhooks';
import type { WebhookTarget } from './signed-webhooks';

export type { SignedDelivery } from './signed-webhooks';

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

export interface AtsSandboxState extends EdgeState {
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
  /** Deletes the application's candidate with all their applications, and sends the deletion webhook if any. */
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

/** One ATS's sandbox: its profile, seed state, door, route table and webhooks; the kit does the rest. */
export interface AtsSandboxSpec extends Pick<EdgeSpec, 'unpublishedRate' | 'authenticate' | 'unauthorized'> {
  profile: VendorProfile;
  port: number;
  jobs: KitJob[];
  credentials: AtsSandbox['credentials'];
  unknownParameter: NonNullable<EdgeSpec['unknownParameter']>;
  defaultQuery?: readonly string[];
  routes(kit: KitContext): Route[];
  /** The signed webhook(s) one stage change produces (Ashby also fans out an applicationUpdate). */
  stageChange(kit: KitContext, application: KitApplication, target: WebhookTarget, from?: string): SignedDelivery[];
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
  candidateDeleted?(candidate: KitCandidate, applications: KitApplication[], target: WebhookTarget): SignedDelivery;
  /** Secrets the ATS issues when a webhook is registered (Lever's signature token per event type). */
  issueSecrets?(): Record<string, string>;
  ping?(secret: string): SignedDelivery;
}

export interface SandboxOptions extends RateOptions {
  port?: number;
  seed?: number;
}

const DEFAULT_REASONS: Record<KitExit['kind'], string> = {
  rejected: 'Not a fit',
  withdrawn: 'Withdrew',
  hired: 'Hired',
};

/** The application's place in the process after `action`: out of it with its reason, or back in it. */
export function applyLifecycle(application: KitApplication, action: LifecycleAction, reason?: string): void {
  if (!LIFECYCLE_ACTIONS.includes(action)) throw new Error(`action: one of ${LIFECYCLE_ACTIONS.join(', ')}`);
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

/** A request's JSON body, `{}` when empty; a body that is not JSON throws (answered 400). */
export async function jsonBody(request: IncomingMessage): Promise<Record<string, unknown>> {
  const text = (await readBody(request)).toString('utf8');
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

/**
 * The sandbox's own routes (`/_sandbox/<path>`), outside the vendor's API: its state, and each recruiter action as
 * a POST of its JSON input, answered with what it did (201 for a new candidate) or 404 with why it could not.
 */
export function controlRoutes(state: object, actions: Record<string, (body: Record<string, unknown>) => unknown>) {
  const posted = ([path, act]: [string, (body: Record<string, unknown>) => unknown]): Route => ({
    method: 'POST',
    pattern: `/_sandbox/${path}`,
    handle: async ({ request, response }) => {
      const body = await jsonBody(request);
      try {
        sendJson(response, path === 'candidates' ? 201 : 200, await act(body));
      } catch (error) {
        sendJson(response, 404, { error: errorMessage(error) });
      }
    },
  });
  const read: Route = {
    method: 'GET',
    pattern: '/_sandbox/state',
    handle: ({ response }) => sendJson(response, 200, state),
  };
  return [read, ...Object.entries(actions).map(posted)];
}

/** The records a sandbox starts with: its seeded jobs, nobody applied yet, no faults. */
function seededState(jobs: KitJob[]): AtsSandboxState {
  return {
    ...{ jobs: structuredClone(jobs), candidates: [], applications: [], notes: [], moves: [], links: [], tags: {} },
    ...{ deliveries: [], webhooks: [], requests: {}, calls: {}, throttled: 0, faults: noFaults() },
  };
}

/** The records as the route tables reach them; `moved`: a stage change made through the API. */
function kitContext(state: AtsSandboxState, moved: (application: KitApplication, from: string) => void): KitContext {
  const kit: KitContext = {
    state,
    application: (id) => state.applications.find((a) => a.id === id),
    candidate: (id) => state.candidates.find((c) => c.id === id),
    job: (id) => state.jobs.find((j) => j.id === id),
    stage: (jobId, stageId) => kit.job(jobId)?.stages.find((s) => s.id === stageId),
    parties: (application) => {
      const candidate = kit.candidate(application.candidateId);
      const job = kit.job(application.jobId);
      if (!candidate || !job) throw new Error(`sandbox state: application ${application.id} lost its candidate or job`);
      return { candidate, job };
    },
    moveByApi(application, toStageId) {
      const from = application.stageId;
      enterStage(state, application, toStageId);
      moved(application, from);
    },
    addNote(application, body, author) {
      const at = new Date().toISOString();
      const note = {
        id: randomUUID(),
        applicationId: application.id,
        candidateId: application.candidateId,
        body,
        author,
        at,
      };
      state.notes.push(note);
      return note;
    },
    json: jsonBody,
  };
  return kit;
}

/** The application moved into `toStageId`, the move recorded. */
function enterStage(state: AtsSandboxState, application: KitApplication, toStageId: string): void {
  const at = new Date().toISOString();
  state.moves.push({ applicationId: application.id, fromStageId: application.stageId, toStageId, at });
  application.stageId = toStageId;
  application.updatedAt = at;
}

/** A new candidate with one application, in the first stage of the job (the demo job unless said). */
function addCandidate(kit: KitContext, input: Parameters<AtsSandboxView['addCandidate']>[0]): KitApplication {
  const job = kit.job(input.jobId ?? (kit.state.jobs[0] as KitJob).id);
  if (!job) throw new Error(`jobId: no job ${input.jobId}`);
  const { firstName, lastName, email } = input;
  const candidate: KitCandidate = { id: randomUUID(), firstName, lastName, email };
  const stageId = (job.stages[0] as KitStage).id;
  const updatedAt = new Date().toISOString();
  const application: KitApplication = {
    ...{ id: randomUUID(), candidateId: candidate.id, jobId: job.id, stageId, status: 'active', updatedAt },
  };
  kit.state.candidates.push(candidate);
  kit.state.applications.push(application);
  return application;
}

/** The application, or a refusal naming it. */
function need(kit: KitContext, applicationId: string): KitApplication {
  const application = kit.application(applicationId);
  if (!application) throw new Error(`applicationId: no application ${applicationId}`);
  return application;
}

/** What a recruiter does in the ATS, and the webhooks each action sends (the sandbox's methods). */
function recruiter(spec: AtsSandboxSpec, kit: KitContext, hub: WebhookHub) {
  const { state } = kit;
  const previous = new Map<string, string>();
  const stageChange = (application: KitApplication, repeat?: number, droppable = false) =>
    sendChange(hub, {
      action: 'stage-change',
      deliveries: (target) => spec.stageChange(kit, application, target, previous.get(application.id)),
      repeat,
      droppable,
    });
  const actions = {
    moveByApi: (application: KitApplication, from: string) => {
      previous.set(application.id, from);
      void stageChange(application);
    },
    async moveCandidate(input: Parameters<AtsSandboxView['moveCandidate']>[0]) {
      const application = need(kit, input.applicationId);
      const stage = kit
        .job(application.jobId)
        ?.stages.find((s) => s.id === input.stageId || s.name === input.stageName);
      if (!stage) throw new Error(`stage: no stage ${input.stageId ?? input.stageName}`);
      previous.set(application.id, application.stageId);
      enterStage(state, application, stage.id);
      return stageChange(application, input.repeat, true);
    },
    resendStageChange: (applicationId: string) => stageChange(need(kit, applicationId)),
    async deleteCandidate(applicationId: string) {
      const { candidate } = kit.parties(need(kit, applicationId));
      const removed = state.applications.filter((a) => a.candidateId === candidate.id);
      state.candidates = state.candidates.filter((c) => c.id !== candidate.id);
      state.applications = state.applications.filter((a) => a.candidateId !== candidate.id);
      const deleted = (target: WebhookTarget) => spec.candidateDeleted?.(candidate, removed, target);
      await sendChange(hub, { action: 'deleted', deliveries: (target) => [deleted(target) ?? []].flat() });
    },
    async changeLifecycle(input: Parameters<AtsSandboxView['changeLifecycle']>[0]) {
      const application = need(kit, input.applicationId);
      applyLifecycle(application, input.action, input.reason);
      if (input.deliver === false) return [];
      const deliveries = (target: WebhookTarget) => spec.lifecycleChange(kit, application, target, input.action);
      return sendChange(hub, { action: input.action, deliveries, repeat: input.repeat });
    },
  };
  return actions;
}

/** The sandbox's own routes: the recruiter's actions, webhooks switched on and off, faults. */
function kitControls(sandbox: AtsSandbox): Route[] {
  return controlRoutes(sandbox.state, {
    candidates: (body) => sandbox.addCandidate(body as never),
    move: async (body) => ({ deliveries: await sandbox.moveCandidate(body as never) }),
    'delete-candidate': (body) => sandbox.deleteCandidate(String(body.applicationId)),
    lifecycle: async (body) => ({
      deliveries: await sandbox.changeLifecycle({
        applicationId: String(body.applicationId ?? body.application_id),
        action: body.action as LifecycleAction,
        reason: typeof body.reason === 'string' ? body.reason : undefined,
        deliver: body.deliver !== false,
      }),
    }),
    'webhooks/enabled': (body) => {
      sandbox.setWebhooksEnabled(body.enabled !== false);
      return { webhooks: sandbox.state.webhooks.length };
    },
    faults: (body) => Object.assign(sandbox.state.faults, body),
  });
}

/** What the records answer about an application, for the tests and the demo. */
function readings(kit: KitContext): Pick<AtsSandboxView, 'notesOf' | 'tagsOf' | 'stageNameOf' | 'movesOf'> {
  const { state } = kit;
  const stageName = (application: KitApplication | undefined, stageId: string) =>
    (application && kit.stage(application.jobId, stageId)?.name) ?? stageId;
  return {
    notesOf: (applicationId) => state.notes.filter((n) => n.applicationId === applicationId).map((n) => n.body),
    tagsOf: (applicationId) =>
      state.tags[applicationId] ?? state.tags[kit.application(applicationId)?.candidateId ?? ''] ?? [],
    stageNameOf: (applicationId) => {
      const application = need(kit, applicationId);
      return stageName(application, application.stageId);
    },
    movesOf: (applicationId) =>
      state.moves
        .filter((m) => m.applicationId === applicationId)
        .map((m) => stageName(kit.application(applicationId), m.toStageId)),
  };
}

/** A sandbox of one ATS: the spec gives its API and webhooks; the kit keeps state, limits, faults and control. */
export async function startAtsSandbox(spec: AtsSandboxSpec, options: SandboxOptions = {}): Promise<AtsSandbox> {
  const state = seededState(spec.jobs);
  const hub: WebhookHub = { state, random: seededRandom(options.seed ?? 11) };
  const hooks: { moved?: (application: KitApplication, from: string) => void } = {};
  const kit = kitContext(state, (application, from) => hooks.moved?.(application, from));
  const { moveByApi, ...actions } = recruiter(spec, kit, hub);
  hooks.moved = moveByApi;
  const sandbox: AtsSandbox = {
    ...{
      kind: spec.profile.kind,
      url: '',
      state,
      credentials: spec.credentials,
      demoJobId: (spec.jobs[0] as KitJob).id,
    },
    ...actions,
    ...readings(kit),
    async registerWebhook(input) {
      const target: WebhookTarget = { ...input, issued: spec.issueSecrets?.() };
      state.webhooks.push(target);
      const ping = spec.ping?.(target.secret);
      if (ping) await deliverSigned(target, ping, state.deliveries, 'ping');
      return { issued: target.issued };
    },
    addCandidate: (input) => addCandidate(kit, input),
    setWebhooksEnabled: (enabled) => switchWebhooks(state.webhooks, enabled),
    setFaults: (faults) => void Object.assign(state.faults, faults),
    requests: () => state.requests,
    calls: () => Object.values(state.calls),
    throttled: () => state.throttled,
    close: async () => undefined,
  };
  const edge = await startEdge(
    {
      ...spec,
      seed: options.seed ?? 11,
      port: options.port ?? spec.port,
      rate: options,
      api: spec.routes(kit),
      open: kitControls(sandbox),
    },
    state,
  );
  return Object.assign(sandbox, { url: edge.url, close: edge.close });
}
