import * as v from 'valibot';
import type { Connection } from '../../config';
import type { AtsHttpClient } from '../ats-http';
import type { AtsFile, AtsMethod } from '../port';
import type { WorkableReads } from './workable.reads';

/** The comment that carries the file names it (alone, or after the report note), which is how a retry finds it. */
export const fileComment = (name: string) => `Report file: ${name}`;

/** A comment's attachment: one file, its bytes in base64 (reference: comment-on-candidate). */
export const commentAttachment = (file: AtsFile) => ({
  name: file.name,
  data: Buffer.from(file.bytes).toString('base64'),
});

/**
 * The report file on the candidate's timeline (ats-routes.json, Workable `POST /spi/v3/candidates/{id}/comments`): a
 * comment with one attachment `{name, data}` in base64. Activities carry no attachment field, so the comment's body
 * names the file, and a retry finds it among the candidate's comments (`activities?actions=comment`).
 */
export class WorkableFiles {
  public constructor(
    private readonly http: AtsHttpClient,
    private readonly reads: WorkableReads,
    private readonly connection: Connection,
  ) {}

  public readonly findFile: AtsMethod<'findFile'> = async (target, name, signal) => {
    const candidate = encodeURIComponent(target.atsCandidateId);
    const first = `/spi/v3/candidates/${candidate}/activities?actions=comment&limit=100`;
    const id = await this.reads.commentWith(first, fileComment(name), signal);
    return id === undefined ? undefined : { fileId: id };
  };

  public readonly attachFile: AtsMethod<'attachFile'> = async (target, file, signal) => {
    const comment = { body: fileComment(file.name), attachment: commentAttachment(file) };
    await this.http.write(
      {
        method: 'POST',
        path: `/spi/v3/candidates/${encodeURIComponent(target.atsCandidateId)}/comments`,
        body: { member_id: this.connection.atsUserId, comment },
        signal,
      },
      v.unknown(),
    );
    return {};
  };
}
