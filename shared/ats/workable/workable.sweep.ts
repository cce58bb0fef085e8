import { AtsError, ATS_ERROR_CODES } from '../errors';
import { readCursor, validItems, writeCursor } from '../lists';
import { type AtsJob, type AtsMethod, type StageEnteredEvent, sweepDeliveryId } from '../port';
import type { WorkableReads } from './workable.reads';
import { listedCandidateSchema } from './workable.schemas';

/** "All jobs" in a sweep: every published job, up to 20 pages of 100 (the lists' page cap). */
const MAX_SWEPT_JOBS = 2_000;

/** The sweep's look at a trigger's stage on Workable, job by job. */
export class WorkableSweep {
  private sweepJobs: Promise<AtsJob[]> | undefined;

  public constructor(private readonly reads: WorkableReads) {}

  /**
   * `GET /candidates?shortcode=<job>&stage=<slug>&limit=100` (reference: job-candidates-index), job by job (a
   * trigger's jobs, or every published job for "all"), each list by its `paging.next`. A job without the stage is
   * skipped; disqualified candidates are left out.
   */
  public readonly listApplicationsInStage: AtsMethod<'listApplicationsInStage'> = async (query, cursor, signal) => {
    const position = readCursor(cursor, { job: 0, next: '' });
    // The job's title names its interview, as the webhook's `job.title` does. Read at the start of each pass (a job
    // published since is swept), and kept while the pass goes on, so its place in the list holds.
    if (!cursor) this.sweepJobs = undefined;
    this.sweepJobs ??= this.reads.publishedJobs(MAX_SWEPT_JOBS, signal).catch((error: unknown) => {
      this.sweepJobs = undefined;
      throw error;
    });
    const listed = await this.sweepJobs;
    const jobs = query.jobs === 'all' ? listed.map((j) => j.id) : [...query.jobs];
    const shortcode = jobs[position.job];
    const events: StageEnteredEvent[] = [];
    let pageNext: string | undefined;
    if (shortcode !== undefined) {
      const stage = await this.reads.resolveStage(query.stage, shortcode, signal).catch((error: unknown) => {
        if (error instanceof AtsError && error.code === ATS_ERROR_CODES.invalidRequest) return undefined;
        throw error;
      });
      if (stage) {
        const first = `/spi/v3/candidates?${new URLSearchParams({ shortcode, stage: stage.slug, limit: '100' })}`;
        const page = await this.reads.pager.page(this.reads.list(first, 'candidates', signal), position.next);
        pageNext = page.next;
        for (const candidate of validItems(page.items, listedCandidateSchema)) {
          if (candidate.disqualified) continue;
          events.push({
            deliveryId: sweepDeliveryId(candidate.id, stage.slug),
            atsJobId: shortcode,
            jobName: listed.find((j) => j.id === shortcode)?.name,
            atsApplicationId: candidate.id,
            atsCandidateId: candidate.id,
            stage: { id: stage.slug, name: stage.name },
            candidate: { name: candidate.name ?? undefined, email: candidate.email ?? undefined },
          });
        }
      }
    }
    let next: string | undefined;
    if (pageNext) next = writeCursor({ job: position.job, next: pageNext });
    else if (position.job + 1 < jobs.length) next = writeCursor({ job: position.job + 1, next: '' });
    return { events, next };
  };
}
