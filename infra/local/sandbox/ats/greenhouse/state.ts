import {
  DEFAULT_REASONS,
  setTags,
  type KitApplication,
  type KitContext,
  type KitJob,
  type LifecycleAction,
} from '../ats-sandbox-kit';

export const GREENHOUSE_SANDBOX_DEFAULTS = {
  ...{ clientId: 'greenhouse-sandbox-client', clientSecret: 'greenhouse-sandbox-secret' },
  tokenTtlSeconds: 3600,
  /** Users of the organisation a token may act as (`sub`). */
  userIds: ['4080'] as readonly string[],
} as const;

/** A job's interview plan: its stages' names in order, numbered from `firstId`. */
const plan = (firstId: number, ...names: string[]) => names.map((name, i) => ({ id: String(firstId + i), name }));
const REVIEWS = ['Application Review', 'AI Interview', 'Hiring Manager Review'];
/** Greenhouse's ids are numbers: the kit keeps each as its decimal text, the API shows it as a number. */
export const SEEDED_JOBS: KitJob[] = [
  { id: '3301', name: 'Backend Engineer', stages: plan(9000, ...REVIEWS, 'Offer') },
  { id: '3302', name: 'Data Engineer', stages: plan(9100, ...REVIEWS) },
  // Closed, without the AI interview stage: "all jobs" means open ones (`GET /v3/jobs?status=open`).
  { id: '3399', name: 'Recruiting Coordinator', stages: [{ id: '9900', name: 'Hired' }], state: 'closed' },
];

/** A rejection reason, its type "We rejected them", "They rejected us" (a withdrawal) or "None specified". */
type RejectionReason = { id: number; name: string; type: { id: number; name: string } };
/** Greenhouse's reason types, by what each means (harvest/_rejection_reasons.md); ids vary per organisation. */
const REJECTED = { id: 1, name: 'We rejected them' };
const WITHDRAWN = { id: 2, name: 'They rejected us' };
/** A file on an application, as `POST /v3/attachments` answers it (Workato's v3 outputs [3p]); bytes in the store. */
export type Attachment = Record<'id' | 'application_id' | 'candidate_id', number> &
  Record<'filename' | 'type' | 'url' | 'content_type' | 'visibility' | 'created_at' | 'updated_at', string>;

/** What Greenhouse keeps beside the kit's records: its tags and their rows, files, rejection reasons. */
export function greenhouseRecords(kit: () => KitContext) {
  let nextId = 50_000;
  const records = {
    /** Every id of one sequence, as Greenhouse's. */
    newId: () => String(nextId++),
    /** The organisation's candidate tags (`/v3/candidate_tags`), and a row per tag applied to a candidate. */
    candidateTags: [] as { id: number; name: string }[],
    appliedTags: [] as { id: number; candidate_id: number; candidate_tag_id: number }[],
    attachments: [] as Attachment[],
    rejectionReasons: [
      { id: 14, name: 'Lacking skill(s)/qualification(s)', type: REJECTED },
      { id: 15, name: 'Candidate withdrew', type: WITHDRAWN },
    ] as RejectionReason[],
    /** The candidate's tags by name, as the kit's readings show them. */
    retagged(candidateId: number) {
      const rows = records.appliedTags.filter((r) => r.candidate_id === candidateId);
      const names = rows.map((r) => records.candidateTags.find((t) => t.id === r.candidate_tag_id)?.name ?? '');
      setTags(kit().state, String(candidateId), names);
    },
    /** The reason of the exit's type and text (none given: its first); a text it lacks is added as a new reason. */
    reasonOf({ exit }: KitApplication): RejectionReason | null {
      if (!exit || exit.kind === 'hired') return null;
      const type = exit.kind === 'withdrawn' ? WITHDRAWN : REJECTED;
      const name = exit.reason === DEFAULT_REASONS[exit.kind] ? undefined : exit.reason;
      const known = records.rejectionReasons.find((r) => r.type.id === type.id && (!name || r.name === name));
      const reason = known ?? { id: Number(records.newId()), name: exit.reason, type };
      if (!known) records.rejectionReasons.push(reason);
      return reason;
    },
  };
  return records;
}
export type GreenhouseRecords = ReturnType<typeof greenhouseRecords>;

/** The application's status as Greenhouse names it: active, rejected (a withdrawal too) or hired. */
export const statusOf = ({ exit }: KitApplication) => (!exit ? 'active' : exit.kind === 'hired' ? 'hired' : 'rejected');

/**
 * What Greenhouse refuses (webhooks/_candidate_events.md): a hired application is not rejected or hired again
 * without "Unhire", an application in process has nothing to undo, and only one in process is hired.
 */
export function refuses(application: KitApplication, action: LifecycleAction): string | undefined {
  const status = statusOf(application);
  if (action === 'unreject')
    return status === 'active' ? `application ${application.id} is neither rejected nor hired` : undefined;
  if (status === 'hired') return `application ${application.id} is hired: unhire it first`;
  if (action === 'hire' && status !== 'active') return `application ${application.id} is ${status}`;
  return undefined;
}

/** `GET /v3/application_stages` rows: each stage the application entered, left unless it is current. */
export function applicationStages(kit: KitContext) {
  return kit.state.applications.flatMap((application) => {
    const entries = [
      { stageId: kit.job(application.jobId)?.stages[0]?.id ?? '', at: application.createdAt },
      ...kit.state.moves
        .filter((m) => m.applicationId === application.id)
        .map((m) => ({ stageId: m.toStageId, at: m.at })),
    ];
    return entries.map(({ stageId, at }, i) => ({
      ...{ id: Number(application.id) * 100 + i, application_id: Number(application.id) },
      ...{ job_interview_stage_id: Number(stageId), entered_at: at, exited_at: entries[i + 1]?.at ?? null },
    }));
  });
}
