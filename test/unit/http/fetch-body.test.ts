import { describe, expect, it } from 'vitest';
import { BODY_LIMITS, sendHttpRequest } from '../../../shared/http/fetch';

/** A server's answer that never ends on its own: 64-KiB chunks while they are read, counting them. */
function endless(status: number) {
  let pulled = 0;
  let cancelled = false;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      pulled += 1;
      controller.enqueue(new Uint8Array(64 * 1024).fill(120));
    },
    cancel() {
      cancelled = true;
    },
  });
  const fetchImpl = (async () => new Response(body, { status })) as unknown as typeof fetch;
  return { fetchImpl, state: () => ({ pulled, cancelled }) };
}

describe('Function: sendHttpRequest reads a bounded body', () => {
  it.each([
    [403, BODY_LIMITS.error],
    [200, BODY_LIMITS.ok],
  ])('an answer %i is read up to %i bytes, and the rest is never pulled', async (status, limit) => {
    const server = endless(status);
    const request = { url: 'http://127.0.0.1:9/v1/candidates', method: 'GET', timeoutMs: 10_000 } as const;
    const response = await sendHttpRequest(request, server.fetchImpl);
    expect(response.status).toBe(status);
    expect(response.bodyText.length).toBe(limit);
    expect(server.state().cancelled).toBe(true);
    expect(server.state().pulled).toBeLessThanOrEqual(limit / (64 * 1024) + 2);
  });

  it('reads a body within the limit whole', async () => {
    const fetchImpl = (async () => new Response('{"ok":true}', { status: 200 })) as unknown as typeof fetch;
    const request = { url: 'http://127.0.0.1:9/x', method: 'GET', timeoutMs: 1_000 } as const;
    expect((await sendHttpRequest(request, fetchImpl)).bodyText).toBe('{"ok":true}');
  });
});
