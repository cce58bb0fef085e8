import { edgeState } from '../edge';
import { LIFECYCLE_ACTIONS, type LifecycleAction, type LifecycleOptions } from '../ats-sandbox-kit';
import type { DeliveryRecord, WebhookTarget } from '../signed-webhooks';

export const GREENHOUSE_SANDBOX_DEFAULTS = {
  ...{ clientId: 'greenhouse-sandbox-client', clientSecret: 'greenhouse-sandbox-secret' },
  tokenTtlSeconds: 3600,
  /** Users of the organisation a token may act as (`sub`). */
  userIds: ['4080'] as readonly string[],
} as const;

export type Stage = { id: number; name: string };
/** `status` open unless said (`GET /v3/jobs?status=`: open, draft, closed). */
export type Job = { id: number; name: string; stages: Stage[]; status?: 'open' | 'draft' | 'closed' };
type Email = { value: string; type: string };
type Candidate = { id: number; first_name: string; last_name: string; email_addresses: Email[] };
/** A rejection reason, its type "We rejected them", "They rejected us" (a withdrawal) or "None specified". */
type RejectionReason = { id: number; name: string; type: { id: number; name: string } };
/** While rejected, with `rejected_at` and its reason (webhooks/_candidate_events.md, "rejected"). */
export type Application = { id: number; candidate_id: number; job_id: number; current_stage: Stage } & {
  status: 'active' | 'rejected' | 'hired';
  rejected_at?: string | null;
  rejection_reason?: RejectionReason | null;
};
/** A note as v3 reads it back: `type`, and the visibility spelt `…_visible` (Airbyte's v3 example). */
type Note = { id: number; candidate_id: number; application_id?: number; body: string; type: string } & {
  visibility: string;
  user_id: number | string;
  created_at: string;
};
type Move = { application_id: number; from_stage_id: number; to_stage_id: number; at: string };
/** A file on an application, as `POST /v3/attachments` answers it (Workato's v3 outputs [3p]); bytes in the store. */
export type Attachment = Record<'id' | 'application_id' | 'candidate_id', number> &
  Record<'filename' | 'type' | 'url' | 'content_type' | 'visibility' | 'created_at' | 'updated_at', string>;
/** A row of `GET /v3/application_stages`: a stage an application entered, and left unless it is current. */
type ApplicationStage = { id: number; application_id: number; job_interview_stage_id: number } & {
  entered_at: string;
  exited_at: string | null;
};

/** A job's interview plan: its stages' names in order, numbered from `firstId`. */
const plan = (firstId: number, ...names: string[]): Stage[] => names.map((name, i) => ({ id: firstId + i, name }));
const REVIEWS = ['Application Review', 'AI Interview', 'Hiring Manager Review'];
const SEEDED_JOBS: Job[] = [
  { id: 3301, name: 'Backend Engineer', stages: plan(9000, ...REVIEWS, 'Offer') },
  { id: 3302, name: 'Data Engineer', stages: plan(9100, ...REVIEWS) },
  // Closed, without the AI interview stage: "all jobs" means open ones (`GET /v3/jobs?status=open`).
  { id: 3399, name: 'Recruiting Coordinator', stages: [{ id: 9900, name: 'Hired' }], status: 'closed' },
];

