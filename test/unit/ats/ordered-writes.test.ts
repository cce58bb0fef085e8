import { describe, expect, it } from 'vitest';
import * as v from 'valibot';
import { createAtsAdapter } from '../../../shared/ats';
import { AtsHttpClient, type AtsRequest } from '../../../shared/ats/ats-http';
import { parseConnections } from '../../../shared/config';
import { connectionDocument, workableFields } from '../../helpers/connections';
import { loadFixture } from '../../helpers/fixtures';
import { route, stubFetch, type StubAnswer, type StubCall } from '../../helpers/stub-fetch';

// A status tag's write that got no answer may still land, after a later worker's status (chaos, beside a busy
// process: an Ashby candidate written back, tagged "expired"). It is sent again in the call only after the ATS's own
// 5xx; with no answer it goes up as may-have-landed, and the message's retry shows the claimed status again
// (test/unit/pipeline/status-race.test.ts). A write whose late landing undoes nothing is still sent again at once.

type Answer = number | 'no answer';
const immediately = { sleep: async () => undefined };

/** A client of an ATS reached through no network: each call takes the next answer, the last one repeating. */
function client(answers: Answer[], relayed = false) {
  const sent: string[] = [];
  const fetchImpl = (async (input: string | URL | Request, init?: RequestInit) => {
    sent.push(`${init?.method} ${String(input)}`);
    const answer = answers[Math.min(sent.length, answers.length) - 1];
    if (answer === 'no answer') throw new TypeError('fetch failed: socket hang up');
    return new Response('{}', { status: answer ?? 200 });
  }) as typeof fetch;
  const authorization = async () => 'Bearer key';
  const options = { baseUrl: 'https://ats.test', authorization, fetch: fetchImpl, relayed, ...immediately };
  return { http: new AtsHttpClient(options), sent };
}

const tagWrite: AtsRequest = {
  ...{ method: 'PUT', path: '/candidates/c-1/tags', body: { tags: ['ai-interview-expired'] } },
  ...{ idempotent: true, ordered: true },
};

describe('AtsHttpClient: a write whose order matters', () => {
  // A gateway's 502 or 504, a CDN's 520 or 524 (the origin did not answer in time): none says the write is not landing.
  it.each([['no answer'], [502], [504], [520], [524]] as const)(
    'after %s: sent once, and goes up as may-have-landed',
    async (fault) => {
      const { http, sent } = client([fault, 200]);
      await expect(http.write(tagWrite, v.unknown())).rejects.toMatchObject({ mayHaveSucceeded: true });
      expect(sent).toHaveLength(1);
    },
  );

  it.each([[500], [503], [408]] as const)("after the server's own %s: sent again at once", async (status) => {
    const { http, sent } = client([status, 200]);
    await http.write(tagWrite, v.unknown());
    expect(sent).toHaveLength(2);
  });

  it("through an API that relays writes (Kombo's), even its 500 is no answer: sent once", async () => {
    const { http, sent } = client([500, 200], true);
    await expect(http.write(tagWrite, v.unknown())).rejects.toMatchObject({ mayHaveSucceeded: true });
    expect(sent).toHaveLength(1);
  });

  it('a write whose late landing undoes nothing (an upload handle) is sent again after no answer', async () => {
    const { http, sent } = client(['no answer', 200]);
    await http.write({ ...tagWrite, ordered: false }, v.unknown());
    expect(sent).toHaveLength(2);
  });
});

/** Each adapter's status tag, each of its writes (`lost`) answered by nothing the first time, reads as documented. */
const ADAPTERS = {
  ashby: {
    fields: { id: 'acme-ashby', ats: 'ashby', atsBaseUrl: 'https://api.ashbyhq.com' },
    lost: ['POST /candidate.removeTag', 'POST /candidate.addTag'],
    answer: (call: StubCall): StubAnswer => {
      const ok = (results: unknown) => ({ status: 200, json: { success: true, results } });
      const invited = { id: 'tag-i', title: 'AI interview: invited' };
      if (call.url.pathname === '/candidateTag.list')
        return ok([invited, { id: 'tag-e', title: 'AI interview: expired' }]);
      if (call.url.pathname === '/candidate.info') return ok({ id: 'cand-1', tags: [invited] });
      return ok({});
    },
  },
  lever: {
    fields: { id: 'acme-lever', ats: 'lever', atsBaseUrl: 'https://api.lever.co', atsUserId: 'u-1' },
    lost: [
      'POST /v1/opportunities/app-1/removeTags?perform_as=u-1',
      'POST /v1/opportunities/app-1/addTags?perform_as=u-1',
    ],
    answer: (): StubAnswer => ({ status: 200, json: { data: {} } }),
  },
  workable: {
    fields: workableFields(),
    lost: ['PUT /spi/v3/candidates/cand-1/tags'],
    answer: (call: StubCall): StubAnswer => {
      if (call.method === 'PUT') return { status: 202 };
      const read = loadFixture<{ candidate: Record<string, unknown> }>('contract/ats/fixtures/workable-candidate.json');
      return { status: 200, json: { candidate: { ...read.candidate, tags: ['python', 'ai-interview-invited'] } } };
    },
  },
} as const;
const CASES = Object.entries(ADAPTERS).flatMap(([kind, { lost }]) => lost.map((path) => [kind, path] as const));

describe('Status tags: a write with no answer is not sent again in the call', () => {
  it.each(CASES)('%s: %s', async (kind, lost) => {
    const { fields, answer } = ADAPTERS[kind as keyof typeof ADAPTERS];
    let lostOnce = false;
    const stub = stubFetch((call) => {
      if (route(call) !== lost || lostOnce) return answer(call);
      lostOnce = true;
      throw new TypeError('fetch failed: socket hang up');
    });
    const connection = parseConnections(connectionDocument(fields))[0]!;
    const secrets = { interviewApiKey: 'k', interviewWebhookToken: 't'.repeat(32), atsApiKey: 'key' };
    const adapter = createAtsAdapter(connection, secrets, { fetch: stub.fetch, ...immediately });
    const target = { atsJobId: 'job-1', atsApplicationId: 'app-1', atsCandidateId: 'cand-1' };
    const others = ['AI interview: invited', 'ai-interview-invited'];

    await expect(adapter.setStatusTag?.(target, 'AI interview: expired', others)).rejects.toMatchObject({
      mayHaveSucceeded: true,
    });
    expect(stub.calls.filter((c) => route(c) === lost)).toHaveLength(1);
  });
});
