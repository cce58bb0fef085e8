import * as v from 'valibot';
import type { AtsHttpClient } from '../ats-http';
import { AtsError, ATS_ERROR_CODES } from '../errors';
import { searchPages } from '../lists';
import type { AtsMethod } from '../port';
import type { AshbyReads } from './ashby.reads';
import { candidateTagsSchema, tagCreatedSchema, tagSchema } from './ashby.schemas';

/** The AI interview's status shown as an Ashby candidate tag. */
export class AshbyTags {
  /** Tag ids by title, read once per warm function. */
  private readonly tagIds = new Map<string, string>();

  public constructor(
    private readonly http: AtsHttpClient,
    private readonly reads: AshbyReads,
  ) {}

  /**
   * The status as a candidate tag (Ashby's reference: candidateTag.list, candidateTag.create, candidate.addTag,
   * candidate.removeTag, candidate.info): the tag is found or created by its title, added, and the other status
   * tags the candidate has are removed (only removed, with no tag). Adding a tag the candidate has changes nothing.
   */
  public readonly setStatusTag: AtsMethod<'setStatusTag'> = async (target, tag, others, signal) => {
    const candidateId = target.atsCandidateId;
    // The candidate's own tags, so only the status tags it carries are removed.
    const candidate = await this.reads.rpc('/candidate.info', { id: candidateId }, candidateTagsSchema, signal);
    const held = candidate.results.tags;
    for (const old of held.filter((t) => others.includes(t.title)))
      await this.http.write(
        {
          method: 'POST',
          path: '/candidate.removeTag',
          body: { candidateId, tagId: old.id },
          signal,
          idempotent: true,
          ordered: true,
        },
        v.unknown(),
      );
    // No tag: the status is only taken off (a candidate who left, where the connection shows none for them).
    const tagId = tag === undefined ? undefined : await this.tagId(tag, true, signal);
    if (!tagId || held.some((t) => t.id === tagId)) return;
    await this.http.write(
      {
        method: 'POST',
        path: '/candidate.addTag',
        body: { candidateId, tagId },
        signal,
        idempotent: true,
        ordered: true,
      },
      v.unknown(),
    );
  };

  /**
   * A candidate tag's id by its title, the list read (every page, until the title is found) once per warm function;
   * created when asked for one and not found.
   */
  private async tagId(title: string, create: boolean, signal?: AbortSignal): Promise<string | undefined> {
    const list = () =>
      searchPages(
        this.reads.pager.pages(this.reads.list('/candidateTag.list', { limit: 100 }, signal), tagSchema),
        (tags) => {
          for (const t of tags) this.tagIds.set(t.title, t.id);
          return this.tagIds.has(title) ? true : undefined;
        },
        'Ashby candidateTag.list',
      );
    if (!this.tagIds.has(title)) await list();
    if (this.tagIds.has(title) || !create) return this.tagIds.get(title);
    const created = await this.http.write(
      { method: 'POST', path: '/candidateTag.create', body: { title }, signal },
      tagCreatedSchema,
    );
    // A 2xx whose body has no id is still a tag created: it is read back by its title.
    if (created) this.tagIds.set(title, created.results.id);
    else await list();
    const id = this.tagIds.get(title);
    if (!id) throw new AtsError(ATS_ERROR_CODES.malformedResponse, `Ashby has no tag "${title}" after creating it`);
    return id;
  }
}
