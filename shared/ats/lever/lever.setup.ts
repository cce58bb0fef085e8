import * as v from 'valibot';
import type { Connection } from '../../config';
import { errorCode } from '../../errors';
import type { SetupPart } from '../adapter-base';
import type { AtsHttpClient } from '../ats-http';
import { AtsError, ATS_ERROR_CODES } from '../errors';
import { searchPages } from '../lists';
import type { RegisteredWebhook, SetupMethod } from '../port';
import { type LeverReads, postedApplicationOf, stageIdOf } from './lever.reads';
import { opportunityListSchema, userSchema, webhookCreatedSchema, webhookSchema } from './lever.schemas';
import { LeverAdapter } from './lever.adapter';

/** What the doctor needs of Lever: the key's probes, the user writes are made as, the stages, and the webhooks. */
export class LeverSetup implements SetupPart {
  public constructor(
    private readonly http: AtsHttpClient,
    private readonly reads: LeverReads,
    private readonly connection: Connection,
  ) {}

  public readonly probeAccess: SetupMethod<'probeAccess'> = async (signal) => {
    await this.http.request({ method: 'GET', path: '/v1/opportunities?limit=1', signal }, opportunityListSchema);
    return 'GET /v1/opportunities';
  };

  /** `GET /v1/users/{id}`: notes and moves are made `perform_as` this user, who must exist and be active. */
  public readonly probeUser: SetupMethod<'probeUser'> = async (signal) => {
    try {
      const user = await this.http.request(
        { method: 'GET', path: `/v1/users/${encodeURIComponent(this.connection.atsUserId)}`, signal },
        userSchema,
      );
      if (user.data.deactivatedAt)
        return {
          ok: false as const,
          reason: `Lever user ${this.connection.atsUserId} is deactivated`,
          checkable: true,
        };
      return {
        ok: true as const,
        what: `Lever user ${this.connection.atsUserId} (${user.data.accessRole ?? 'role ?'})`,
      };
    } catch (error) {
      if (errorCode(error) !== ATS_ERROR_CODES.notFound) throw error;
      return { ok: false as const, reason: `Lever has no user ${this.connection.atsUserId}`, checkable: true };
    }
  };

  /**
   * Lever keys are granted per endpoint family when issued: reads probed with one item of each list; writes and
   * `webhooks:write` have no harmless probe.
   */
  public readonly requiredPermissions: SetupMethod<'requiredPermissions'> = (features) => {
    const read = (path: string) => (signal?: AbortSignal) =>
      this.http.request({ method: 'GET', path, signal }, v.unknown());
    return [
      {
        permission: 'opportunities:read',
        feature: 'stage changes and the sweep',
        probe: read('/v1/opportunities?limit=1'),
      },
      { permission: 'stages:read', feature: 'stages by name', probe: read('/v1/stages') },
      { permission: 'notes:write', feature: 'the invite and report notes' },
      { permission: 'opportunities:write', feature: 'stage moves, the report link' },
      { permission: 'webhooks:read', feature: 'the webhook check', probe: read('/v1/webhooks') },
      { permission: 'webhooks:write', feature: 'webhook registration (npm run doctor -- --register-webhooks)' },
      ...(features.statusTags ? [{ permission: 'tags:write', feature: 'status tags' }] : []),
      // Uploading is the only way to see it: no harmless probe (Lever's usecases: files:write:admin).
      ...(features.reportFile
        ? [{ permission: 'files:write', feature: 'the report file (writeBack.attachReport)' }]
        : []),
    ];
  };

  public readonly listJobs: SetupMethod<'listJobs'> = () => {
    return Promise.resolve([]);
  };

  /** Lever's stages are global: there is no job to check them for. */
  public readonly listStages: SetupMethod<'listStages'> = async (_jobId, signal) => {
    return [...(await this.reads.stages(signal))].map(([id, name]) => ({ id, name }));
  };

  public readonly readApplication: SetupMethod<'readApplication'> = async (applicationId, signal) => {
    const opportunity = await this.reads.readOpportunity(applicationId, 'applications', signal);
    const stageId = stageIdOf(opportunity.stage);
    const posting = postedApplicationOf(opportunity);
    return {
      atsApplicationId: applicationId,
      atsCandidateId: opportunity.contact ?? applicationId,
      atsJobId: posting?.posting ?? '',
      stage: { id: stageId, name: (await this.reads.stages(signal)).get(stageId) },
      hasEmail: opportunity.emails.length > 0,
    };
  };

  /** `GET /v1/webhooks` (help.lever.co 4402565460237): every page. */
  public readonly listWebhooks: SetupMethod<'listWebhooks'> = async (_knownIds, signal) => {
    const found: RegisteredWebhook[] = [];
    await searchPages(
      this.reads.pager.pages(this.reads.list('/v1/webhooks?limit=100', signal), webhookSchema),
      (page) =>
        void found.push(
          ...page.map((w) => ({ id: w.id, event: w.event, url: w.url, enabled: w.enabled ?? undefined })),
        ),
      'webhooks',
    );
    return found;
  };

  /** `POST /v1/webhooks {event, url}` → 201 with the webhook's own `configuration.signatureToken`. */
  public readonly createWebhook: SetupMethod<'createWebhook'> = async (input, signal) => {
    const created = await this.http.write(
      { method: 'POST', path: '/v1/webhooks', body: { event: input.event, url: input.url }, signal },
      webhookCreatedSchema,
    );
    if (!created)
      throw new AtsError(
        ATS_ERROR_CODES.malformedResponse,
        `Lever created the ${input.event} webhook but its answer has no signature token: copy it from Settings`,
      );
    return { id: created.data.id, issuedSecret: created.data.configuration.signatureToken };
  };
}

/** The Lever adapter with the doctor's part (../setup-adapter.ts). */
export class LeverSetupAdapter extends LeverAdapter {
  public readonly setup = new LeverSetup(this.http, this.reads, this.connection);
}
