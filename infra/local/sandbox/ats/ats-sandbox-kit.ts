import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { VendorProfile } from '../../../../shared/ats/profile';
import type { DirectAtsKind } from '../../../../shared/config';
import { errorMessage } from '../../../../shared/errors';
import { FileStore, fileRoutes } from '../file-store';
import { basicAuth } from '../../../../shared/ats/ats-http';
import { callAsAts, readJson, route, seededRandom, sendJson, type Route, UPLOAD_BODY_BYTES } from '../http-kit';
import { edgeReadings, edgeState, startEdge, type EdgeSpec, type Refusal } from './edge';
import type { RateOptions } from './limits';
import { deliverSigned, sendChange, type DeliveryRecord, type SignedDelivery } from './signed-webhooks';
import type { WebhookHub, WebhookTarget } from './signed-webhooks';

export type KitStage = { id: string; name: string };
/** `state`: where the ATS has job states (Workable: draft, published, closed, archived); published unless said. */
export type KitJob = { id: string; name: string; stages: KitStage[]; state?: string };
export type KitCandidate = { id: string; firstName: string; lastName: string; email: string };
/** `exit` says why it left the process, while it is out (`archived`). */
export type KitApplication = { id: string; candidateId: string; jobId: string; stageId: string } & {
  status: 'active' | 'archived';
  exit?: KitExit | undefined;
  createdAt: string;
  updatedAt: string;
};
const LIFECYCLE_ACTIONS = ['reject', 'withdraw', 'hire', 'unreject'] as const;
export type LifecycleAction = (typeof LIFECYCLE_ACTIONS)[number];
/** Rejected by the company, withdrawn by the candidate, or hired; `reason` the ATS's text. */
export type KitExit = { kind: 'rejected' | 'withdrawn' | 'hired'; reason: string; at: string };
/** `fields`: the ATS's own fields of the note (Greenhouse's type and visibility). */
export type KitNote = { id: string; applicationId: string; candidateId: string; body: string; at: string } & {
  author?: string | undefined;
  fields?: Record<string, unknown>;
};
export type Body = Record<string, unknown>;
type Move = { applicationId: string; fromStageId: string; toStageId: string; at: string };

/** The records a sandbox starts with: its seeded jobs, nobody applied yet, no faults. */
const seededState = (jobs: KitJob[]) => ({
  ...{ jobs: structuredClone(jobs), candidates: [] as KitCandidate[], applications: [] as KitApplication[] },
  ...{ notes: [] as KitNote[], moves: [] as Move[], links: [] as { applicationId: string; url: string }[] },
  /** Tags by the id the ATS keys them on (Lever's opportunity, Workable's and Ashby's candidate). */
  tags: {} as Record<string, string[]>,
  /** Each key's tags after each write, with its time: the order writes landed in, for a check that finds one wrong. */
  tagHistory: {} as Record<string, string[]>,
  ...{ deliveries: [] as DeliveryRecord[], webhooks: [] as WebhookTarget[], ...edgeState() },
});
export type AtsSandboxState = ReturnType<typeof seededState>;
/**
 * What changed for the webhooks: a stage entered (`from` the stage left, if known) or a lifecycle `action` (`was`: the
 * exit before it).
 */
export type KitChange = { from?: string | undefined; action?: LifecycleAction; was?: KitExit | undefined };

