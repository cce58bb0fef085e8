import * as v from 'valibot';
import { errorCode, httpStatus } from '../../errors';
import type { AtsHttpClient } from '../ats-http';
import { AtsError, ATS_ERROR_CODES } from '../errors';
import { searchPages } from '../lists';
import type { AtsMethod } from '../port';
import type { GreenhouseReads } from './greenhouse.reads';
import { appliedTagSchema, tagSchema } from './greenhouse.schemas';

/** A candidate's status tags on Harvest v3; the organisation's tag ids kept per warm function. */
export class GreenhouseTags {
  private readonly tagIds = new Map<string, string>();

  public constructor(
    private readonly http: AtsHttpClient,
    private readonly reads: GreenhouseReads,
  ) {}

  /**
   * The status as a candidate tag, by Harvest v3's two tag resources (ats-facts, Corrections 2026-11b;
   * harvestdocs /reference/get_v3-applied-candidate-tags): the rows of tags applied to the candidate
   * (`GET /v3/applied_candidate_tags?candidate_ids=`); a row of another status is removed by the row's own id
   * (`DELETE /v3/applied_candidate_tags/{id}`), and the status applied (`POST /v3/applied_candidate_tags
   * {candidate_id, candidate_tag_id}`) unless a row has it. Tag ids come from the organisation's tags
   * (`GET /v3/candidate_tags`, every page, once per warm function and again only for a tag it has not seen;
   * `POST {name}` only for a name not listed, as
   * whether Greenhouse answers an existing name with that tag is undocumented). Never a `/v1/` route: Harvest v1
   * is out of service and refuses a v3 token.
   */
  public readonly setStatusTag: AtsMethod<'setStatusTag'> = async (target, tag, others, signal) => {
    const candidateId = Number(target.atsCandidateId) || target.atsCandidateId;
    const rows = await this.appliedTags(target.atsCandidateId, signal);
    // The catalogue is listed again only when the candidate holds a tag this function has not seen (another
    // function may have created it since), or the status's own tag is not known yet: once a call (and once more
    // after a create another function won).
    const known = new Set(this.tagIds.values());
    const listed = rows.some((r) => !known.has(String(r.candidate_tag_id)));
    if (listed) await this.listTags(signal);
    const otherIds = new Set(others.map((name) => this.tagIds.get(name)).filter((id) => id !== undefined));
    for (const row of rows.filter((r) => otherIds.has(String(r.candidate_tag_id)))) {
      try {
        await this.http.write(
          { method: 'DELETE', path: `/v3/applied_candidate_tags/${encodeURIComponent(String(row.id))}`, signal },
          v.unknown(),
        );
      } catch (error) {
        // Removed already (a retry after a lost answer): what was asked for holds.
        if (errorCode(error) !== ATS_ERROR_CODES.notFound) throw error;
      }
    }
    // No status to show (a candidate who left, where the connection shows none): the others removed, nothing added.
    if (tag === undefined) return;
    const tagId = await this.candidateTagId(tag, listed, signal);
    if (rows.some((r) => String(r.candidate_tag_id) === tagId)) return;
    try {
      await this.http.write(
        {
          method: 'POST',
          path: '/v3/applied_candidate_tags',
          body: { candidate_id: candidateId, candidate_tag_id: Number(tagId) || tagId },
          signal,
        },
        v.unknown(),
      );
    } catch (error) {
      // A refusal after an earlier attempt whose answer was lost: applied, if the candidate's rows say so.
      if (httpStatus(error) !== 422) throw error;
      const again = await this.appliedTags(target.atsCandidateId, signal);
      if (!again.some((r) => String(r.candidate_tag_id) === tagId)) throw error;
    }
  };

  /** The rows of tags applied to a candidate, every page. */
  private async appliedTags(candidateId: string, signal?: AbortSignal) {
    const rows: v.InferOutput<typeof appliedTagSchema>[] = [];
    await searchPages(
      this.reads.listPage(
        `/v3/applied_candidate_tags?candidate_ids=${encodeURIComponent(candidateId)}&per_page=500`,
        appliedTagSchema,
        signal,
      ),
      (page) => void rows.push(...page),
      `tags of candidate ${candidateId}`,
    );
    return rows;
  }

  /** The organisation's tags (`GET /v3/candidate_tags`, every page), into this function's map of names to ids. */
  private async listTags(signal?: AbortSignal): Promise<void> {
    const listed = new Map<string, string>();
    await searchPages(
      this.reads.listPage('/v3/candidate_tags?per_page=500', tagSchema, signal),
      (page) => {
        for (const t of page) listed.set(t.name, String(t.id));
        return undefined;
      },
      'candidate tags',
    );
    // Swapped in whole: a call running beside this one never reads a map half filled.
    this.tagIds.clear();
    for (const [name, id] of listed) this.tagIds.set(name, id);
  }

  /**
   * A status tag's id by its name: from the list (read again when the name is unknown, unless `listed` just now), or
   * created when the list has no such tag.
   */
  private async candidateTagId(name: string, listed: boolean, signal?: AbortSignal): Promise<string> {
    if (!this.tagIds.has(name) && !listed) await this.listTags(signal);
    const known = this.tagIds.get(name);
    if (known !== undefined) return known;
    try {
      const created = await this.http.write(
        { method: 'POST', path: '/v3/candidate_tags', body: { name }, signal },
        tagSchema,
      );
      if (created) {
        this.tagIds.set(name, String(created.id));
        return String(created.id);
      }
    } catch (error) {
      // Another worker created it since the list was read (or an earlier attempt did, its answer lost): the list,
      // read again, has it.
      if (httpStatus(error) !== 422) throw error;
    }
    await this.listTags(signal);
    const found = this.tagIds.get(name);
    if (found === undefined) throw new AtsError(ATS_ERROR_CODES.malformedResponse, `no candidate tag "${name}"`);
    return found;
  }
}
