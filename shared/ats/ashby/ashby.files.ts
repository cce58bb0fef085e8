import * as v from 'valibot';
import type { AtsHttpClient } from '../ats-http';
import { validItems } from '../lists';
import type { AtsMethod } from '../port';
import type { AshbyReads } from './ashby.reads';

/** `candidate.info`, read for the candidate's files: `fileHandles[{id, name, handle}]`, one bad item skipped. */
const candidateFilesSchema = v.object({
  results: v.object({ fileHandles: v.optional(v.array(v.unknown()), []) }),
});
const fileHandleSchema = v.object({ id: v.string(), name: v.string() });
/** `file.createFileUploadHandle` answers the handle and the presigned storage URL with the form's fields. */
const uploadHandleSchema = v.object({
  results: v.object({
    handle: v.string(),
    url: v.pipe(v.string(), v.url()),
    fields: v.optional(v.record(v.string(), v.string()), {}),
  }),
});

/**
 * The report file on the candidate, where Ashby keeps files (ats-routes.json, 2026-11c; Ashby's changelog
 * 2026-02-23 "presigned file uploads"): `file.createFileUploadHandle` with `fileUploadContext: CandidateFiles`, then
 * the bytes posted as multipart to the handle's storage URL (every returned field, the file last as `file`), then
 * `candidate.uploadFile {candidateId, fileHandle}`. Found again by its name in `candidate.info` `fileHandles`.
 */
export class AshbyFiles {
  public constructor(
    private readonly http: AtsHttpClient,
    private readonly reads: AshbyReads,
  ) {}

  public readonly findFile: AtsMethod<'findFile'> = async (target, name, signal) => {
    const candidate = await this.reads.rpc(
      '/candidate.info',
      { id: target.atsCandidateId },
      candidateFilesSchema,
      signal,
    );
    const found = validItems(candidate.results.fileHandles, fileHandleSchema).find((f) => f.name === name);
    return found ? { fileId: found.id } : undefined;
  };

  public readonly attachFile: AtsMethod<'attachFile'> = async (target, file, signal) => {
    const upload = await this.http.request(
      {
        method: 'POST',
        path: '/file.createFileUploadHandle',
        body: {
          fileUploadContext: 'CandidateFiles',
          filename: file.name,
          contentType: file.contentType,
          contentLength: file.bytes.byteLength,
        },
        signal,
        // A handle nobody uses is let go: asking again makes no second file.
        idempotent: true,
      },
      uploadHandleSchema,
    );
    const form = new FormData();
    for (const [field, value] of Object.entries(upload.results.fields)) form.append(field, value);
    form.append('file', new Blob([file.bytes], { type: file.contentType }), file.name);
    await this.http.postToStorage(upload.results.url, form, signal);
    await this.http.write(
      {
        method: 'POST',
        path: '/candidate.uploadFile',
        body: { candidateId: target.atsCandidateId, fileHandle: upload.results.handle },
        signal,
      },
      v.unknown(),
    );
    return {};
  };
}
