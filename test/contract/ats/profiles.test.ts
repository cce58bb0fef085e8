import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AtsError, connectionRate, createAtsAdapter, PROFILES } from '../../../shared/ats';
import { STEP_KINDS, type VendorProfile } from '../../../shared/ats/profile';
import { signatureFor } from '../../../shared/ats/signatures';
import { type DirectAtsKind, parseConnections } from '../../../shared/config';
import { connectionDocument } from '../../helpers/connections';
import { loadRawFixture } from '../../helpers/fixtures';
import { stubFetch } from '../../helpers/stub-fetch';

// Each vendor is declared once, in its profile (shared/ats/<kind>/profile.ts). These hold the profiles to what they
// claim: each fact to its quoted source and, where the vendor facts file is at hand (../shared/spec/ats-routes.json,
// beside the repository), to its statement there; and the adapters and the HTTP client to the profiles.

// The vendors the connector calls directly; Kombo's profile is held by its own adapter's tests.
const KINDS = Object.keys(PROFILES).filter((k) => k !== 'kombo') as DirectAtsKind[];
const SECRET = 'whsec_test_0123456789';
const SPEC = resolve(import.meta.dirname, '../../../../shared/spec/ats-routes.json');
const BASES: Record<DirectAtsKind, Record<string, unknown>> = {
  greenhouse: { atsAuthUrl: 'https://auth.greenhouse.io/token' },
  ashby: { id: 'acme-ashby', ats: 'ashby', atsBaseUrl: 'https://api.ashbyhq.com' },
  lever: { id: 'acme-lever', ats: 'lever', atsBaseUrl: 'https://api.lever.co', atsUserId: 'u-1' },
  workable: { id: 'acme-workable', ats: 'workable', atsBaseUrl: 'https://acme.workable.com' },
};
const connectionOf = (kind: DirectAtsKind) => parseConnections(connectionDocument(BASES[kind]))[0]!;
const adapterOf = (kind: DirectAtsKind, fetchImpl?: typeof fetch) =>
  createAtsAdapter(
    connectionOf(kind),
    {
      interviewApiKey: 'k',
      interviewWebhookToken: 't'.repeat(32),
      atsApiKey: 'key',
      atsWebhookSecret: SECRET,
      atsClientId: 'id',
      atsClientSecret: 'secret',
    },
    { ...(fetchImpl ? { fetch: fetchImpl } : {}), timeoutMs: 1_000 },
  );

/** The numbers and names a profile declares about its rate, each to be found where it says it comes from. */
function rateFacts(profile: VendorProfile): string[] {
  const rate = profile.rate;
  if (!('requests' in rate)) return [];
  return [String(rate.requests), String(rate.windowMs / 1000), ...('burst' in rate ? [String(rate.burst)] : [])];
}

