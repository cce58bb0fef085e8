import * as v from 'valibot';
import type { Connection } from '../../config';
import type { AtsHttpClient } from '../ats-http';
import { searchPages } from '../lists';
import type { AtsMethod } from '../port';
import type { LeverReads } from './lever.reads';

/** An opportunity's file: the name is at the item's top level (resumes nest it under `file`) [impl Pipedream]. */
const fileSchema = v.object({ id: v.string(), name: v.nullish(v.string()) });
const fileCreatedSchema = v.object({ data: v.object({ id: v.string() }) });

/**
 * The report file on the opportunity, as a File rather than a Resume (ats-routes.json, Lever `POST
 * /v1/opportunities/{id}/files?perform_as=`): multipart, one binary part (`file`), 30 MB at most [3p]. Found again by
 * its name in `GET /v1/opportunities/{id}/files`, which documents no query parameter.
 */
export class LeverFiles {
  public constructor(
    private readonly http: AtsHttpClient,
    private readonly reads: LeverReads,
    private readonly connection: Connection,
  ) {}

  public readonly findFile: AtsMethod<'findFile'> = (target, name, signal) => {
    const path = `/v1/opportunities/${encodeURIComponent(target.atsApplicationId)}/files`;
    return searchPages(
      this.reads.pager.pages(this.reads.list(path, signal), fileSchema),
      (files) => {
        const found = files.find((f) => f.name === name);
        return found ? { fileId: found.id } : undefined;
      },
      `files of opportunity ${target.atsApplicationId}`,
    );
  };

  public readonly attachFile: AtsMethod<'attachFile'> = async (target, file, signal) => {
    const opportunity = encodeURIComponent(target.atsApplicationId);
    const form = new FormData();
    form.append('file', new Blob([file.bytes], { type: file.contentType }), file.name);
    const created = await this.http.write(
      {
        method: 'POST',
        path: `/v1/opportunities/${opportunity}/files?perform_as=${encodeURIComponent(this.connection.atsUserId)}`,
        form,
        signal,
      },
      fileCreatedSchema,
    );
    return { fileId: created?.data.id };
  };
}
