import type { EdgeState } from '../edge';
import { noFaults } from '../faults';
import { LIFECYCLE_ACTIONS, type LifecycleAction } from '../ats-sandbox-kit';
import type { DeliveryRecord, WebhookTarget } from '../signed-webhooks';

export const GREENHOUSE_SANDBOX_DEFAULTS = {
  port: 4020,
  clientId: 'greenhouse-sandbox-client',
  clientSecret: 'greenhouse-sandbox-secret',
  tokenTtlSeconds: 3600,
  /** Users of the organisation a token may act as (`sub`). */
  userIds: ['4080'] as readonly string[],
  /** v3 lists: `per_page` 100 by default; id filters take at most 50 ids (/docs/list-endpoints). */
  defaultPerPage: 100,
  maxFilterIds: 50,
} as const;

export type Stage = { id: number; name: string };
/** `status` open unless said (`GET /v3/jobs?status=`: open, draft, closed). */
export type Job = { id: number; name: string; stages: Stage[]; status?: 'open' | 'draft' | 'closed' };
export type Candidate = {
  id: number;
  first_name: string;
  last_name: string;
  email_addresses: { value: string; type: string }[];
};
/** A rejection reason, its type "We rejected them", "They rejected us" (a withdrawal) or "None specified". */
export type RejectionReason = { id: number; name: string; type: { id: number; name: string } };
/** While rejected, with `rejected_at` and its reason (webhooks/_candidate_events.md, "rejected"). */
export type Application = { id: number; candidate_id: number; job_id: number; current_stage: Stage } & {
  status: 'active' | 'rejected' | 'hired';
  rejected_at?: string | null;
  rejection_reason?: RejectionReason | null;
};
/** A row of `GET /v3/application_stages`: one stage one application entered, and left unless it is current. */
export type ApplicationStage = { id: number; application_id: number; job_interview_stage_id: number } & {
  entered_at: string;
  exited_at: string | null;
};
/** A note as v3 reads it back: `type`, and the visibility spelt `…_visible` (Airbyte's v3 example). */
export type Note = { id: number; candidate_id: number; application_id?: number; body: string; type: string } & {
  visibility: string;
  user_id: number | string;
  created_at: string;
};

export interface GreenhouseSandboxState extends EdgeState {
  jobs: Job[];
  candidates: Candidate[];
  applications: Application[];
  notes: Note[];
  moves: { application_id: number; from_stage_id: number; to_stage_id: number; at: string }[];
  deliveries: DeliveryRecord[];
  webhooks: WebhookTarget[];
  /** The organisation's candidate tags (`/v3/candidate_tags`), and the tags applied to candidates, one row each. */
  candidateTags: { id: number; name: string }[];
  appliedTags: { id: number; candidate_id: number; candidate_tag_id: number }[];
  /** Each stage an application entered (`/v3/application_stages`); the current one has no `exited_at`. */
  applicationStages: ApplicationStage[];
  /** The organisation's rejection reasons, each of one of the three types (`GET /v3/rejection_reasons`). */
  rejectionReasons: RejectionReason[];
}

/** A job's interview plan: its stages' names in order, numbered from `firstId`. */
const plan = (firstId: number, ...names: string[]): Stage[] => names.map((name, i) => ({ id: firstId + i, name }));

const SEEDED_JOBS: Job[] = [
  {
    id: 3301,
    name: 'Backend Engineer',
    stages: plan(9000, 'Application Review', 'AI Interview', 'Hiring Manager Review', 'Offer'),
  },
  {
    id: 3302,
    name: 'Data Engineer',
    stages: plan(9100, 'Application Review', 'AI Interview', 'Hiring Manager Review'),
  },
  // Closed, without the AI interview stage: "all jobs" means open ones (`GET /v3/jobs?status=open`).
  { id: 3399, name: 'Recruiting Coordinator', stages: [{ id: 9900, name: 'Hired' }], status: 'closed' },
];

