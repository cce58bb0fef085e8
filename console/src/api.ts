/** The console's calls to its API: same origin, the operator's token on each, JSON both ways. */
export interface Answer<T = Record<string, unknown>> {
  status: number;
  body: T & { error?: string; field?: string };
}

const TOKEN_KEY = 'console.token';

export const session = {
  token: (): string | null => sessionStorage.getItem(TOKEN_KEY),
  set: (token: string): void => sessionStorage.setItem(TOKEN_KEY, token),
  clear: (): void => sessionStorage.removeItem(TOKEN_KEY),
};

/** Told when the API refuses the operator (a token expired or wrong): the console signs out. */
export const onSignedOut: { handler?: () => void } = {};

async function call<T>(base: string, method: string, path: string, body?: unknown, auth = true): Promise<Answer<T>> {
  const headers: Record<string, string> = { accept: 'application/json' };
  const token = session.token();
  if (auth && token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(`${base}${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch {
    return { status: 0, body: { error: 'the connector did not answer: check your connection and try again' } as never };
  }
  const answer = (await response.json().catch(() => ({}))) as Answer<T>['body'];
  if (auth && (response.status === 401 || response.status === 403)) onSignedOut.handler?.();
  return { status: response.status, body: answer };
}

/** The operators' API (`/console-api`). */
export const api = <T = Record<string, unknown>>(method: string, path: string, body?: unknown) =>
  call<T>('/console-api', method, path, body);

/** A customer's connect link (`/connect-api/<token>`): the token is its only credential. */
export const connectApi = <T = Record<string, unknown>>(token: string, method: string, path: string, body?: unknown) =>
  call<T>(`/connect-api/${encodeURIComponent(token)}`, method, path, body, false);

/** A moment as the operator's browser tells time, with its zone (`timeStyle: long`), everywhere in the console. */
export const when = (at: number | string | undefined): string =>
  at ? new Date(at).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'long' }) : '—';
