import * as v from 'valibot';
import type { Connection, ConnectionSecrets } from '../../config';
import type { SetupPart } from '../adapter-base';
import type { AtsHttpClient } from '../ats-http';
import { searchPages, validItems } from '../lists';
import type { RegisteredWebhook, SetupMethod } from '../port';
import type { WorkableReads } from './workable.reads';
import {
  candidateViewSchema,
  jobsSchema,
  memberSchema,
  subscriptionCreatedSchema,
  subscriptionSchema,
  subscriptionsSchema,
} from './workable.schemas';
import { WorkableAdapter } from './workable.adapter';

/** What the doctor needs of Workable: the token's probes, the member writes are made as, and the subscriptions. */
export class WorkableSetup implements SetupPart {
  private readonly connection: Connection;
  private readonly secrets: ConnectionSecrets;

  public constructor(
    private readonly http: AtsHttpClient,
    private readonly reads: WorkableReads,
    options: { connection: Connection; secrets: ConnectionSecrets },
  ) {
    this.connection = options.connection;
    this.secrets = options.secrets;
  }

  /**
   * Workable token scopes (reference: /docs/tag-candidate, webhook-subscriptions): `r_jobs` and `r_candidates`
   * probed with one item of each list; `w_candidates` (comments, moves, tags) has no harmless probe.
   */
  public readonly requiredPermissions: SetupMethod<'requiredPermissions'> = (features) => {
    const read = (path: string) => (signal?: AbortSignal) =>
      this.http.request({ method: 'GET', path, signal }, v.unknown());
    return [
      { permission: 'r_jobs', feature: 'jobs, stages and the sweep', probe: read('/spi/v3/jobs?limit=1') },
      {
        permission: 'r_candidates',
        feature: 'stage changes, the sweep and webhook subscriptions',
        probe: read('/spi/v3/candidates?limit=1'),
      },
      {
        permission: 'w_candidates',
        feature: [
          features.statusTags ? 'the invite and report comments, moves, status tags' : 'comments and moves',
          ...(features.reportFile ? ['the report file (a comment with an attachment)'] : []),
        ].join(', '),
      },
    ];
  };

  public readonly probeAccess: SetupMethod<'probeAccess'> = async (signal) => {
    await this.http.request({ method: 'GET', path: '/spi/v3/jobs?limit=1', signal }, jobsSchema);
    return 'GET /spi/v3/jobs';
  };

  /**
   * `GET /members?status=all`, every page by `paging.next` (the list is 50 active members a page by default:
   * reference: members): comments and moves are made as `member_id`, who must be an active member.
   */
  public readonly probeUser: SetupMethod<'probeUser'> = async (signal) => {
    const member = await searchPages(
      this.reads.pager.pages(this.reads.list('/spi/v3/members?status=all&limit=100', 'members', signal), memberSchema),
      (page) => page.find((m) => m.id === this.connection.atsUserId),
      'members',
    );
    if (!member)
      return { ok: false as const, reason: `Workable has no member ${this.connection.atsUserId}`, checkable: true };
    if (member.active === false)
      return { ok: false as const, reason: `member ${this.connection.atsUserId} is not active`, checkable: true };
    return { ok: true as const, what: `Workable member ${this.connection.atsUserId}` };
  };

  /** The account's published jobs, up to `limit` (workable.reads.ts). */
  public readonly listJobs: SetupMethod<'listJobs'> = (limit, signal) => this.reads.publishedJobs(limit, signal);

  /** A stage's id is its slug (what a move takes); its name is what the UI and the webhooks show. */
  public readonly listStages: SetupMethod<'listStages'> = async (jobId, signal) => {
    if (jobId === undefined) return [];
    return (await this.reads.stagesOf(jobId, signal)).map((s) => ({ id: s.slug, name: s.name }));
  };

  public readonly readApplication: SetupMethod<'readApplication'> = async (applicationId, signal) => {
    const { candidate } = await this.http.request(
      { method: 'GET', path: `/spi/v3/candidates/${encodeURIComponent(applicationId)}`, signal },
      candidateViewSchema,
    );
    const stages = await this.reads.stagesOf(candidate.job.shortcode, signal);
    const slug = stages.find((s) => s.name === candidate.stage)?.slug;
    return {
      atsApplicationId: candidate.id,
      atsCandidateId: candidate.id,
      atsJobId: candidate.job.shortcode,
      jobName: candidate.job.title ?? undefined,
      stage: { id: slug, name: candidate.stage },
      hasEmail: Boolean(candidate.email),
    };
  };

  public readonly listWebhooks: SetupMethod<'listWebhooks'> = async (_knownIds, signal) => {
    const list = await this.http.request({ method: 'GET', path: '/spi/v3/subscriptions', signal }, subscriptionsSchema);
    return validItems(list.subscriptions, subscriptionSchema).map(
      (s): RegisteredWebhook => ({
        id: String(s.id),
        event: s.event,
        url: s.target,
        enabled: s.status ? s.status === 'active' : undefined,
      }),
    );
  };

  /**
   * `POST /subscriptions {target, event}` (no `args`: every job and stage). Workable signs its deliveries with the
   * account's API token (reference: webhooks), so that token becomes the connection's webhook secret.
   */
  public readonly createWebhook: SetupMethod<'createWebhook'> = async (input, signal) => {
    const created = await this.http.write(
      { method: 'POST', path: '/spi/v3/subscriptions', body: { target: input.url, event: input.event }, signal },
      subscriptionCreatedSchema,
    );
    return { id: created ? String(created.id) : '?', issuedSecret: this.secrets.atsApiKey };
  };
}

/** The Workable adapter with the doctor's part (../setup-adapter.ts). */
export class WorkableSetupAdapter extends WorkableAdapter {
  public readonly setup = new WorkableSetup(this.http, this.reads, {
    connection: this.connection,
    secrets: this.secrets,
  });
}