/** One ATS's sandbox: its profile, seed state, door, route table and webhooks; the kit does the rest. */
export interface AtsSandboxSpec extends Pick<EdgeSpec, 'unauthorized' | 'unknownParameter' | 'unrouted'> {
  profile: VendorProfile;
  jobs: KitJob[];
  /** The key the API takes, as Basic auth's username or as a bearer token. */
  apiKey?: string;
  bearer?: boolean;
  /** Where the API takes other credentials (Greenhouse's OAuth tokens, not a key): the principal a request acts for. */
  authenticate?(request: IncomingMessage): string | undefined;
  credentials?: Credentials;
  /** The ids the ATS issues (Greenhouse: one sequence of numbers); UUIDs unless said. */
  newId?(): string;
  seed?: number;
  /** Routes outside the API's gate (an OAuth token, a partner's callback) and further recruiter actions. */
  open?(kit: KitContext): Route[];
  controls?: Record<string, Act>;
  /** Why the ATS refuses a lifecycle action on the application as it stands, if it does. */
  refuses?(application: KitApplication, action: LifecycleAction): string | undefined;
  /** How the vendor refuses an upload, answered while the control refuses the next ones. */
  uploadRefusal: Refusal;
  routes(kit: KitContext): Route[];
  /** The signed webhook(s) a stage change or a lifecycle action produces (`exit` already set or cleared). */
  changed(kit: KitContext, application: KitApplication, target: WebhookTarget, change: KitChange): SignedDelivery[];
  candidateDeleted?(candidate: KitCandidate, applications: KitApplication[], target: WebhookTarget): SignedDelivery;
  /** Secrets the ATS issues when a webhook is registered (Lever's signature token per event type). */
  issueSecrets?(): Record<string, string>;
  ping?(target: WebhookTarget): SignedDelivery;
  /** What the ATS does once a recruiter's move entered a stage and its webhook went (Ashby's automated assessments). */
  stageEntered?(application: KitApplication, stage: KitStage): Promise<void>;
}

/** Where each sandbox listens for `npm start` (tests take free ports). */
export const SANDBOX_PORTS: Record<DirectAtsKind, number> = {
  greenhouse: 4020,
  ashby: 4030,
  lever: 4040,
  workable: 4050,
};
export type SandboxOptions = RateOptions & { port?: number; seed?: number };
type Credentials = Partial<Record<'atsApiKey' | 'atsClientId' | 'atsClientSecret', string>>;
/** A request's JSON body (base64 files in it too), `{}` when empty; a body that is not JSON throws (answered 400). */
export const jsonBody = (request: IncomingMessage): Promise<Body> => readJson(request, UPLOAD_BODY_BYTES);

/** An assessment partner as an ATS knows it once registered: where it is called, with the key the partner issued. */
export class PartnerClient<P extends { key: string }> {
  protected partner: P | undefined;

  /** As the ATS's partnerships team and the customer enter them. */
  public register(partner: P): void {
    this.partner = partner;
  }

  protected call(url: (partner: P) => string, method: string, body?: unknown) {
    if (!this.partner) throw new Error('no assessment partner is registered');
    return callAsAts(url(this.partner), { method, key: this.partner.key, body });
  }
}

export function retag(state: AtsSandboxState, key: string, tags: unknown[], add: boolean): string[] {
  const held = new Set(state.tags[key] ?? []);
  for (const tag of tags) add ? held.add(String(tag)) : held.delete(String(tag));
  return setTags(state, key, [...held]);
}

/** The key's tags replaced, the write kept in its history (the last 20). */
export function setTags(state: AtsSandboxState, key: string, tags: string[]): string[] {
  state.tags[key] = tags;
  state.tagHistory[key] = [...(state.tagHistory[key] ?? []), `${new Date().toISOString()} ${tags}`].slice(-20);
  return tags;
}

type Act = (body: Body) => unknown;

export const DEFAULT_REASONS = { rejected: 'Not a fit', withdrawn: 'Withdrew', hired: 'Hired' } as const;
/** The application's place in the process after `action`: out of it with its reason, or back in it. */
function applyLifecycle(application: KitApplication, action: LifecycleAction, reason?: string): void {
  if (!LIFECYCLE_ACTIONS.includes(action)) throw new Error(`action: one of ${LIFECYCLE_ACTIONS.join(', ')}`);
  const at = new Date().toISOString();
  const kind = action === 'reject' ? 'rejected' : action === 'withdraw' ? 'withdrawn' : 'hired';
  const exit = action === 'unreject' ? undefined : { kind, reason: reason ?? DEFAULT_REASONS[kind], at };
  Object.assign(application, { updatedAt: at, exit, status: exit ? 'archived' : 'active' });
}

