import * as v from 'valibot';
import type { AtsHttpClient } from '../ats-http';
import { searchPages } from '../lists';
import type { AtsMethod } from '../port';
import type { GreenhouseReads } from './greenhouse.reads';
import { idText } from './greenhouse.reads';

const id = v.union([v.number(), v.string()]);
/** `GET /v3/attachments` items: only the id and the file's name are read (/reference/get_v3-attachments). */
const attachmentSchema = v.object({ id, filename: v.nullish(v.string()) });
const attachmentCreatedSchema = v.object({ id });

/**
 * The report file on the application (ats-routes.json, Greenhouse `POST /v3/attachments`): JSON with the bytes in
 * base64 `content`, `type: other`, the visibility Greenhouse infers from the type; found again by its `filename` in
 * `GET /v3/attachments?application_ids=<id>&type=other`, every page (the next one only in the `Link` header).
 */
export class GreenhouseFiles {
  public constructor(
    private readonly http: AtsHttpClient,
    private readonly reads: GreenhouseReads,
  ) {}

  public readonly findFile: AtsMethod<'findFile'> = (target, name, signal) => {
    const application = encodeURIComponent(target.atsApplicationId);
    const first = `/v3/attachments?application_ids=${application}&type=other&per_page=500`;
    return searchPages(
      this.reads.listPage(first, attachmentSchema, signal),
      (files) => {
        const found = files.find((f) => f.filename === name);
        return found ? { fileId: String(found.id) } : undefined;
      },
      `attachments of application ${target.atsApplicationId}`,
    );
  };

  public readonly attachFile: AtsMethod<'attachFile'> = async (target, file, signal) => {
    const body = {
      application_id: Number(target.atsApplicationId) || target.atsApplicationId,
      filename: file.name,
      type: 'other',
      content: Buffer.from(file.bytes).toString('base64'),
    };
    const created = await this.http.write(
      { method: 'POST', path: '/v3/attachments', body, signal },
      attachmentCreatedSchema,
    );
    return { fileId: idText(created?.id) };
  };
}
