import * as v from 'valibot';
import type { Connection, ConnectionSecrets } from '../../config';
import { errorMessage } from '../../errors';
import { parseRetryAfter, redactUrl, sendHttpRequest } from '../../http';
import { basicAuth, safeJson } from '../ats-http';
import { AtsError, ATS_ERROR_CODES, atsErrorForStatus } from '../errors';
import { tokenResponseSchema } from './greenhouse.schemas';

export const GREENHOUSE_DEFAULT_AUTH_URL = 'https://auth.greenhouse.io/token';
/** Tokens are refreshed this long before Greenhouse says they expire. */
const TOKEN_REFRESH_MARGIN_MS = 60_000;

/** Greenhouse's OAuth client-credentials token for a connection's user (`sub`), renewed before it ends. */
export class GreenhouseToken {
  private token: { value: string; refreshAt: number } | undefined;
  private tokenRequest: Promise<string> | undefined;

  private readonly connection: Connection;
  private readonly secrets: ConnectionSecrets;
  private readonly fetchImpl: typeof fetch;
  private readonly timeoutMs: number;
  private readonly now: () => number;

  public constructor(options: {
    connection: Connection;
    secrets: ConnectionSecrets;
    fetch: typeof fetch;
    timeoutMs: number;
    now: () => number;
  }) {
    this.connection = options.connection;
    this.secrets = options.secrets;
    this.fetchImpl = options.fetch;
    this.timeoutMs = options.timeoutMs;
    this.now = options.now;
  }

  /**
   * The access token, asked for once for the calls that need one at the same moment: one token in use at a time,
   * so the calls share one rate-limit window however the ATS counts them (the sandbox counts them per token).
   */
  public accessToken(signal?: AbortSignal, force = false): Promise<string> {
    if (!force && this.token && this.token.refreshAt > this.now()) return Promise.resolve(this.token.value);
    this.tokenRequest ??= this.requestToken(signal).finally(() => {
      this.tokenRequest = undefined;
    });
    return this.tokenRequest;
  }

  private async requestToken(signal?: AbortSignal): Promise<string> {
    const { atsClientId, atsClientSecret } = this.secrets;
    if (!atsClientId || !atsClientSecret)
      throw new AtsError(
        ATS_ERROR_CODES.unauthorized,
        `connection ${this.connection.id}: atsClientId and atsClientSecret are required for Greenhouse`,
      );
    const url = this.connection.atsAuthUrl ?? GREENHOUSE_DEFAULT_AUTH_URL;
    const response = await sendHttpRequest(
      {
        url,
        method: 'POST',
        headers: {
          authorization: basicAuth(atsClientId, atsClientSecret),
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({ grant_type: 'client_credentials', sub: this.connection.atsUserId }).toString(),
        timeoutMs: this.timeoutMs,
        signal,
      },
      this.fetchImpl,
    ).catch((error: unknown) => {
      throw new AtsError(ATS_ERROR_CODES.unavailable, `token request failed: ${errorMessage(error)}`, {
        cause: error,
      });
    });
    if (response.status !== 200)
      throw atsErrorForStatus(
        { status: response.status, retryAfterMs: parseRetryAfter(response.headers) },
        `POST ${redactUrl(url)}`,
        '',
      );
    const token = v.safeParse(tokenResponseSchema, safeJson(response.bodyText));
    if (!token.success) throw new AtsError(ATS_ERROR_CODES.malformedResponse, 'token response has no access_token');
    this.token = { value: token.output.access_token, refreshAt: this.refreshTime(token.output) };
    return this.token.value;
  }

  /** Greenhouse says when a token ends (`expires_at`); it is renewed a minute before. */
  private refreshTime(token: v.InferOutput<typeof tokenResponseSchema>): number {
    const expiresAt = token.expires_at === undefined ? Number.NaN : Date.parse(token.expires_at);
    const ends = Number.isFinite(expiresAt) ? expiresAt : this.now() + (token.expires_in ?? 3600) * 1000;
    return Math.max(this.now(), ends - TOKEN_REFRESH_MARGIN_MS);
  }
}
