import { AtsError, ATS_ERROR_CODES } from '../errors';
import { MAX_LIST_PAGES, readCursor, validItems, writeCursor } from '../lists';
import { type AtsMethod, type StageEnteredEvent, type StageQuery, sweepDeliveryId } from '../port';
import { type GreenhouseReads, idText, MAX_FILTER_IDS } from './greenhouse.reads';
import {
  applicationSchema,
  applicationStageSchema,
  emailAddressSchema,
  jobInterviewStageSchema,
  jobSchema,
} from './greenhouse.schemas';
import { greenhouseProfile } from './profile';

/**
 * Where a pass stands: the stage's ids, the chunk of them and its page; or, while a stage named is still looked up
 * among the jobs, where that look stands: the open jobs' page to read next (`end` once read), that page's job ids,
 * the chunk of them whose stages are read, and its page.
 */
interface SweepPosition extends Record<string, unknown> {
  ids: string[];
  chunk: number;
  next: string;
  looking?: {
    jobsNext: string;
    jobIds: string[];
    jobChunk: number;
    stagesNext: string;
    jobPages?: number;
    stagePages?: number;
  };
}

/** The calls one look at the stages may make in a list's call: one sweep page's declared calls. */
const LOOK_CALLS = greenhouseProfile.stepCalls.sweepPage;

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
   * connector's own cursor, so the stage is resolved once per pass; a look by name over many jobs goes a page of
   * calls at a time, its place in the cursor too, so a large account's look spans runs instead of starting over.
   */
  public readonly listApplicationsInStage: AtsMethod<'listApplicationsInStage'> = async (query, cursor, signal) => {
    const position = readCursor<SweepPosition>(cursor, cursor ? { ids: [], chunk: 0, next: '' } : startOf(query));
    if (position.looking) {
      await this.look(query, position, signal);
      return { events: [], next: writeCursor(position) };
    }
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
   * The stage's `job_interview_stage_id`s by its exact name among the trigger's jobs (every open job for `all`:
   * `GET /v3/jobs?status=open`, a page at a time), read on from where the cursor stands, `LOOK_CALLS` calls at most.
   */
  private async look(query: StageQuery, position: SweepPosition, signal?: AbortSignal): Promise<void> {
    const looking = position.looking as NonNullable<SweepPosition['looking']>;
    for (let calls = 0; calls < LOOK_CALLS; calls++) {
      const jobs = looking.jobIds.slice(looking.jobChunk * MAX_FILTER_IDS, (looking.jobChunk + 1) * MAX_FILTER_IDS);
      if (jobs.length) {
        const first = `/v3/job_interview_stages?job_ids=${jobs.map(encodeURIComponent).join(',')}&per_page=500`;
        const read = await this.reads.listPage(first, jobInterviewStageSchema, signal)(looking.stagesNext || undefined);
        const named = read.page.filter((s) => s.name === query.stage.name).map((s) => String(s.id));
        position.ids = [...new Set([...position.ids, ...named])];
        looking.stagePages = (looking.stagePages ?? 0) + 1;
        looking.stagesNext = followed(read.next, looking.stagesNext, looking.stagePages, 'stages of the jobs') ?? '';
        if (!read.next) Object.assign(looking, { jobChunk: looking.jobChunk + 1, stagePages: 0 });
      } else if (looking.jobsNext !== 'end') {
        const open = this.reads.listPage('/v3/jobs?status=open&per_page=500', jobSchema, signal);
        const read = await open(looking.jobsNext || undefined);
        const jobPages = (looking.jobPages ?? 0) + 1;
        const jobsNext = followed(read.next, looking.jobsNext, jobPages, 'open jobs') ?? 'end';
        Object.assign(looking, { jobIds: read.page.map((j) => String(j.id)), jobChunk: 0, jobsNext, jobPages });
      } else {
        position.looking = undefined;
        return;
      }
    }
  }
}

/**
 * The next page of a look's list, once it has read `pages`: refused for good (as `searchPages` refuses) past
 * `MAX_LIST_PAGES`, or where it names the page just read again, rather than a look that never ends.
 */
function followed(next: string | undefined, read: string, pages: number, what: string): string | undefined {
  if (!next) return undefined;
  if (next === read || pages >= MAX_LIST_PAGES)
    throw new AtsError(ATS_ERROR_CODES.malformedResponse, `${what}: more than ${pages} pages, or a page again`);
  return next;
}

/**
 * A pass's start: the configured ids at once; a stage by name looked up among the trigger's jobs (their ids given)
 * or every open job (`all`, listed as the look goes).
 */
function startOf(query: StageQuery): SweepPosition {
  const configured = [...Object.values(query.stage.idsByJob ?? {}), ...(query.stage.id ? [query.stage.id] : [])];
  if (configured.length || query.stage.name === undefined) return { ids: [...new Set(configured)], chunk: 0, next: '' };
  const all = query.jobs === 'all';
  const jobIds = all ? [] : [...new Set(query.jobs)];
  return { ids: [], chunk: 0, next: '', looking: { jobsNext: all ? '' : 'end', jobIds, jobChunk: 0, stagesNext: '' } };
}
