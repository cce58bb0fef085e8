import { describe, expect, it, vi } from 'vitest';
import { InterviewServiceClient } from '../../../shared/interview-service';

/** A client whose `GET /interview/invites` answers `invites` (one page), its requests kept. */
function clientAnswering(invites: Record<string, unknown>[]) {
  const fetch = vi.fn(async (_url: string | URL | Request) =>
    Response.json({ status: 'true', message: '', data: invites }),
  );
  const client = new InterviewServiceClient({
    baseUrl: 'https://api.interviews.example.com',
    apiKey: 'k',
    fetch: fetch as unknown as typeof globalThis.fetch,
  });
  return { client, fetch };
}

const invite = (interviewId: string, email: string) => ({
  candidate_id: `c-${interviewId}`,
  interview_id: interviewId,
  interview_name: 'Screen',
  candidate_name: 'Ana',
  candidate_email_id: email,
});

describe('Interview service client: the invitation of an address to an interview', () => {
  it('asks by interview and keyword, and matches the address whatever its case', async () => {
    const { client, fetch } = clientAnswering([invite('int-1', 'ana@example.com')]);
    expect(await client.findInvitation('int-1', 'Ana@Example.com')).toMatchObject({ candidate_id: 'c-int-1' });
    const url = new URL(String(fetch.mock.calls[0]?.[0]));
    expect(url.pathname).toBe('/interview/invites');
    expect(url.searchParams.get('interview_id')).toBe('int-1');
    expect(url.searchParams.get('keyword')).toBe('Ana@Example.com');
  });

  it("never takes another interview's invitation of the same address for it", async () => {
    const { client } = clientAnswering([invite('int-other', 'ana@example.com')]);
    expect(await client.findInvitation('int-1', 'ana@example.com')).toBeUndefined();
  });

  it("finds it listed after another interview's invitation of the same candidate", async () => {
    const other = { ...invite('int-other', 'ana@example.com'), candidate_id: 'c-1' };
    const { client } = clientAnswering([other, { ...invite('int-1', 'ana@example.com'), candidate_id: 'c-1' }]);
    expect(await client.findInvitation('int-1', 'ana@example.com')).toMatchObject({ interview_id: 'int-1' });
  });
});