/** Greenhouse's reason types, by what each means (harvest/_rejection_reasons.md); ids vary per organisation. */
const REASON_TYPES = {
  rejected: { id: 1, name: 'We rejected them' },
  withdrawn: { id: 2, name: 'They rejected us' },
} as const;

/** The webhook a recruiter's lifecycle action fires (webhooks/_candidate_events.md). */
export type LifecycleEvent = 'reject_candidate' | 'unreject_candidate' | 'hire_candidate' | 'unhire_candidate';

/** A recruiter's lifecycle action on an application (`deliver: false`: its webhook is lost; `repeat`: sent again). */
export type LifecycleInput = { application_id: number; action: LifecycleAction; reason?: string | undefined } & {
  deliver?: boolean | undefined;
  repeat?: number | undefined;
};

/** A recruiter's move of an application into a stage of its job, by the stage's id or name. */
export type StageMove = { application_id: number; stage_id?: number | undefined; stage_name?: string | undefined };

/** A new organisation: the seeded jobs and rejection reasons, nobody applied yet, no faults. */
export function seededState(): GreenhouseSandboxState {
  const rejectionReasons = [
    { id: 14, name: 'Lacking skill(s)/qualification(s)', type: REASON_TYPES.rejected },
    { id: 15, name: 'Candidate withdrew', type: REASON_TYPES.withdrawn },
  ];
  return {
    ...{ jobs: structuredClone(SEEDED_JOBS), candidates: [], applications: [], notes: [], moves: [], deliveries: [] },
    ...{ webhooks: [], candidateTags: [], appliedTags: [], applicationStages: [], rejectionReasons },
    ...{ requests: {}, calls: {}, throttled: 0, faults: noFaults() },
  };
}

/**
 * The organisation's records and the changes made to them, by a recruiter (the sandbox's actions) or through the
 * API (a move): every id is the organisation's own sequence.
 */
export class GreenhouseRecords {
  private nextId = 50_000;

  public constructor(public readonly state: GreenhouseSandboxState) {}

  public newId(): number {
    return this.nextId++;
  }

  public application(applicationId: number): Application {
    const application = this.state.applications.find((a) => a.id === applicationId);
    if (!application) throw new Error(`application_id: no application ${applicationId}`);
    return application;
  }

  public candidateOf(application: Application): Candidate {
    return this.state.candidates.find((c) => c.id === application.candidate_id) as Candidate;
  }

  public jobOf(application: Application): Job {
    return this.state.jobs.find((j) => j.id === application.job_id) as Job;
  }

  public addCandidate(input: { first_name: string; last_name: string; email: string; job_id: number }): Application {
    if (!this.state.jobs.some((j) => j.id === input.job_id)) throw new Error(`job_id: no job ${input.job_id}`);
    const { first_name, last_name, email } = input;
    const candidate = {
      id: this.newId(),
      first_name,
      last_name,
      email_addresses: [{ value: email, type: 'personal' }],
    };
    this.state.candidates.push(candidate);
    return this.addApplication({ candidate_id: candidate.id, job_id: input.job_id });
  }

  public addApplication(input: { candidate_id: number; job_id: number }): Application {
    const job = this.state.jobs.find((j) => j.id === input.job_id);
    if (!job) throw new Error(`job_id: no job ${input.job_id}`);
    if (!this.state.candidates.some((c) => c.id === input.candidate_id))
      throw new Error(`candidate_id: no candidate ${input.candidate_id}`);
    const current_stage = job.stages[0] as Stage;
    const application: Application = { id: this.newId(), ...input, status: 'active', current_stage };
    this.state.applications.push(application);
    this.enterStage(application);
    return application;
  }

  /** The application moved into a stage of its job (by id or name), recorded as Greenhouse lists it. */
  public move(input: StageMove): Application {
    const application = this.application(input.application_id);
    const job = this.jobOf(application);
    const stage = job.stages.find((s) => s.id === input.stage_id || s.name === input.stage_name);
    if (!stage) throw new Error(`stage: job ${job.id} has no stage ${input.stage_id ?? input.stage_name}`);
    const at = new Date().toISOString();
    this.state.moves.push({
      application_id: application.id,
      from_stage_id: application.current_stage.id,
      to_stage_id: stage.id,
      at,
    });
    application.current_stage = stage;
    this.enterStage(application);
    return application;
  }