describe('Contract: each vendor declared once, in its profile', () => {
  it.each(KINDS)('%s: every number and header name its profile declares is in its quoted source', (kind) => {
    const profile = PROFILES[kind];
    for (const fact of rateFacts(profile)) expect(profile.rate.source, `${kind} rate ${fact}`).toContain(fact);
    const headers = profile.rateHeaders;
    if (headers)
      for (const name of [headers.limit, headers.remaining, headers.reset]) expect(headers.source).toContain(name);
    if (profile.signature.header) expect(profile.signature.source).toContain(profile.signature.header);
    if (!profile.throttled.retryAfter) expect(profile.throttled.source).toMatch(/(no|without) Retry-After/);
    expect(profile.paging.source.length).toBeGreaterThan(20);
  });

  it.each(KINDS)('%s: the profile says what the vendor facts file says, where the file is at hand', (kind) => {
    const profile = PROFILES[kind];
    // The repository's own record of the facts (each profile's quoted source) is held above; the file beside the
    // repository, when a reader has it, is the statement each quote was taken from.
    if (!existsSync(SPEC)) {
      expect(profile.rate.source).toMatch(/ats-routes\.json ats\.\w+\.rateLimit/);
      return;
    }
    const spec = (JSON.parse(readFileSync(SPEC, 'utf8')) as { ats: Record<string, any> }).ats[kind];
    const rateText = String(spec.rateLimit);
    const rate = profile.rate;
    if (rate.counted === 'unpublished') expect(rateText).toMatch(/no general limit published/);
    else if ('requests' in rate) {
      const seconds = rate.windowMs / 1000;
      expect(rateText).toMatch(new RegExp(seconds === 1 ? '/s\\b' : `\\b${seconds}[- ]s`));
      // A ceiling the vendor does not publish is quoted from where it was observed instead (its profile's source).
      if (!/ceiling not published/.test(rateText)) expect(rateText).toContain(`${rate.requests} requests`);
      if ('burst' in rate) expect(rateText).toContain(`bursts to ${rate.burst}`);
    }
    const headers = profile.rateHeaders;
    if (headers) {
      const stem = headers.remaining.slice(0, headers.remaining.lastIndexOf('-'));
      expect(rateText).toContain(stem);
      for (const name of [headers.remaining, headers.reset]) expect(rateText).toContain(name.slice(stem.length));
    } else expect(rateText).not.toMatch(/X-Rate-?Limit-Remaining/i);
    if (/Retry-After/.test(rateText))
      expect(/(without|no) Retry-After/.test(rateText)).toBe(!profile.throttled.retryAfter);
    const paging = (spec.routes as { paging?: string }[]).map((r) => String(r.paging ?? '')).join('\n');
    const word = {
      'link-header': 'Link',
      'cursor-in-body': 'body {cursor',
      'offset-token': 'offset',
      'next-url-in-body': 'paging.next',
    }[profile.paging.style];
    expect(paging).toContain(word);
    for (const webhook of spec.webhooks as { signature: string }[]) {
      const scheme = profile.signature;
      if (scheme.header) expect(webhook.signature).toContain(`header ${scheme.header}`);
      else expect(webhook.signature).toMatch(/^no header/);
      if (scheme.format !== '<digest>' && scheme.header)
        expect(webhook.signature).toContain(scheme.format.replace('<digest>', '<hex>'));
    }
  });

  it("the architecture page's table of what each step costs is the profiles' own", () => {
    const page = readFileSync(resolve(import.meta.dirname, '../../../docs/architecture.md'), 'utf8');
    const table = page.slice(page.indexOf('| step | Greenhouse | Ashby | Lever | Workable |'));
    const rows = table.split('\n').slice(2, 2 + STEP_KINDS.length);
    const columns = ['greenhouse', 'ashby', 'lever', 'workable'] as const;
    STEP_KINDS.forEach((step, i) => {
      const cells = (rows[i] ?? '')
        .split('|')
        .slice(2, 6)
        .map((c) => c.trim());
      const declared = columns.map(
        (kind) => `${PROFILES[kind].stepCalls[step]} + ${PROFILES[kind].statusTagCalls[step]}`,
      );
      expect(cells, step).toEqual(declared);
    });
  });

  it.each(KINDS)('%s: a connection with no rate of its own is paced to its profile', (kind) => {
    const rate = PROFILES[kind].rate;
    const paced = connectionRate(connectionOf(kind));
    expect(paced).toEqual('requests' in rate ? { limit: rate.requests, windowMs: rate.windowMs } : undefined);
  });

  it.each(KINDS.filter((k) => PROFILES[k].signature.header !== undefined))(
    '%s: its adapter accepts a delivery signed as its profile says, and names the header when it is missing',
    (kind) => {
      const scheme = PROFILES[kind].signature;
      const header = (scheme.header as string).toLowerCase();
      const fixture = {
        greenhouse: 'greenhouse-reject-candidate',
        ashby: 'ashby-candidate-hire',
        workable: 'workable-candidate-moved',
      }[kind as 'greenhouse' | 'ashby' | 'workable'];
      const rawBody = loadRawFixture(`contract/ats/fixtures/${fixture}.json`);
      const adapter = adapterOf(kind);
      expect(
        adapter.verifyWebhook({ headers: { [header]: signatureFor(scheme, SECRET, rawBody) }, rawBody }, Date.now()),
      ).toEqual({
        valid: true,
      });
      const unsigned = adapter.verifyWebhook({ headers: {}, rawBody }, Date.now());
      expect(unsigned).toEqual({ valid: false, reason: `no ${scheme.header} header` });
      const other = adapter.verifyWebhook(
        {
          headers: { [header]: signatureFor(scheme, 'another-secret', rawBody) },
          rawBody,
        },
        Date.now(),
      );
      expect(other.valid).toBe(false);
    },
  );

  it.each(KINDS.filter((k) => PROFILES[k].rateHeaders !== undefined && !PROFILES[k].throttled.retryAfter))(
    '%s: a 429 without Retry-After waits for the reset its profile names',
    async (kind) => {
      const names = PROFILES[kind].rateHeaders as NonNullable<VendorProfile['rateHeaders']>;
      const resetAt = Math.ceil(Date.now() / 1000) + 7;
      const stub = stubFetch(() => ({
        status: 429,
        json: { error: 'Too many requests' },
        headers: { [names.limit]: '10', [names.remaining]: '0', [names.reset]: String(resetAt) },
      }));
      const error = await adapterOf(kind, stub.fetch)
        .readStanding({ atsApplicationId: 'a', atsCandidateId: 'c', atsJobId: 'j' })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AtsError);
      expect((error as AtsError).retryAfterMs).toBeGreaterThan(5_000);
      expect((error as AtsError).retryAfterMs).toBeLessThanOrEqual(8_000);
    },
  );
});
