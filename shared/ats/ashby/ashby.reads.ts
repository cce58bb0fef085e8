import type * as v from 'valibot';
import type { AtsHttpClient } from '../ats-http';
import { Pager, type PagedList } from '../paging';
import { applicationInfoSchema } from './ashby.schemas';
import { ashbyProfile } from './profile';

/** The RPC reads every part of the Ashby adapter shares: one read, a list's pages, one application. */
export class AshbyReads {
  /** Ashby's lists page by `cursor` in the body while `moreDataAvailable` (its profile's paging). */
  public readonly pager: Pager;

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
}
