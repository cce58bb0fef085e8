import type { Connection } from '../../config';
import type { AtsHttpClient } from '../ats-http';
import type { AtsApplicationView, RequiredPermission } from '../port';
import type { KomboCapabilities } from './kombo.capabilities';
import type { KomboReads } from './kombo.reads';

/**
 * The doctor's part of the Kombo adapter: the integration read as the credentials' probe, the scopes Kombo's scope
 * config must enable (none of them checkable by a read: the capability table says what the customer's ATS supports,
 * not what the scope config enables), and one application read.
 */
export class KomboSetup {
  public constructor(
    private readonly http: AtsHttpClient,
    private readonly reads: KomboReads,
    private readonly capabilities: KomboCapabilities,
    private readonly connection: Connection,
  ) {}

  public requiredPermissions(features: { statusTags: boolean; reportFile?: boolean }): RequiredPermission[] {
    return [
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
  }

  /** `GET /integrations/{integration_id}`: the key works, the integration is this account's, and its state. */
  public async probeAccess(signal?: AbortSignal): Promise<string> {
    const capabilities = await this.capabilities.read(signal);
    return `GET /integrations/${this.connection.atsIntegrationId}: ${capabilities.tool}, ${capabilities.state}`;
  }

  public async readApplication(id: string, signal?: AbortSignal): Promise<AtsApplicationView> {
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
  }

  public get client(): AtsHttpClient {
    return this.http;
  }
}
