import { randomBytes } from 'node:crypto';
import { KOMBO_WRITE_ACTIONS, type KomboCoverageStatus } from '../../../../shared/ats/kombo/kombo.actions';

/**
 * The records of Kombo's unified ATS as the sandbox keeps them, per integration: the ATS's own ("real", changed at
 * once by a recruiter) and Kombo's synced copy (what `GET /ats/*` reads, behind by the sync lag). Fields are as
 * kombohq/typescript-sdk @1dc00a9 types them (src/models/getatsapplicationspositiveresponse.ts,
 * getatscandidatespositiveresponse.ts, getatsjobspositiveresponse.ts, getintegrationsintegrationidpositiveresponse.ts).
 */
export type Outcome = 'PENDING' | 'HIRED' | 'DECLINED';
export type UnifiedStage = { id: string; remote_id: string; name: string; index: number };
export type UnifiedJob = { id: string; remote_id: string; name: string; stages: UnifiedStage[]; createdAt: string };
export type UnifiedTag = { id: string; remote_id: string; name: string };
/** `changedAt`: Kombo's `changed_at`, the record's own fields; `updatedAt`: what `updated_after` filters on. */
type Synced = { changedAt: string; updatedAt: string; createdAt: string; deletedAt: string | null };
export type UnifiedCandidate = Synced & {
  id: string;
  remote_id: string;
  first_name: string;
  last_name: string;
  email: string;
  tags: UnifiedTag[];
};
export type UnifiedApplication = Synced & {
  id: string;
  remote_id: string;
  candidate_id: string;
  job_id: string;
  current_stage_id: string;
  outcome: Outcome;
  rejection_reason_name: string | null;
  rejected_at: string | null;
  /** When the ATS last changed it (`remote_updated_at`). */
  remoteUpdatedAt: string;
};
type Records = { candidates: Map<string, UnifiedCandidate>; applications: Map<string, UnifiedApplication> };
/** `enabled`: switched on in the scope config (the customer may switch a write off); coverage is the tool's. */
export type WriteActionState = { coverage_status: KomboCoverageStatus; enabled: boolean };
/** Refused as Kombo refuses it: the tool cannot (UNSUPPORTED, NOT_IMPLEMENTED), or the scope config says no. */
export const writeRefusal = (state: WriteActionState | undefined) =>
  !state || state.coverage_status === 'UNSUPPORTED' || state.coverage_status === 'NOT_IMPLEMENTED'
    ? 'INTEGRATION.ACTION_NOT_AVAILABLE'
    : state.enabled
      ? undefined
      : 'INTEGRATION.ACTION_DISABLED';

export type UnifiedIntegration = {
  id: string;
  tool: string;
  toolLabel: string;
  organization: string;
  createdAt: string;
  jobs: UnifiedJob[];
  /** The ATS itself, as a recruiter changes it. */
  ats: Records;
  /** Kombo's copy, as its routes read it. */
  synced: Records;
  writeActions: Record<string, WriteActionState>;
  /** Made through the API: what the connector wrote, for the tests and the demo. */
  notes: { applicationId: string; content: string; at: string }[];
  moves: { applicationId: string; stageId: string; stageName: string; at: string }[];
  attachments: UnifiedFile[];
  tagNames: Map<string, UnifiedTag>;
  inFlight: number;
  peakInFlight: number;
};
export type UnifiedFile = {
  id: string;
  applicationId: string;
  type: string;
  name: string;
  contentType: string;
  bytes: Buffer;
  at: string;
};

const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
/** A Kombo id: 24 base58 characters (`26vafvWSRmbhNcxJYqjCzuJg` in the SDK's examples). */
export const komboId = (): string => [...randomBytes(24)].map((byte) => ALPHABET[byte % ALPHABET.length]).join('');
let remoteSeq = 4000;
/** The ATS's own id: a number, as most ATSs issue them. */
export const remoteId = (): string => String(++remoteSeq);

const STAGE_NAMES = ['Application Review', 'AI Interview', 'Hiring Manager Review', 'Offer'];
const job = (name: string, at: string): UnifiedJob => ({
  ...{ id: komboId(), remote_id: remoteId(), name, createdAt: at },
  stages: STAGE_NAMES.map((stage, index) => ({ id: komboId(), remote_id: remoteId(), name: stage, index })),
});
const supported = (...unsupported: string[]): Record<string, WriteActionState> =>
  Object.fromEntries(
    Object.values(KOMBO_WRITE_ACTIONS).map((action) => [
      action,
      { coverage_status: unsupported.includes(action) ? 'UNSUPPORTED' : 'SUPPORTED', enabled: true },
    ]),
  );

