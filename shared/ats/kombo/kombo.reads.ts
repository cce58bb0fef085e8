import * as v from 'valibot';
import type { StageMatcher } from '../../config';
import type { AtsHttpClient } from '../ats-http';
import { AtsError, ATS_ERROR_CODES } from '../errors';
import type { ApplicationStanding, AtsStage, ChangedApplication } from '../port';
import {
  type KomboApplication,
  komboApplicationSchema,
  komboAttachmentSchema,
  komboCandidateSchema,
  komboJobSchema,
  readKomboPage,
} from './kombo.schemas';
import { komboProfile } from './profile';

/** A page of Kombo's list routes as the connector reads it where it wants few (jobs for a picker). */
const PAGE_SIZE = 100;
/** The changed applications are read in Kombo's largest pages: a busy integration's changes in the fewest reads. */
const CHANGES_PAGE_SIZE = komboProfile.paging.maxPageSize;
/** A job's stages are kept this long: the move and the doctor read them, Kombo syncs them every few hours. */
const STAGES_MS = 10 * 60_000;

const pageOf = <T>(schema: v.GenericSchema<unknown, T>, where: string) =>
  v.pipe(
    v.unknown(),
    v.rawTransform(({ dataset, addIssue, NEVER }) => {
      const page = readKomboPage(dataset.value, schema);
      if (page) return page;
      addIssue({ message: `${where}: not a Kombo list page` });
      return NEVER;
    }),
  );

/**
 * The reads the Kombo adapter's parts share, each one of Kombo's documented list routes (ats-routes.json
 * `ats.kombo.routes`): applications (by ids, or changed after a moment), candidates by id, jobs with their stages.
 * Kombo serves its synced copy of the ATS: a read may lag the ATS by up to its sync interval.
 */
export class KomboReads {
  private readonly stages = new Map<string, { at: number; value: Promise<{ id: string; name: string }[]> }>();

  public constructor(private readonly http: AtsHttpClient) {}

  /**
   * `GET /ats/applications?updated_after=…` from `since`, a page at a time; deleted ones too (`include_deleted`:
   * Kombo leaves them out otherwise), so an application deleted in the ATS is read as its exit.
   */
  public async applicationsChangedSince(since: number, cursor: string | undefined, signal?: AbortSignal) {
    const query = new URLSearchParams({
      page_size: String(CHANGES_PAGE_SIZE),
      updated_after: new Date(since).toISOString(),
      include_deleted: 'true',
    });
    if (cursor) query.set('cursor', cursor);
    return this.http.request(
      { method: 'GET', path: `/ats/applications?${query}`, signal },
      pageOf(komboApplicationSchema, 'GET /ats/applications'),
    );
  }

  /**
   * One application (`GET /ats/applications?ids=`), deleted or not (a deleted one reads as its exit); one Kombo does
   * not have is a refusal, not an empty answer.
   */
  public async application(id: string, signal?: AbortSignal): Promise<KomboApplication> {
    const query = new URLSearchParams({ ids: id, include_deleted: 'true' });
    const page = await this.http.request(
      { method: 'GET', path: `/ats/applications?${query}`, signal },
      pageOf(komboApplicationSchema, 'GET /ats/applications'),
    );
    const found = page.items.find((a) => a.id === id);
    if (!found) throw new AtsError(ATS_ERROR_CODES.notFound, `Kombo has no application ${id}`);
    return found;
  }

  /** The candidate's name and first e-mail (`GET /ats/candidates?ids=`): what an invitation needs. */
  public async candidate(id: string, signal?: AbortSignal): Promise<{ name?: string; email?: string }> {
    const candidate = await this.candidateRecord(id, signal);
    if (!candidate) return {};
    const name = [candidate.first_name, candidate.last_name].filter(Boolean).join(' ');
    const email = candidate.email_addresses[0]?.email_address;
    return { ...(name ? { name } : {}), ...(email ? { email } : {}) };
  }

  /**
   * The names of the candidate's tags (`GET /ats/candidates?ids=`, a synced read, outside the concurrency limit).
   * Kombo writes through: a tag the connector added is in its copy at once.
   */
  public async candidateTags(id: string, signal?: AbortSignal): Promise<string[]> {
    const candidate = await this.candidateRecord(id, signal);
    return (candidate?.tags ?? []).flatMap((t) => (t.name ? [t.name] : []));
  }

  private async candidateRecord(id: string, signal?: AbortSignal) {
    const query = new URLSearchParams({ ids: id });
    const page = await this.http.request(
      { method: 'GET', path: `/ats/candidates?${query}`, signal },
      pageOf(komboCandidateSchema, 'GET /ats/candidates'),
    );
    return page.items.find((c) => c.id === id);
  }

