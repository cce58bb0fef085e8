import type * as v from 'valibot';
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

type CandidateRead = v.InferOutput<typeof candidateSchema>;
/**
 * How long an invocation's candidate read serves its tags: about three of Workable's paced calls (one a second), as
 * near as the read before a write used to be, so a tag a recruiter adds meanwhile is hardly ever put over.
 */
const RECENT_READ_MS = 3_000;

/** The SPI v3 reads every part of the Workable adapter shares: a list's pages, one candidate, a job's stages. */
export class WorkableReads {
  /** Workable's lists page by the whole URL in the body's `paging.next` (its profile's paging). */
  public readonly pager: Pager;
  /** Per job: the stages as `{slug, name, kind}`, read once per warm function. */
  public readonly jobStages = new Map<string, WorkableJobStage[]>();
  /** Each invocation's candidate reads, by candidate id (readCandidate). */
  private readonly recentReads = new WeakMap<AbortSignal, Map<string, { read: CandidateRead; at: number }>>();

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

  /**
   * `GET /spi/v3/candidates/{id}`: the candidate's stage by name, whether they were disqualified or hired, and their
   * tags. With `reuse`, a read this invocation (its `signal`) made within RECENT_READ_MS serves instead: the look
   * before an exit's status, the move's own read before the status after it, kept current by this adapter's own
   * writes (`wrote`).
   */
  public async readCandidate(target: ApplicationRef, signal?: AbortSignal, reuse = false): Promise<CandidateRead> {
    const reads = signal && this.recentReads.get(signal);
    const recent = reads?.get(target.atsCandidateId);
    if (reuse && recent && Date.now() - recent.at <= RECENT_READ_MS) return structuredClone(recent.read);
    const read = await this.http.request(
      { method: 'GET', path: `/spi/v3/candidates/${encodeURIComponent(target.atsCandidateId)}`, signal },
      candidateSchema,
    );
    if (signal) {
      const held = reads || new Map<string, { read: CandidateRead; at: number }>();
      held.set(target.atsCandidateId, { read: structuredClone(read), at: Date.now() });
      this.recentReads.set(signal, held);
    }
    return read;
  }

  /** A write this adapter made to the candidate: the invocation's read shows it (a move's stage, the tags put). */
  public wrote(target: ApplicationRef, change: Partial<CandidateRead['candidate']>, signal?: AbortSignal): void {
    const recent = signal && this.recentReads.get(signal)?.get(target.atsCandidateId);
    if (recent) Object.assign(recent.read.candidate, change);
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
