import type { Connection } from '../../config';
import type { SetupPart } from '../adapter-base';
import type { SetupMethod } from '../port';
import { KomboAdapter } from './kombo.adapter';
import type { KomboCapabilities } from './kombo.capabilities';
import type { KomboReads } from './kombo.reads';

/**
 * The doctor's part of the Kombo adapter: the integration read as the credentials' probe, the scopes Kombo's scope
 * config must enable (none of them checkable by a read: the capability table says what the customer's ATS supports,
 * not what the scope config enables), the jobs and their stages, and one application read.
 */
export class KomboSetup implements SetupPart {
  public constructor(
    private readonly reads: KomboReads,
    private readonly capabilities: KomboCapabilities,
    private readonly connection: Connection,
  ) {}

  public readonly requiredPermissions: SetupMethod<'requiredPermissions'> = (features) => [
    { permission: 'Read applications, candidates and jobs', feature: 'stage entries and invitations' },
    { permission: 'Add notes', feature: 'the invite and report notes' },
    { permission: 'Set application stage', feature: 'the advance rule' },
    ...(features.statusTags ? [{ permission: 'Manage tags', feature: 'the status tags' }] : []),
    ...(features.reportFile
      ? [
          { permission: 'Add attachments', feature: 'the report file' },
          // A retry whose upload's answer was lost looks for the file first (GET …/attachments).
          { permission: 'Read document attachments', feature: 'the report file, attached once' },
        ]
      : []),
  ];

  /** `GET /integrations/{integration_id}`: the key works, the integration is this account's, and its state. */
  public readonly probeAccess: SetupMethod<'probeAccess'> = async (signal) => {
    const capabilities = await this.capabilities.read(signal);
    return `GET /integrations/${this.connection.atsIntegrationId}: ${capabilities.tool}, ${capabilities.state}`;
  };

  public readonly probeUser: SetupMethod<'probeUser'> = async () => ({
    ok: false,
    reason: 'Kombo writes as its integration: there is no user to check',
    checkable: false,
  });

  public readonly listJobs: SetupMethod<'listJobs'> = (limit, signal) => this.reads.jobs(limit, signal);

  public readonly listStages: SetupMethod<'listStages'> = async (jobId, signal) =>
    jobId ? this.reads.stagesOf(jobId, signal) : [];

  public readonly readApplication: SetupMethod<'readApplication'> = async (id, signal) => {
    const application = await this.reads.application(id, signal);
    const candidate = application.candidate_id ? await this.reads.candidate(application.candidate_id, signal) : {};
    return {
      atsApplicationId: application.id,
      atsCandidateId: application.candidate_id ?? '',
      atsJobId: application.job_id ?? '',
      stage: {
        ...(application.current_stage_id ? { id: application.current_stage_id } : {}),
        ...(application.current_stage?.name ? { name: application.current_stage.name } : {}),
      },
      hasEmail: Boolean(candidate.email),
    };
  };
}

/** The Kombo adapter with the doctor's part (../setup-adapter.ts). */
export class KomboSetupAdapter extends KomboAdapter {
  public readonly setup = new KomboSetup(this.reads, this.capabilities, this.options.connection);
}