  /** Jobs not deleted, at most `limit` (`GET /ats/jobs`, every page up to it). */
  public async jobs(limit: number, signal?: AbortSignal): Promise<{ id: string; name: string }[]> {
    const jobs: { id: string; name: string }[] = [];
    let cursor: string | undefined;
    do {
      const query = new URLSearchParams({ page_size: String(Math.min(PAGE_SIZE, limit)) });
      if (cursor) query.set('cursor', cursor);
      const page = await this.http.request(
        { method: 'GET', path: `/ats/jobs?${query}`, signal },
        pageOf(komboJobSchema, 'GET /ats/jobs'),
      );
      for (const job of page.items) if (!job.remote_deleted_at) jobs.push({ id: job.id, name: job.name ?? job.id });
      cursor = page.next;
    } while (cursor && jobs.length < limit);
    return jobs.slice(0, limit);
  }

  /** A job's stages (`GET /ats/jobs?ids=`), kept 10 minutes. */
  public stagesOf(jobId: string, signal?: AbortSignal): Promise<AtsStage[]> {
    const held = this.stages.get(jobId);
    if (held && Date.now() - held.at < STAGES_MS) return held.value;
    const value = (async () => {
      const query = new URLSearchParams({ ids: jobId });
      const page = await this.http.request(
        { method: 'GET', path: `/ats/jobs?${query}`, signal },
        pageOf(komboJobSchema, 'GET /ats/jobs'),
      );
      const job = page.items.find((j) => j.id === jobId);
      return (job?.stages ?? []).map((s) => ({ id: s.id, name: s.name ?? s.id }));
    })();
    this.stages.set(jobId, { at: Date.now(), value });
    value.catch(() => this.stages.delete(jobId));
    return value;
  }

  /** A configured stage as the job's stage: by id, or by name. */
  public async resolveStage(stage: StageMatcher, jobId: string, signal?: AbortSignal): Promise<AtsStage> {
    const stages = await this.stagesOf(jobId, signal);
    const wantedId = stage.idsByJob?.[jobId] ?? stage.id;
    const found = stages.find((s) => (wantedId !== undefined ? s.id === wantedId : s.name === stage.name));
    if (!found)
      throw new AtsError(ATS_ERROR_CODES.notFound, `job ${jobId} has no stage ${wantedId ?? `named "${stage.name}"`}`);
    return found;
  }

  /** The application's attachment of this name (`GET /ats/applications/{id}/attachments`), if there is one. */
  public async attachmentNamed(applicationId: string, name: string, signal?: AbortSignal) {
    const answer = await this.http.request(
      { method: 'GET', path: `/ats/applications/${encodeURIComponent(applicationId)}/attachments`, signal },
      v.looseObject({ data: v.looseObject({ results: v.array(v.unknown()) }) }),
    );
    const found = answer.data.results
      .map((item) => v.safeParse(komboAttachmentSchema, item))
      .find((parsed) => parsed.success && parsed.output.file_name === name);
    return found?.success ? { fileId: found.output.id } : undefined;
  }
}

/** An application as a synced read gives it to the stage-entry reader; one with no job or candidate is left out. */
export function changedOf(a: KomboApplication): ChangedApplication | undefined {
  if (!a.job_id || !a.candidate_id) return undefined;
  const standing = standingOf(a);
  return {
    atsApplicationId: a.id,
    atsCandidateId: a.candidate_id,
    atsJobId: a.job_id,
    stage: {
      ...(a.current_stage_id ? { id: a.current_stage_id } : {}),
      ...(a.current_stage?.name ? { name: a.current_stage.name } : {}),
    },
    ...(standing.active ? {} : { exit: standing.exit }),
    changedAt: Date.parse(a.changed_at ?? a.remote_updated_at ?? '') || 0,
  };
}

/** DECLINED (rejected or withdrawn, not told apart) and HIRED are out of the process; deleted in the ATS, for good. */
export function standingOf(a: KomboApplication): ApplicationStanding {
  if (a.remote_deleted_at) return { active: false, exit: 'deleted', reason: 'deleted in the ATS' };
  if (a.outcome === 'DECLINED')
    return { active: false, exit: 'rejected', ...(a.rejection_reason_name ? { reason: a.rejection_reason_name } : {}) };
  if (a.outcome === 'HIRED') return { active: false, exit: 'hired' };
  return {
    active: true,
    ...(a.current_stage_id ? { stageId: a.current_stage_id } : {}),
    ...(a.current_stage?.name ? { stageName: a.current_stage.name } : {}),
  };
}
