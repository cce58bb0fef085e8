import * as v from 'valibot';
import { stageMatches } from '../../config';
import { readCursor, writeCursor } from '../lists';
import { type AtsMethod, type StageEnteredEvent, sweepDeliveryId } from '../port';
import type { AshbyReads } from './ashby.reads';
import { candidateStageChangeSchema } from './ashby.schemas';

/** The sweep's look at a trigger's stage on Ashby. */
export class AshbySweep {
  public constructor(private readonly reads: AshbyReads) {}

  /**
   * `application.list {status: "Active", jobId?, limit, cursor}` (Ashby's reference, applicationList; cursor pages
   * while `moreDataAvailable`), job by job for a trigger's jobs; Ashby has no stage filter, so the page is matched
   * against the stage here, as a webhook would be.
   */
  public readonly listApplicationsInStage: AtsMethod<'listApplicationsInStage'> = async (query, cursor, signal) => {
    const position = readCursor(cursor, { job: 0, after: '' });
    const jobId = query.jobs === 'all' ? undefined : query.jobs[position.job];
    const first = { status: 'Active', limit: 100, ...(jobId ? { jobId } : {}) };
    const page = await this.reads.pager.page(this.reads.list('/application.list', first, signal), position.after);
    const events: StageEnteredEvent[] = [];
    for (const item of page.items) {
      const parsed = v.safeParse(candidateStageChangeSchema, { application: item });
      if (!parsed.success) continue;
      const a = parsed.output.application;
      const stage = { id: a.currentInterviewStage.id, name: a.currentInterviewStage.title ?? undefined };
      if (stageMatches(query.stage, stage, a.job.id) !== 'yes') continue;
      events.push({
        deliveryId: sweepDeliveryId(a.id, stage.id),
        atsJobId: a.job.id,
        jobName: a.job.title ?? undefined,
        atsApplicationId: a.id,
        atsCandidateId: a.candidate.id,
        stage,
        candidate: { name: a.candidate.name ?? undefined, email: a.candidate.primaryEmailAddress?.value },
      });
    }
    let next: string | undefined;
    if (page.next) next = writeCursor({ job: position.job, after: page.next });
    else if (query.jobs !== 'all' && position.job + 1 < query.jobs.length)
      next = writeCursor({ job: position.job + 1, after: '' });
    return { events, next };
  };
}