/** One seeded integration: a tool, a customer, one job with its four stages, nobody applied yet. */
export type IntegrationSeed = {
  id: string;
  tool: string;
  toolLabel: string;
  organization: string;
  jobName: string;
  writeActions: Record<string, WriteActionState>;
};
/** Two tools of different capabilities: Personio writes everything, Recruitee takes no notes. */
export const DEFAULT_INTEGRATIONS: IntegrationSeed[] = [
  {
    ...{ id: 'personio:acme-unified', tool: 'personio', toolLabel: 'Personio', organization: 'Acme' },
    ...{ jobName: 'Backend Engineer', writeActions: supported() },
  },
  {
    ...{ id: 'recruitee:globex-unified', tool: 'recruitee', toolLabel: 'Recruitee', organization: 'Globex' },
    ...{ jobName: 'Product Designer', writeActions: supported(KOMBO_WRITE_ACTIONS.addNote) },
  },
];

export function seedIntegration(seed: IntegrationSeed): UnifiedIntegration {
  const at = new Date().toISOString();
  const records = (): Records => ({ candidates: new Map(), applications: new Map() });
  return {
    ...{ id: seed.id, tool: seed.tool, toolLabel: seed.toolLabel, organization: seed.organization, createdAt: at },
    ...{
      jobs: [job(seed.jobName, at)],
      ats: records(),
      synced: records(),
      writeActions: structuredClone(seed.writeActions),
    },
    ...{ notes: [], moves: [], attachments: [], tagNames: new Map(), inFlight: 0, peakInFlight: 0 },
  };
}

export const stageOf = (integration: UnifiedIntegration, jobId: string, stageId: string) =>
  integration.jobs.find((j) => j.id === jobId)?.stages.find((s) => s.id === stageId);

const stageJson = (stage: UnifiedStage | undefined) => stage && { ...stage, status: 'ACTIVE', custom_fields: {} };
const url = (integration: UnifiedIntegration, path: string) => `https://${integration.tool}.example.test/${path}`;
const tagsJson = (tags: UnifiedTag[]) => tags.map(({ id, remote_id, name }) => ({ id, remote_id, name }));
const emailsJson = (candidate: UnifiedCandidate) => [{ email_address: candidate.email, type: 'PERSONAL' }];

/** An application as `GET /ats/applications` lists it, with its candidate, current stage and job nested. */
export function applicationJson(integration: UnifiedIntegration, application: UnifiedApplication) {
  const candidate = integration.synced.candidates.get(application.candidate_id);
  const job = integration.jobs.find((j) => j.id === application.job_id);
  const { id, remote_id, outcome, rejection_reason_name, rejected_at, current_stage_id, job_id } = application;
  return {
    ...{ id, remote_id, outcome, rejection_reason_name, rejected_at, current_stage_id, job_id },
    ...{ candidate_id: application.candidate_id, screening_question_answers: [], custom_fields: {} },
    ...{ remote_url: url(integration, `applications/${remote_id}`), changed_at: application.changedAt },
    ...{ remote_deleted_at: application.deletedAt, remote_created_at: application.createdAt },
    remote_updated_at: application.remoteUpdatedAt,
    candidate: candidate && {
      ...{ id: candidate.id, remote_id: candidate.remote_id, first_name: candidate.first_name },
      ...{ last_name: candidate.last_name, email_addresses: emailsJson(candidate), phone_numbers: [] },
      ...{ social_media: [], source: null, remote_url: url(integration, `candidates/${candidate.remote_id}`) },
      tags: tagsJson(candidate.tags),
    },
    current_stage: stageJson(stageOf(integration, job_id, current_stage_id)) ?? null,
    job: job ? { id: job.id, remote_id: job.remote_id, name: job.name } : null,
    ...{ interviews: [], offers: [] },
  };
}

