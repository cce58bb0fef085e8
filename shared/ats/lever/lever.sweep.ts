import type { AtsMethod, StageEnteredEvent } from '../port';
import { sweepDeliveryId } from '../port';
import { validItems } from '../lists';
import type { LeverReads } from './lever.reads';
import { listedOpportunitySchema } from './lever.schemas';

/** The sweep's look at a trigger's stage on Lever. */
export class LeverSweep {
  public constructor(private readonly reads: LeverReads) {}

  /**
   * `GET /v1/opportunities?stage_id=&posting_id=&archived=false` (Lever's opportunities list filters by stage;
   * Pipedream and activepieces list with it), 100 a page by `offset=<next>` while `hasNext`. Ids only, as Lever's
   * webhook: the worker reads each opportunity before acting (`confirmStageEntered`). Archived ones are left out.
   */
  public readonly listApplicationsInStage: AtsMethod<'listApplicationsInStage'> = async (query, cursor, signal) => {
    const stageId = query.stage.id ?? (await this.reads.stageIdByName(query.stage.name as string, signal));
    // The trigger's postings (`posting_id`, repeatable) and open opportunities only (`archived=false`: unspecified,
    // Lever lists both): ats-facts, Corrections 2026-11b.
    const params = new URLSearchParams({ stage_id: stageId, archived: 'false', limit: '100' });
    if (query.jobs !== 'all') for (const posting of query.jobs) params.append('posting_id', posting);
    const page = await this.reads.pager.page(this.reads.list(`/v1/opportunities?${params.toString()}`, signal), cursor);
    const events: StageEnteredEvent[] = validItems(page.items, listedOpportunitySchema)
      .filter((o) => !o.archived)
      .map((o) => ({
        deliveryId: sweepDeliveryId(o.id, stageId),
        atsApplicationId: o.id,
        atsCandidateId: o.contact ?? o.id,
        stage: { id: stageId },
        candidate: {},
      }));
    return { events, next: page.next };
  };
}