/** The records as the route tables reach them; `moved`: a stage change made through the API. */
type Moved = (moved: KitApplication, from: string) => void;
function kitContext(state: AtsSandboxState, moved: Moved, files: FileStore, newId: () => string = randomUUID) {
  const find = <T extends { id: string }>(list: T[], id: string) => list.find((item) => item.id === id);
  const job = (id: string) => find(state.jobs, id);
  return {
    ...{ state, job, json: jsonBody, files, newId },
    /** The ids a file of an application may hang on: it, or its candidate (Ashby keeps files on candidates). */
    ownersOf: (id: string) => [id, find(state.applications, id)?.candidateId ?? id],
    application: (id: string) => find(state.applications, id),
    candidate: (id: string) => find(state.candidates, id),
    stage: (jobId: string, stageId: string) => job(jobId)?.stages.find((s) => s.id === stageId),
    /** The application's candidate and job, which the sandbox always creates with it. */
    parties(application: KitApplication): { candidate: KitCandidate; job: KitJob } {
      const [candidate, job] = [find(state.candidates, application.candidateId), find(state.jobs, application.jobId)];
      if (!candidate || !job) throw new Error(`sandbox state: application ${application.id} lost its candidate or job`);
      return { candidate, job };
    },
    /** A move made through the API, which fires the stage-change webhook as the real ATS would. */
    moveByApi(application: KitApplication, toStageId: string) {
      const from = application.stageId;
      enterStage(state, application, toStageId);
      moved(application, from);
    },
    addNote(application: Pick<KitApplication, 'id' | 'candidateId'>, body: string, author?: string): KitNote {
      const { id: applicationId, candidateId } = application;
      const note = { id: newId(), applicationId, candidateId, body, author, at: new Date().toISOString() };
      state.notes.push(note);
      return note;
    },
  };
}
export type KitContext = ReturnType<typeof kitContext>;

function enterStage(state: AtsSandboxState, application: KitApplication, toStageId: string): void {
  const at = new Date().toISOString();
  state.moves.push({ applicationId: application.id, fromStageId: application.stageId, toStageId, at });
  Object.assign(application, { stageId: toStageId, updatedAt: at });
}

function need(kit: KitContext, applicationId: string): KitApplication {
  const application = kit.application(applicationId);
  if (!application) throw new Error(`applicationId: no application ${applicationId}`);
  return application;
}

type NewCandidate = { firstName: string; lastName: string; email: string; jobId?: string };
/** `deliver: false`: the webhook is lost; `repeat`: the same delivery sent again. */
type LifecycleOptions = { reason?: string | undefined; deliver?: boolean; repeat?: number | undefined };
type LifecycleChange = { applicationId: string; action: LifecycleAction } & LifecycleOptions;

/** A new candidate with one application, in the first stage of the job (the demo job unless said). */
function addCandidate(kit: KitContext, { firstName, lastName, email, jobId }: NewCandidate): KitApplication {
  if (jobId !== undefined && !kit.job(jobId)) throw new Error(`jobId: no job ${jobId}`);
  const candidate: KitCandidate = { id: kit.newId(), firstName, lastName, email };
  kit.state.candidates.push(candidate);
  return addApplication(kit, { candidateId: candidate.id, jobId: jobId ?? (kit.state.jobs[0] as KitJob).id });
}

/** A further application of a candidate, in the first stage of the job (a candidate applies more than once). */
function addApplication(kit: KitContext, { candidateId, jobId }: { candidateId: string; jobId: string }) {
  const job = kit.job(jobId);
  if (!job) throw new Error(`jobId: no job ${jobId}`);
  if (!kit.candidate(candidateId)) throw new Error(`candidateId: no candidate ${candidateId}`);
  const [stageId, at] = [(job.stages[0] as KitStage).id, new Date().toISOString()];
  const application: KitApplication = {
    ...{ id: kit.newId(), candidateId, jobId: job.id, stageId, status: 'active', createdAt: at, updatedAt: at },
  };
  kit.state.applications.push(application);
  return application;
}

