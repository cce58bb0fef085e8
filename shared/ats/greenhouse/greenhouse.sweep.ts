import { readCursor, searchPages, validItems, writeCursor } from '../lists';
import { type AtsMethod, type StageEnteredEvent, type StageQuery, sweepDeliveryId } from '../port';
import { type GreenhouseReads, idText, MAX_FILTER_IDS } from './greenhouse.reads';
import {
  applicationSchema,
  applicationStageSchema,
  emailAddressSchema,
  jobInterviewStageSchema,
  jobSchema,
} from './greenhouse.schemas';

/**
 * An application still open: v3 records show `in_process` (the filter's own word is `active`); rejected, hired,
 * converted and the rest are left alone by the sweep.
 */
const OPEN_APPLICATION_STATUSES: ReadonlySet<string> = new Set(['in_process', 'active']);

/** The sweep's look at a trigger's stage on Harvest v3. */
export class GreenhouseSweep {
  public constructor(private readonly reads: GreenhouseReads) {}

  /**
   * The applications in the trigger's stage now, found as Harvest v3 documents it (ats-facts, Corrections 2026-11b):
   * the stage's `job_interview_stage_id`s (configured, or resolved by name over the trigger's jobs or every open
   * job with `GET /v3/job_interview_stages?job_ids=`), then `GET /v3/application_stages?job_interview_stage_ids=
   * <≤50>&current=true`, 50 rows a page by the `Link` header, then the rows' applications, candidates and jobs by
   * the plural id filters (/docs/list-endpoints). The place over the chunks of stage ids and their pages is the
   * connector's own cursor, so the stage is resolved once per pass.
   */
  public readonly listApplicationsInStage: AtsMethod<'listApplicationsInStage'> = async (query, cursor, signal) => {
    const position = cursor
      ? readCursor(cursor, { ids: [] as string[], chunk: 0, next: '' })
      : { ids: await this.stageIdsOf(query, signal), chunk: 0, next: '' };
    const chunk = position.ids.slice(position.chunk * MAX_FILTER_IDS, (position.chunk + 1) * MAX_FILTER_IDS);
    if (!chunk.length) return { events: [], next: undefined };
    const first = `/v3/application_stages?${new URLSearchParams({
      job_interview_stage_ids: chunk.join(','),
      current: 'true',
      per_page: '50',
    }).toString()}`;
    const page = await this.reads.pager.page({ first: { method: 'GET', path: first, signal } }, position.next);
    const rows = validItems(page.items, applicationStageSchema).filter((r) => !r.exited_at);
    const stageOf = new Map(rows.map((r) => [idText(r.application_id), idText(r.job_interview_stage_id)]));
    const applicationIds = [...stageOf.keys()].filter((id): id is string => Boolean(id));
    const read = applicationIds.length
      ? await this.reads.idsRead(
          `/v3/applications?ids=${applicationIds.map(encodeURIComponent).join(',')}`,
          applicationSchema,
          signal,
        )
      : [];
    // Only open applications of the trigger's jobs: a rejected or hired one left in the stage is not invited.
    const applications = read.filter(
      (a) =>
        (!a.status || OPEN_APPLICATION_STATUSES.has(a.status)) &&
        (query.jobs === 'all' || query.jobs.includes(idText(a.job_id) ?? '')),
    );
    const { jobs, candidates } = await this.reads.partiesOf(applications, signal);
    const events: StageEnteredEvent[] = applications.map((a) => {
      const candidate = candidates.find((c) => String(c.id) === idText(a.candidate_id));
      const stageId = stageOf.get(String(a.id)) ?? idText(a.job_interview_stage_id);
      const name = [candidate?.first_name, candidate?.last_name].filter(Boolean).join(' ');
      return {
        deliveryId: sweepDeliveryId(String(a.id), stageId),
        atsJobId: idText(a.job_id),
        jobName: jobs.find((j) => String(j.id) === idText(a.job_id))?.name ?? undefined,
        atsApplicationId: String(a.id),
        atsCandidateId: idText(a.candidate_id) ?? '',
        stage: { id: stageId, name: a.stage_name ?? undefined },
        candidate: {
          name: name || undefined,
          email: validItems(candidate?.email_addresses ?? [], emailAddressSchema)[0]?.value,
        },
      };
    });
    const next = page.next
      ? { ...position, next: page.next }
      : (position.chunk + 1) * MAX_FILTER_IDS < position.ids.length
        ? { ids: position.ids, chunk: position.chunk + 1, next: '' }
        : undefined;
    return { events, next: next && writeCursor(next) };
  };

  /**
   * The `job_interview_stage_id`s a stage matcher names: the configured ids, or those of the stages with its exact
   * name among the trigger's jobs (every open job for `all`: `GET /v3/jobs?status=open`, every page).
   */
  private async stageIdsOf(query: StageQuery, signal?: AbortSignal): Promise<string[]> {
    const configured = [...Object.values(query.stage.idsByJob ?? {}), ...(query.stage.id ? [query.stage.id] : [])];
    if (configured.length || query.stage.name === undefined) return [...new Set(configured)];
    let jobIds = query.jobs === 'all' ? [] : [...query.jobs];
    if (query.jobs === 'all')
      await searchPages(
        this.reads.listPage('/v3/jobs?status=open&per_page=500', jobSchema, signal),
        (page) => void jobIds.push(...page.map((j) => String(j.id))),
        'open jobs',
      );
    jobIds = [...new Set(jobIds)];
    const ids: string[] = [];
    for (let start = 0; start < jobIds.length; start += MAX_FILTER_IDS) {
      const jobs = jobIds
        .slice(start, start + MAX_FILTER_IDS)
        .map(encodeURIComponent)
        .join(',');
      await searchPages(
        this.reads.listPage(`/v3/job_interview_stages?job_ids=${jobs}&per_page=500`, jobInterviewStageSchema, signal),
        (page) => void ids.push(...page.filter((s) => s.name === query.stage.name).map((s) => String(s.id))),
        'stages of the jobs',
      );
    }
    return [...new Set(ids)];
  }
}
