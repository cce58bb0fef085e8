import type * as v from 'valibot';
import type { AtsHttpClient } from '../ats-http';
import { Pager, type PagedList } from '../paging';
import { AtsError, ATS_ERROR_CODES } from '../errors';
import { applicationInfoSchema, interviewStagesSchema } from './ashby.schemas';
import { ashbyProfile } from './profile';

/** The RPC reads every part of the Ashby adapter shares: one read, a list's pages, one application, a stage's id. */
export class AshbyReads {
  /** Ashby's lists page by `cursor` in the body while `moreDataAvailable` (its profile's paging). */
  public readonly pager: Pager;
  /** Stage ids by interview plan and title, read once per plan per warm function. */
  private readonly stageIds = new Map<string, string>();

  public constructor(private readonly http: AtsHttpClient) {
    this.pager = new Pager(http, ashbyProfile.paging.style);
  }

  /** A read sent as POST (Ashby's RPC API): safe to send again after a 5xx or a lost answer. */
  public rpc<T>(path: string, body: unknown, schema: v.GenericSchema<unknown, T>, signal?: AbortSignal): Promise<T> {
    return this.http.request({ method: 'POST', path, body, signal, readOnly: true }, schema);
  }

  /** A list whose first page is `path` with `body`; the pager adds the cursor of each later page. */
  public list(path: string, body: object, signal?: AbortSignal): PagedList {
    return { first: { method: 'POST', path, body, signal, readOnly: true } };
  }

  public async applicationInfo(applicationId: string, signal?: AbortSignal) {
    return (await this.rpc('/application.info', { applicationId }, applicationInfoSchema, signal)).results;
  }

  /** A stage's id by its title in an interview plan (`interviewStage.list`). */
  public async stageIdByName(interviewPlanId: string, name: string, signal?: AbortSignal): Promise<string> {
    const cached = this.stageIds.get(`${interviewPlanId}#${name}`);
    if (cached) return cached;
    const stages = await this.rpc('/interviewStage.list', { interviewPlanId }, interviewStagesSchema, signal);
    for (const s of stages.results) this.stageIds.set(`${interviewPlanId}#${s.title}`, s.id);
    const match = stages.results.find((s) => s.title === name);
    if (!match)
      throw new AtsError(
        ATS_ERROR_CODES.invalidRequest,
        `interview plan ${interviewPlanId} has no stage named "${name}"`,
      );
    return match.id;
  }
}