/** A candidate as `GET /ats/candidates` lists it, with their applications in short. */
export function candidateJson(integration: UnifiedIntegration, candidate: UnifiedCandidate) {
  const applications = [...integration.synced.applications.values()].filter((a) => a.candidate_id === candidate.id);
  return {
    ...{ id: candidate.id, remote_id: candidate.remote_id, first_name: candidate.first_name },
    ...{ last_name: candidate.last_name, company: null, title: null, confidential: false, source: null },
    ...{ phone_numbers: [], email_addresses: emailsJson(candidate), social_media: [], location: null },
    ...{ custom_fields: {}, remote_url: url(integration, `candidates/${candidate.remote_id}`) },
    ...{ remote_created_at: candidate.createdAt, remote_updated_at: candidate.changedAt },
    ...{ changed_at: candidate.changedAt, remote_deleted_at: candidate.deletedAt, tags: tagsJson(candidate.tags) },
    applications: applications.map((a) => {
      const stage = stageOf(integration, a.job_id, a.current_stage_id);
      const job = integration.jobs.find((j) => j.id === a.job_id);
      return {
        ...{ id: a.id, remote_id: a.remote_id, outcome: a.outcome, rejection_reason_name: a.rejection_reason_name },
        ...{ rejected_at: a.rejected_at, remote_url: url(integration, `applications/${a.remote_id}`) },
        ...{ changed_at: a.changedAt, remote_created_at: a.createdAt, remote_updated_at: a.remoteUpdatedAt },
        current_stage: stage
          ? { id: stage.id, name: stage.name, remote_id: stage.remote_id, index: stage.index }
          : null,
        job: job ? { id: job.id, name: job.name, remote_id: job.remote_id } : null,
      };
    }),
  };
}

/** A job as `GET /ats/jobs` lists it: open, public, with its stages in order. */
export function jobJson(integration: UnifiedIntegration, job: UnifiedJob) {
  return {
    ...{ id: job.id, remote_id: job.remote_id, name: job.name, job_code: null, description: null },
    ...{ confidential: false, weekly_hours: null, employment_type: 'FULL_TIME', status: 'OPEN' },
    ...{ visibility: 'PUBLIC', category: null, department: null, post_url: null, experience_level: null },
    ...{ remote_work_status: null, salary_amount: null, salary_amount_from: null, salary_amount_to: null },
    ...{ salary_currency: null, salary_period: null, location: null, custom_fields: {} },
    ...{ remote_url: url(integration, `jobs/${job.remote_id}`), opened_at: job.createdAt, closed_at: null },
    ...{ remote_created_at: job.createdAt, remote_updated_at: job.createdAt, contact_id: null },
    ...{ changed_at: job.createdAt, remote_deleted_at: null },
    stages: job.stages.map(stageJson),
    ...{ screening_questions: [], job_postings: [], hiring_team: [] },
  };
}

const ACTION_LABELS: Record<string, string> = {
  [KOMBO_WRITE_ACTIONS.moveStage]: 'Move application to stage',
  [KOMBO_WRITE_ACTIONS.addNote]: 'Add note to application',
  [KOMBO_WRITE_ACTIONS.addTag]: 'Add tag to candidate',
  [KOMBO_WRITE_ACTIONS.removeTag]: 'Remove tag from candidate',
  [KOMBO_WRITE_ACTIONS.addAttachment]: 'Add attachment to application',
};
const READ_MODELS = ['ats_jobs', 'ats_candidates', 'ats_applications', 'ats_application_stages', 'ats_tags'];

/** `GET /integrations/{integration_id}`: the tool, its health, and each write action's coverage. */
export function integrationJson(integration: UnifiedIntegration) {
  const model = (id: string) => ({
    ...{ id, label: id, is_available: true, coverage_status: 'SUPPORTED' },
    ...{ scope_config_setting: 'ENABLED', opted_out_by_customer: false, fields: [] },
  });
  return {
    ...{ id: integration.id, category: 'ATS', status: 'ACTIVE', setup_status: 'COMPLETED' },
    tool: {
      ...{ id: integration.tool, label: integration.toolLabel, internal_label: null },
      ...{ logo_url: url(integration, 'logo.svg'), icon_url: url(integration, 'icon.svg') },
    },
    end_user: { organization_name: integration.organization, creator_email: null, origin_id: null },
    ...{ scope_config: { id: 'sandbox-scope', name: 'Interview connector' }, data_expired_at: null },
    ...{ created_at: integration.createdAt, beta: false, read_models: READ_MODELS.map(model) },
    write_actions: Object.entries(integration.writeActions).map(([id, state]) => ({
      ...{ id, label: ACTION_LABELS[id] ?? id, is_available: writeRefusal(state) === undefined },
      ...{ coverage_status: state.coverage_status, scope_config_setting: state.enabled ? 'ENABLED' : 'DISABLED' },
      ...{ opted_out_by_customer: false, fields: [] },
    })),
  };
}