/** What a recruiter does in the ATS, and the webhooks each action sends (the sandbox's methods). */
function recruiter(spec: AtsSandboxSpec, kit: KitContext, hub: WebhookHub) {
  const { state } = kit;
  const previous = new Map<string, string>();
  const stageChange = (application: KitApplication, repeat?: number, droppable = false) => {
    const deliveries = (target: WebhookTarget) =>
      spec.changed(kit, application, target, { from: previous.get(application.id) });
    return sendChange(hub, { action: 'stage-change', deliveries, repeat, droppable });
  };
  return {
    moveByApi: (application: KitApplication, from: string) => {
      previous.set(application.id, from);
      void stageChange(application);
    },
    addCandidate: (input: NewCandidate) => addCandidate(kit, input),
    addApplication: (input: { candidateId: string; jobId: string }) => addApplication(kit, input),
    /** Moves the application and sends the signed stage-change webhook `repeat` times (one delivery, resent). */
    async moveCandidate(input: { applicationId: string; stageName?: string; stageId?: string; repeat?: number }) {
      const application = need(kit, input.applicationId);
      const stages = kit.job(application.jobId)?.stages ?? [];
      const stage = stages.find((s) => s.id === input.stageId || s.name === input.stageName);
      if (!stage) throw new Error(`stage: no stage ${input.stageId ?? input.stageName}`);
      previous.set(application.id, application.stageId);
      enterStage(state, application, stage.id);
      const deliveries = await stageChange(application, input.repeat, true);
      await spec.stageEntered?.(application, stage);
      return deliveries;
    },
    /** The application's current stage sent again as a new delivery. */
    resendStageChange: (applicationId: string) => stageChange(need(kit, applicationId)),
    /** Deletes the application's candidate with all their applications, and sends the deletion webhook if any. */
    async deleteCandidate(applicationId: string): Promise<void> {
      const { candidate } = kit.parties(need(kit, applicationId));
      const removed = state.applications.filter((a) => a.candidateId === candidate.id);
      state.candidates = state.candidates.filter((c) => c.id !== candidate.id);
      state.applications = state.applications.filter((a) => a.candidateId !== candidate.id);
      const deleted = (target: WebhookTarget) => spec.candidateDeleted?.(candidate, removed, target) ?? [];
      await sendChange(hub, { action: 'deleted', deliveries: (target) => [deleted(target)].flat() });
    },
    /** A recruiter's lifecycle action and its webhook(s) (`deliver: false`: lost; `repeat`: the same, again). */
    async changeLifecycle({ applicationId, action, reason, deliver, repeat }: LifecycleChange) {
      const application = need(kit, applicationId);
      const [was, refused] = [application.exit, spec.refuses?.(application, action)];
      if (refused) throw new Error(refused);
      applyLifecycle(application, action, reason);
      if (deliver === false) return [];
      const deliveries = (target: WebhookTarget) => spec.changed(kit, application, target, { action, was });
      return sendChange(hub, { action, deliveries, repeat });
    },
  };
}

/** What the records answer about an application, for the tests and the demo. */
function readings(kit: KitContext) {
  const { state } = kit;
  const stageName = (application: KitApplication | undefined, stageId: string) =>
    (application && kit.stage(application.jobId, stageId)?.name) ?? stageId;
  return {
    notesOf: (id: string) => state.notes.filter((n) => n.applicationId === id).map((n) => n.body),
    /** The tags the application (or its candidate, where the ATS tags candidates) carries. */
    tagsOf: (id: string) => state.tags[id] ?? state.tags[kit.application(id)?.candidateId ?? ''] ?? [],
    tagHistoryOf: (id: string) =>
      state.tagHistory[id] ?? state.tagHistory[kit.application(id)?.candidateId ?? ''] ?? [],
    /** The files uploaded to the application (or its candidate), with the URL that serves each. */
    filesOf: (id: string) => kit.files.list(kit.ownersOf(id)),
    stageNameOf: (id: string) => stageName(need(kit, id), need(kit, id).stageId),
    /** Names of the stages the application was moved into, in order (by the API or the control endpoint). */
    movesOf: (id: string) =>
      state.moves.filter((m) => m.applicationId === id).map((m) => stageName(kit.application(id), m.toStageId)),
  };
}