/** Greenhouse's reason types, by what each means (harvest/_rejection_reasons.md); ids vary per organisation. */
const REJECTED = { id: 1, name: 'We rejected them' };
const WITHDRAWN = { id: 2, name: 'They rejected us' };
/** A new organisation: the seeded jobs and rejection reasons, nobody applied yet, no faults. */
const seededState = () => ({
  ...{ jobs: structuredClone(SEEDED_JOBS), candidates: [] as Candidate[], applications: [] as Application[] },
  ...{ notes: [] as Note[], moves: [] as Move[], deliveries: [] as DeliveryRecord[], webhooks: [] as WebhookTarget[] },
  /** The organisation's candidate tags (`/v3/candidate_tags`), and a row per tag applied to a candidate. */
  candidateTags: [] as { id: number; name: string }[],
  appliedTags: [] as { id: number; candidate_id: number; candidate_tag_id: number }[],
  applicationStages: [] as ApplicationStage[],
  attachments: [] as Attachment[],
  rejectionReasons: [
    { id: 14, name: 'Lacking skill(s)/qualification(s)', type: REJECTED },
    { id: 15, name: 'Candidate withdrew', type: WITHDRAWN },
  ] as RejectionReason[],
  ...edgeState(),
});
export type GreenhouseSandboxState = ReturnType<typeof seededState>;
/** A recruiter's lifecycle action on an application, as Greenhouse's ids name it. */
export type LifecycleInput = { application_id: number; action: LifecycleAction } & LifecycleOptions;
type NewCandidate = Record<'first_name' | 'last_name' | 'email', string> & { job_id: number };
/** A recruiter's move of an application into a stage of its job, by the stage's id or name. */
export type StageMove = { application_id: number; stage_id?: number | undefined; stage_name?: string | undefined };
/** The organisation's records and their changes, by a recruiter or the API; every id of one sequence. */
export function greenhouseRecords() {
  const state = seededState();
  let nextId = 50_000;
  const newId = () => nextId++;
  const application = (id: number) => {
    const found = state.applications.find((a) => a.id === id);
    if (!found) throw new Error(`application_id: no application ${id}`);
    return found;
  };
  const candidateOf = (a: Application) => state.candidates.find((c) => c.id === a.candidate_id) as Candidate;
  const jobOf = (a: Application) => state.jobs.find((j) => j.id === a.job_id) as Job;
  /** The application's row for the stage it is in now; the row of the stage it left gets its `exited_at`. */
  const enterStage = ({ id: application_id, current_stage }: Application) => {
    const at = new Date().toISOString();
    for (const row of state.applicationStages)
      if (row.application_id === application_id && row.exited_at === null) row.exited_at = at;
    const row = { id: newId(), application_id, job_interview_stage_id: current_stage.id, entered_at: at };
    state.applicationStages.push({ ...row, exited_at: null });
  };
  /** A further application of an existing candidate, to another job (a candidate applies more than once). */
  const addApplication = (input: { candidate_id: number; job_id: number }): Application => {
    const job = state.jobs.find((j) => j.id === input.job_id);
    if (!job) throw new Error(`job_id: no job ${input.job_id}`);
    if (!state.candidates.some((c) => c.id === input.candidate_id))
      throw new Error(`candidate_id: no candidate ${input.candidate_id}`);
    const created: Application = { id: newId(), ...input, status: 'active', current_stage: job.stages[0] as Stage };
    state.applications.push(created);
    enterStage(created);
    return created;
  };
  return {
    ...{ state, newId, application, candidateOf, jobOf, addApplication },
    ...{ changeLifecycle: lifecycle(state, newId, application) },
    addCandidate({ first_name, last_name, email, job_id }: NewCandidate) {
      if (!state.jobs.some((j) => j.id === job_id)) throw new Error(`job_id: no job ${job_id}`);
      const candidate = { id: newId(), first_name, last_name, email_addresses: [{ value: email, type: 'personal' }] };
      state.candidates.push(candidate);
      return addApplication({ candidate_id: candidate.id, job_id });
    },
    /** The application moved into a stage of its job (by id or name), recorded as Greenhouse lists it. */
    move({ application_id, stage_id, stage_name }: StageMove) {
      const moved = application(application_id);
      const stage = jobOf(moved).stages.find((s) => s.id === stage_id || s.name === stage_name);
      if (!stage) throw new Error(`stage: job ${moved.job_id} has no stage ${stage_id ?? stage_name}`);
      const at = new Date().toISOString();
      state.moves.push({ application_id, from_stage_id: moved.current_stage.id, to_stage_id: stage.id, at });
      moved.current_stage = stage;
      enterStage(moved);
      return moved;
    },
  };
}
export type GreenhouseRecords = ReturnType<typeof greenhouseRecords>;

/** The reason of that type and name (the first of its type when none is given); a new name is added. */
function reasonOf(state: GreenhouseSandboxState, newId: () => number, type: RejectionReason['type'], name?: string) {
  const known = state.rejectionReasons.find((r) => r.type.id === type.id && (name === undefined || r.name === name));
  const reason = known ?? { id: newId(), name: name ?? type.name, type };
  if (!known) state.rejectionReasons.push(reason);
  return reason;
}

/**
 * A rejection (a withdrawal: reason type "They rejected us"), a hire, or an undo ("Unreject", "Unhire"), answering
 * the webhook it fires (webhooks/_candidate_events.md); a hired application is not rejected without the undo.
 */
function lifecycle(state: GreenhouseSandboxState, newId: () => number, application: (id: number) => Application) {
  return (id: number, action: LifecycleAction, reason?: string) => {
    const found = application(id);
    if (!LIFECYCLE_ACTIONS.includes(action)) throw new Error(`action: one of ${LIFECYCLE_ACTIONS.join(', ')}`);
    const { status } = found;
    if (action === 'unreject') {
      if (status === 'active') throw new Error(`application ${id} is neither rejected nor hired`);
      Object.assign(found, { status: 'active', rejected_at: null, rejection_reason: null });
      return status === 'hired' ? 'unhire_candidate' : 'unreject_candidate';
    }
    if (status === 'hired') throw new Error(`application ${id} is hired: unhire it first`);
    if (action === 'hire') {
      if (status !== 'active') throw new Error(`application ${id} is ${status}`);
      found.status = 'hired';
      return 'hire_candidate';
    }
    const rejection_reason = reasonOf(state, newId, action === 'withdraw' ? WITHDRAWN : REJECTED, reason);
    Object.assign(found, { status: 'rejected', rejected_at: new Date().toISOString(), rejection_reason });
    return 'reject_candidate';
  };
}