  /**
   * A recruiter rejects the application (a withdrawal is a rejection whose reason type is "They rejected us"), marks
   * it hired, or undoes either ("Unreject", "Unhire"): the webhook that fires. A hired application is not rejected,
   * nor a left one hired, without the undo.
   */
  public changeLifecycle(applicationId: number, action: LifecycleAction, reason?: string): LifecycleEvent {
    const application = this.application(applicationId);
    if (!LIFECYCLE_ACTIONS.includes(action)) throw new Error(`action: one of ${LIFECYCLE_ACTIONS.join(', ')}`);
    if (action === 'unreject') {
      if (application.status === 'active')
        throw new Error(`application ${applicationId} is neither rejected nor hired`);
      const event = application.status === 'hired' ? 'unhire_candidate' : 'unreject_candidate';
      Object.assign(application, { status: 'active', rejected_at: null, rejection_reason: null });
      return event;
    }
    if (application.status === 'hired') throw new Error(`application ${applicationId} is hired: unhire it first`);
    if (action === 'hire') {
      if (application.status !== 'active') throw new Error(`application ${applicationId} is ${application.status}`);
      application.status = 'hired';
      return 'hire_candidate';
    }
    const type = action === 'withdraw' ? REASON_TYPES.withdrawn : REASON_TYPES.rejected;
    const rejection_reason = this.rejectionReason(type, reason);
    Object.assign(application, { status: 'rejected', rejected_at: new Date().toISOString(), rejection_reason });
    return 'reject_candidate';
  }

  /** The reason of that type and name, the first of its type when no name is given; a new name is added. */
  private rejectionReason(type: RejectionReason['type'], name: string | undefined): RejectionReason {
    const reasons = this.state.rejectionReasons;
    const known = reasons.find((r) => r.type.id === type.id && (name === undefined || r.name === name));
    if (known) return known;
    const added = { id: this.newId(), name: name ?? type.name, type };
    reasons.push(added);
    return added;
  }

  /** The candidate of the application deleted, with every application of theirs: the ids deleted. */
  public deleteCandidate(applicationId: number): { candidate: Candidate; deleted: number[] } {
    const candidate = this.candidateOf(this.application(applicationId));
    const deleted = this.state.applications.filter((a) => a.candidate_id === candidate.id).map((a) => a.id);
    this.state.applications = this.state.applications.filter((a) => a.candidate_id !== candidate.id);
    this.state.candidates = this.state.candidates.filter((c) => c.id !== candidate.id);
    return { candidate, deleted };
  }

  /** The candidate of the application merged into a new record, which takes their applications. */
  public mergeCandidate(applicationId: number): { loser: Candidate; winner: Candidate } {
    const loser = this.candidateOf(this.application(applicationId));
    const winner: Candidate = { ...loser, id: this.newId() };
    this.state.candidates = [...this.state.candidates.filter((c) => c.id !== loser.id), winner];
    for (const a of this.state.applications) if (a.candidate_id === loser.id) a.candidate_id = winner.id;
    return { loser, winner };
  }

  /** The candidate of the application anonymised: name and e-mail. */
  public anonymizeCandidate(applicationId: number): Candidate {
    const candidate = this.candidateOf(this.application(applicationId));
    Object.assign(candidate, { first_name: 'Anonymized', last_name: String(candidate.id), email_addresses: [] });
    return candidate;
  }

  /** The application's row for the stage it is in now; the row of the stage it left gets its `exited_at`. */
  private enterStage(application: Application): void {
    const at = new Date().toISOString();
    for (const row of this.state.applicationStages)
      if (row.application_id === application.id && row.exited_at === null) row.exited_at = at;
    const stage = application.current_stage.id;
    this.state.applicationStages.push({
      ...{ id: this.newId(), application_id: application.id, job_interview_stage_id: stage, entered_at: at },
      exited_at: null,
    });
  }
}