/** The sandbox as the local stack, the demo and the tests use it, but for its URL (known once it listens). */
function sandboxOf(spec: AtsSandboxSpec, kit: KitContext, actions: Omit<ReturnType<typeof recruiter>, 'moveByApi'>) {
  const { state } = kit;
  const credentials: Credentials = spec.credentials ?? { atsApiKey: spec.apiKey };
  return {
    ...{
      kind: spec.profile.kind as DirectAtsKind,
      url: '',
      state,
      credentials,
      demoJobId: (spec.jobs[0] as KitJob).id,
    },
    ...{ ...actions, ...readings(kit), ...edgeReadings(state), close: async (): Promise<void> => undefined },
    /** Registers the connector's webhook; answers the secrets the ATS issued for it, per event type, if any. */
    async registerWebhook(input: WebhookTarget): Promise<{ issued?: Record<string, string> | undefined }> {
      const target: WebhookTarget = { ...input, issued: spec.issueSecrets?.() };
      state.webhooks.push(target);
      const ping = spec.ping?.(target);
      if (ping) await deliverSigned(target, ping, state.deliveries, 'ping');
      return { issued: target.issued };
    },
    /** Switches every webhook on or off, as an admin (or the ATS after failed deliveries) would. */
    setWebhooksEnabled: (enabled: boolean) => {
      for (const target of state.webhooks) target.enabled = enabled;
    },
  };
}
export type AtsSandbox = ReturnType<typeof sandboxOf>;
/** What the local stack, the demo and the tests need of any ATS sandbox. */
export type AtsSandboxView = Omit<AtsSandbox, 'state'>;

/**
 * The sandbox's own routes: its state, the files uploaded, and each recruiter action a POST answered with what it did
 * (201 for a new candidate) or 404 with why not; a body names its application `applicationId` (or `application_id`).
 */
function kitControls(sandbox: AtsSandbox, kit: KitContext, more: Record<string, Act> = {}) {
  const posted = ([path, act]: [string, Act]) =>
    route(`POST /_sandbox/${path}`, async ({ request, response }) => {
      const body = await jsonBody(request);
      try {
        sendJson(response, path === 'candidates' ? 201 : 200, (await act(body)) ?? {});
      } catch (error) {
        sendJson(response, 404, { error: errorMessage(error) });
      }
    });
  const applicationId = (body: Body) => String(body.applicationId ?? body.application_id);
  const actions: Record<string, Act> = {
    candidates: (body) => sandbox.addCandidate(body as never),
    move: async (body) => ({ deliveries: await sandbox.moveCandidate(body as never) }),
    lifecycle: async (body) => {
      const [action, reason] = [body.action, typeof body.reason === 'string' ? body.reason : undefined];
      const input = { applicationId: applicationId(body), action, reason, deliver: body.deliver !== false };
      return { deliveries: await sandbox.changeLifecycle(input as never) };
    },
    'delete-candidate': (body) => sandbox.deleteCandidate(applicationId(body)),
    faults: (body) => Object.assign(sandbox.state.faults, body),
  };
  const state = route('GET /_sandbox/state', ({ response }) => sendJson(response, 200, sandbox.state));
  return [state, ...Object.entries({ ...actions, ...more }).map(posted), ...fileRoutes(kit.files, kit.ownersOf)];
}

/** A sandbox of one ATS: the spec gives its API and webhooks; the kit keeps state, limits, faults and control. */
export async function startAtsSandbox(spec: AtsSandboxSpec, options: SandboxOptions = {}): Promise<AtsSandbox> {
  const state = seededState(spec.jobs);
  const files = new FileStore(spec.uploadRefusal);
  const kit = kitContext(state, (application, from) => moveByApi(application, from), files, spec.newId);
  const seed = options.seed ?? spec.seed ?? 11;
  const { moveByApi, ...actions } = recruiter(spec, kit, { state, random: seededRandom(seed) });
  const sandbox = sandboxOf(spec, kit, actions);
  const authorization = spec.bearer ? `Bearer ${spec.apiKey}` : basicAuth(spec.apiKey ?? '');
  const byKey = (request: IncomingMessage) => (request.headers.authorization === authorization ? 'key' : undefined);
  const edge = await startEdge(
    {
      ...{ ...spec, seed, port: options.port ?? SANDBOX_PORTS[spec.profile.kind as DirectAtsKind], rate: options },
      authenticate: spec.authenticate ?? byKey,
      api: spec.routes(kit),
      open: [...(spec.open?.(kit) ?? []), ...kitControls(sandbox, kit, spec.controls)],
    },
    state,
  );
  kit.files.origin = edge.url;
  return Object.assign(sandbox, { url: edge.url, close: edge.close });
}
