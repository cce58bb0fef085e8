import * as v from 'valibot';
import type { SetupPart } from '../adapter-base';
import type { AtsHttpClient } from '../ats-http';
import { AtsError, ATS_ERROR_CODES } from '../errors';
import { firstItems } from '../lists';
import type { RegisteredWebhook, SetupMethod } from '../port';
import type { AshbyReads } from './ashby.reads';
import {
  candidateStageChangeSchema,
  interviewStagesSchema,
  jobInfoSchema,
  jobListSchema,
  jobSchema,
  rpcEnvelopeSchema,
  webhookInfoSchema,
} from './ashby.schemas';
import { AshbyAdapter } from './ashby.adapter';

/** What the doctor needs of Ashby: the API key's probes, jobs and stages, one application, and the webhooks. */
export class AshbySetup implements SetupPart {
  public constructor(
    private readonly http: AtsHttpClient,
    private readonly reads: AshbyReads,
  ) {}

  public readonly probeAccess: SetupMethod<'probeAccess'> = async (signal) => {
    await this.reads.rpc('/job.list', { limit: 1 }, jobListSchema, signal);
    return 'POST /job.list';
  };

  /** Ashby writes a note as the API key's own user: there is no configured user to check. */
  public readonly probeUser: SetupMethod<'probeUser'> = () => {
    return Promise.resolve({
      ok: false as const,
      checkable: false,
      reason: "Ashby writes notes as the API key's own user (atsUserId is not used)",
    });
  };

  /**
   * Ashby's API key permissions (ats-facts, Corrections 2026-11b; Ashby OpenAPI): reads probed with one item of
   * `job.list` and `candidateTag.list`; writes and the webhook permission (`apiKeysWrite`) have no harmless probe.
   */
  public readonly requiredPermissions: SetupMethod<'requiredPermissions'> = (features) => {
    const read = (path: string, body: unknown) => (signal?: AbortSignal) =>
      this.reads.rpc(path, body, v.unknown(), signal);
    return [
      { permission: 'jobsRead', feature: 'interview names and the sweep', probe: read('/job.list', { limit: 1 }) },
      { permission: 'candidatesRead', feature: 'stage changes and the sweep' },
      {
        permission: 'candidatesWrite',
        feature: [
          'the invite and report notes, stage moves, status tags',
          ...(features.reportFile ? ['the report file'] : []),
        ].join(', '),
      },
      { permission: 'interviewsRead', feature: 'stages by name' },
      { permission: 'apiKeysWrite', feature: 'webhook registration (npm run doctor -- --register-webhooks)' },
      ...(features.statusTags
        ? [
            {
              permission: 'hiringProcessMetadataRead',
              feature: 'status tags',
              probe: read('/candidateTag.list', { limit: 1 }),
            },
            { permission: 'hiringProcessMetadataWrite', feature: 'status tags (a missing tag created)' },
          ]
        : []),
    ];
  };

  /**
   * The open jobs, up to `limit`: `job.list {status: ["Open"]}` by `nextCursor` while `moreDataAvailable` (job.list
   * returns open, closed and archived jobs otherwise: ats-facts, Corrections 2026-11b).
   */
  public readonly listJobs: SetupMethod<'listJobs'> = async (limit, signal) => {
    const first = { status: ['Open'], limit: Math.min(100, Math.max(1, limit)) };
    return firstItems(
      this.reads.pager.pages(this.reads.list('/job.list', first, signal), jobSchema),
      limit,
      (j) => ({ id: j.id, name: j.title ?? j.id }),
      'open jobs',
    );
  };

  /** A job's stages are those of its interview plan (`job.info`, then `interviewStage.list`). */
  public readonly listStages: SetupMethod<'listStages'> = async (jobId, signal) => {
    if (jobId === undefined) return [];
    const job = (await this.reads.rpc('/job.info', { id: jobId }, jobInfoSchema, signal)).results;
    const planId = job.defaultInterviewPlanId ?? job.interviewPlanIds[0];
    if (!planId) return [];
    const body = { interviewPlanId: planId };
    const stages = await this.reads.rpc('/interviewStage.list', body, interviewStagesSchema, signal);
    return stages.results.map((s) => ({ id: s.id, name: s.title }));
  };

  public readonly readApplication: SetupMethod<'readApplication'> = async (applicationId, signal) => {
    const { application } = v.parse(candidateStageChangeSchema, {
      application: (await this.reads.rpc('/application.info', { applicationId }, rpcEnvelopeSchema, signal)).results,
    });
    return {
      atsApplicationId: application.id,
      atsCandidateId: application.candidate.id,
      atsJobId: application.job.id,
      jobName: application.job.title ?? undefined,
      stage: { id: application.currentInterviewStage.id, name: application.currentInterviewStage.title ?? undefined },
      hasEmail: Boolean(application.candidate.primaryEmailAddress?.value),
    };
  };

  /**
   * Ashby has no `webhook.list` (ats-facts §3): each webhook the connector registered is read by the id recorded
   * then (`webhook.info`). One Ashby no longer has is left out.
   */
  public readonly listWebhooks: SetupMethod<'listWebhooks'> = async (knownIds, signal) => {
    const found: RegisteredWebhook[] = [];
    for (const webhookId of new Set(Object.values(knownIds))) {
      try {
        const info = (await this.reads.rpc('/webhook.info', { webhookId }, webhookInfoSchema, signal)).results;
        found.push({ id: info.id, event: info.webhookType, url: info.requestUrl, enabled: info.enabled ?? undefined });
      } catch (error) {
        if (!(error instanceof AtsError) || error.retryable) throw error;
      }
    }
    return found;
  };

  /** `webhook.create {webhookType, requestUrl, secretToken}`: Ashby signs with the secret the connector chose. */
  public readonly createWebhook: SetupMethod<'createWebhook'> = async (input, signal) => {
    const created = await this.http.write(
      {
        method: 'POST',
        path: '/webhook.create',
        body: { webhookType: input.event, requestUrl: input.url, secretToken: input.secret },
        signal,
      },
      webhookInfoSchema,
    );
    if (!created)
      throw new AtsError(
        ATS_ERROR_CODES.malformedResponse,
        `Ashby created the ${input.event} webhook but its answer has no id: find it in Admin > Integrations > Webhooks`,
      );
    return { id: created.results.id };
  };
}

/** The Ashby adapter with the doctor's part (../setup-adapter.ts). */
export class AshbySetupAdapter extends AshbyAdapter {
  public readonly setup = new AshbySetup(this.http, this.reads);
}
