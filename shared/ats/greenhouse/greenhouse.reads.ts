import * as v from 'valibot';
import { type StageMatcher, stageIdForJob } from '../../config';
import type { AtsHttpClient } from '../ats-http';
import { AtsError, ATS_ERROR_CODES } from '../errors';
import { searchPages, validItems } from '../lists';
import { Pager } from '../paging';
import { applicationSchema, candidateSchema, jobInterviewStageSchema, jobSchema } from './greenhouse.schemas';
import { greenhouseProfile } from './profile';

/** A v3 id filter takes at most 50 ids (/docs/list-endpoints). */
export const MAX_FILTER_IDS = 50;

export type ApplicationRow = v.InferOutput<typeof applicationSchema>;

export const idText = (value: string | number | null | undefined): string | undefined =>
  value === null || value === undefined ? undefined : String(value);

/**
 * The Harvest v3 reads every part of the adapter shares: a list's pages, the plural id filters, one application, a
 * stage's id.
 */
export class GreenhouseReads {
  /** v3 lists page by the `Link` header alone (its profile's paging). */
  public readonly pager: Pager;
  /** Stage names per job change rarely; one lookup per job per warm function. */
  private readonly stageIds = new Map<string, string>();

  public constructor(private readonly http: AtsHttpClient) {
    this.pager = new Pager(http, greenhouseProfile.paging.style);
  }

  /** The applications' candidates and jobs, one read each by the plural id filters (at most 50 ids a read). */
  public async partiesOf(applications: readonly v.InferOutput<typeof applicationSchema>[], signal?: AbortSignal) {
    const ids = (values: (string | number | null | undefined)[]) =>
      [...new Set(values.map(idText).filter((x): x is string => Boolean(x)))].map(encodeURIComponent).join(',');
    const candidateIds = ids(applications.map((a) => a.candidate_id));
    const jobIds = ids(applications.map((a) => a.job_id));
    const [candidates, jobs] = await Promise.all([
      candidateIds ? this.idsRead(`/v3/candidates?ids=${candidateIds}`, candidateSchema, signal) : [],
      jobIds ? this.idsRead(`/v3/jobs?ids=${jobIds}`, jobSchema, signal) : [],
    ]);
    return { candidates, jobs };
  }

  public async idsRead<T>(path: string, item: v.GenericSchema<unknown, T>, signal?: AbortSignal): Promise<T[]> {
    return validItems(await this.http.request({ method: 'GET', path, signal }, v.array(v.unknown())), item);
  }

  /** `GET /v3/applications?ids=` (a list, even of one; no `/v3/applications/{id}` is documented): one application. */
  public async applicationRow(applicationId: string, signal?: AbortSignal): Promise<ApplicationRow> {
    const list = await this.http.request(
      { method: 'GET', path: `/v3/applications?ids=${encodeURIComponent(applicationId)}`, signal },
      v.array(v.unknown()),
    );
    const application = validItems(list, applicationSchema).find((a) => String(a.id) === applicationId);
    // A row for it that does not read as documented is no deletion: said as an answer not as documented.
    const present = list.some((row) => String((row as { id?: unknown } | null)?.id) === applicationId);
    if (!application && present)
      throw new AtsError(
        ATS_ERROR_CODES.malformedResponse,
        `Greenhouse's application ${applicationId} is not as documented`,
      );
    if (!application) throw new AtsError(ATS_ERROR_CODES.notFound, `Greenhouse has no application ${applicationId}`);
    return application;
  }

  /**
   * One page of a v3 list (a bare array, the items read one by one): `first` for the first page, then the URL the
   * `Link` header named.
   */
  public listPage<T>(first: string, item: v.GenericSchema<unknown, T>, signal: AbortSignal | undefined) {
    return this.pager.pages({ first: { method: 'GET', path: first, signal } }, item);
  }

  /** A stage in v3's `job_interview_stage_id` namespace: per job (`idsByJob`), a global id, or by exact name. */
  public async resolveStageId(stage: StageMatcher, jobId: string, signal?: AbortSignal): Promise<string> {
    const known = stageIdForJob(stage, jobId) ?? stage.id;
    if (known !== undefined) return known;
    if (stage.name === undefined)
      throw new AtsError(ATS_ERROR_CODES.invalidRequest, `no stage is configured for job ${jobId} (idsByJob or name)`);
    return this.stageIdByName(jobId, stage.name, signal);
  }

  /** Stage names are per job: `GET /v3/job_interview_stages?job_ids=`, every page, cached per warm function. */
  private async stageIdByName(jobId: string, name: string, signal?: AbortSignal): Promise<string> {
    const cached = this.stageIds.get(`${jobId}#${name}`);
    if (cached) return cached;
    const first = `/v3/job_interview_stages?job_ids=${encodeURIComponent(jobId)}&per_page=500`;
    const found = await searchPages(
      this.listPage(first, jobInterviewStageSchema, signal),
      (stages) => {
        for (const stage of stages) this.stageIds.set(`${jobId}#${stage.name}`, String(stage.id));
        return stages.find((s) => s.name === name);
      },
      `stages of job ${jobId}`,
    );
    if (!found) throw new AtsError(ATS_ERROR_CODES.invalidRequest, `job ${jobId} has no stage named "${name}"`);
    return String(found.id);
  }
}
