import type * as v from 'valibot';
import type { AtsHttpClient } from '../ats-http';
import { AtsError, ATS_ERROR_CODES } from '../errors';
import { Pager, type PagedList } from '../paging';
import type { ApplicationStanding } from '../port';
import { opportunitySchema, stagesSchema } from './lever.schemas';
import { leverProfile } from './profile';

export type Opportunity = v.InferOutput<typeof opportunitySchema>['data'];

export const stageIdOf = (stage: string | { id: string }): string => (typeof stage === 'string' ? stage : stage.id);

/** The application of an opportunity that names its posting (`?expand=applications`), where one does. */
export const postedApplicationOf = (opportunity: Opportunity) =>
  opportunity.applications.find(
    (a): a is { id: string; posting: string } => typeof a !== 'string' && Boolean(a.posting),
  );

/**
 * An opportunity's place in the pipeline as one read shows it. Lever archives every opportunity that leaves, rejected
 * or withdrawn or hired ("Opportunities exit your pipeline by being archived for one of two reasons: rejected ... or
 * hired", ats-routes.json); the read names the archive reason by id only, and telling hired from not takes
 * `GET /v1/archive_reasons`, a second call: so every exit is 'archived', with the reason's id.
 */
export function standingOf(
  opportunity: Opportunity,
  knownStageNames: ReadonlyMap<string, string>,
): ApplicationStanding {
  if (opportunity.archived)
    return { active: false, exit: 'archived', reason: opportunity.archived.reason ?? undefined };
  const stageId = stageIdOf(opportunity.stage);
  const stageName = typeof opportunity.stage === 'string' ? knownStageNames.get(stageId) : opportunity.stage.text;
  return { active: true, stageId, stageName };
}

/** The Lever reads every part of the adapter shares: one opportunity, a list's pages, the global stages. */
export class LeverReads {
  /** Lever's lists page by `offset=<next>` while `hasNext` (its profile's paging). */
  public readonly pager: Pager;
  private stageNames: Map<string, string> | undefined;

  public constructor(private readonly http: AtsHttpClient) {
    this.pager = new Pager(http, leverProfile.paging.style);
  }

  /** A list whose first page is `path`; the pager adds each later page's `offset`. */
  public list(path: string, signal?: AbortSignal): PagedList {
    return { first: { method: 'GET', path, signal } };
  }

  /**
   * `GET /v1/opportunities/{id}` (`?expand=applications` where the posting is needed): the one read of an opportunity
   * behind the stage check, the move, the standing and the doctor's view.
   */
  public async readOpportunity(id: string, expand: 'applications' | undefined, signal?: AbortSignal) {
    const path = `/v1/opportunities/${encodeURIComponent(id)}${expand ? `?expand=${expand}` : ''}`;
    return (await this.http.request({ method: 'GET', path, signal }, opportunitySchema)).data;
  }

  public knownStageNames(): ReadonlyMap<string, string> {
    return this.stageNames ?? new Map();
  }

  /** Lever's stages are global: read once per warm function. */
  public async stages(signal?: AbortSignal): Promise<Map<string, string>> {
    if (!this.stageNames) {
      const stages = await this.http.request({ method: 'GET', path: '/v1/stages', signal }, stagesSchema);
      this.stageNames = new Map(stages.data.map((s) => [s.id, s.text]));
    }
    return this.stageNames;
  }

  public async stageIdByName(name: string, signal?: AbortSignal): Promise<string> {
    const match = [...(await this.stages(signal))].find(([, text]) => text === name);
    if (!match) throw new AtsError(ATS_ERROR_CODES.invalidRequest, `Lever has no stage named "${name}"`);
    return match[0];
  }
}
