import type { StageMatcher } from '../../config';
import { stageIdForJob } from '../../config';
import type { AtsHttpClient } from '../ats-http';
import { AtsError, ATS_ERROR_CODES } from '../errors';
import { firstItems, searchPages, validItems } from '../lists';
import { Pager, type PagedList } from '../paging';
import type { ApplicationRef, AtsJob } from '../port';
import { activitySchema, candidateSchema, jobSchema, jobStageSchema, jobStagesSchema } from './workable.schemas';
import type { WorkableJobStage } from './workable.standing';
import { workableProfile } from './profile';

/** The SPI v3 reads every part of the Workable adapter shares: a list's pages, one candidate, a job's stages. */
export class WorkableReads {
  /** Workable's lists page by the whole URL in the body's `paging.next` (its profile's paging). */
  public readonly pager: Pager;
  /** Per job: the stages as `{slug, name, kind}`, read once per warm function. */
  public readonly jobStages = new Map<string, WorkableJobStage[]>();

  public constructor(private readonly http: AtsHttpClient) {
    this.pager = new Pager(http, workableProfile.paging.style);
  }

  /** A list whose first page is `path`, its items in the body's field `items` (`jobs`, `members`, ...). */
  /**
   * The id of the candidate's first comment whose body holds `text`: Workable has no comment list, so comments are
   * the candidate's activities with `action: "comment"` (reference: candidate-activities), every page by `paging.next`.
   */
  public commentWith(first: string, text: string, signal?: AbortSignal): Promise<string | undefined> {
    return searchPages(
      this.pager.pages(this.list(first, 'activities', signal), activitySchema),
      (activities) => {
        const found = activities.find((a) => a.action === 'comment' && a.body?.includes(text));
        return found ? String(found.id) : undefined;
      },
      `comments at ${first.split('?')[0]}`,
    );
  }

  public list(path: string, items: string, signal?: AbortSignal): PagedList {
    return { first: { method: 'GET', path, signal }, items };
  }

  /**
   * The account's published jobs, up to `limit`: `GET /jobs?state=published&limit=100`, each page by its
   * `paging.next`. Workable lists jobs oldest first in every state unless `state` says (reference: jobs; ats-facts,
   * Corrections 2026-11b), so a first page alone would miss the newest open ones.
   */
  public publishedJobs(limit: number, signal?: AbortSignal): Promise<AtsJob[]> {
    const first = `/spi/v3/jobs?state=published&limit=${Math.min(100, Math.max(1, limit))}`;
    return firstItems(
      this.pager.pages(this.list(first, 'jobs', signal), jobSchema),
      limit,
      (j) => ({ id: j.shortcode, name: j.title ?? j.shortcode }),
      'published jobs',
    );
  }

  /** A configured stage (slug per job, slug, or name) as both the slug and the name of the job's stage. */
  public async resolveStage(
    stage: StageMatcher,
    shortcode: string,
    signal?: AbortSignal,
  ): Promise<{ slug: string; name: string }> {
    const slug = stageIdForJob(stage, shortcode) ?? stage.id;
    const stages = await this.stagesOf(shortcode, signal);
    const found = stages.find((s) => (slug === undefined ? s.name === stage.name : s.slug === slug));
    if (!found)
      throw new AtsError(
        ATS_ERROR_CODES.invalidRequest,
        `job ${shortcode} has no stage ${slug === undefined ? `named "${stage.name}"` : `with slug ${slug}`}`,
      );
    return found;
  }

  /** `GET /spi/v3/candidates/{id}`: the candidate's stage by name, and whether they were disqualified or hired. */
  public readCandidate(target: ApplicationRef, signal?: AbortSignal) {
    return this.http.request(
      { method: 'GET', path: `/spi/v3/candidates/${encodeURIComponent(target.atsCandidateId)}`, signal },
      candidateSchema,
    );
  }

  public async stagesOf(shortcode: string, signal?: AbortSignal): Promise<WorkableJobStage[]> {
    const cached = this.jobStages.get(shortcode);
    if (cached) return cached;
    const list = await this.http.request(
      { method: 'GET', path: `/spi/v3/jobs/${encodeURIComponent(shortcode)}/stages`, signal },
      jobStagesSchema,
    );
    const stages = validItems(list.stages, jobStageSchema);
    this.jobStages.set(shortcode, stages);
    return stages;
  }
}
