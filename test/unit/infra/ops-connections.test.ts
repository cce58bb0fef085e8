import { describe, expect, it } from 'vitest';
import {
  connectionsCommand,
  connectionsOfFile,
  noSuchFile,
  partnerKeyRefusal,
} from '../../../infra/cli/ops/connections';

/** An admin API the commands below must never reach: they are refused, or answered, before any call. */
const unreachable = { url: 'http://127.0.0.1:9/admin/connections', key: 'k' };

describe('Function: the ops connections commands, before the admin API is called', () => {
  it('refuses --prune outside import, and names the FILE put and import take (exit 2)', async () => {
    expect(await connectionsCommand(unreachable, { sub: 'put', arg: 'f.json', prune: true })).toEqual({
      lines: ['connections put: --prune goes with import only (import FILE --prune)'],
      code: 2,
    });
    expect(await connectionsCommand(unreachable, { sub: 'import', arg: undefined })).toEqual({
      lines: ['connections import: needs FILE (see npm run ops)'],
      code: 2,
    });
    expect((await connectionsCommand(unreachable, { sub: 'disable', arg: undefined })).lines).toEqual([
      'connections disable: needs an argument (see npm run ops)',
    ]);
  });

  it("says a missing file is missing, not Node's ENOENT line", async () => {
    const error = await connectionsCommand(unreachable, { sub: 'put', arg: 'config/no-such-file.json' }).catch(
      (e: unknown) => e,
    );
    expect(noSuchFile(error)).toBe('config/no-such-file.json: no such file');
    expect(noSuchFile(new Error('throttled'))).toBeUndefined();
  });

  it("reads a connections file with the running stack's sandbox URLs filled in, as put does", () => {
    const placeholders = {
      GREENHOUSE_SANDBOX_URL: 'http://127.0.0.1:4020',
      ASHBY_SANDBOX_URL: 'http://127.0.0.1:4030',
      LEVER_SANDBOX_URL: 'http://127.0.0.1:4040',
      WORKABLE_SANDBOX_URL: 'http://127.0.0.1:4050',
      INTERVIEW_SANDBOX_URL: 'http://127.0.0.1:4010',
      KOMBO_SANDBOX_URL: 'http://127.0.0.1:4060',
    };
    const connections = connectionsOfFile('config/connections.local.json', placeholders);
    expect(connections.find((c) => c.id === 'demo-lever')?.atsBaseUrl).toBe('http://127.0.0.1:4040');
    // Without a running stack, the placeholder is named, not a URL said to be wrong.
    expect(() => connectionsOfFile('config/connections.local.json', {})).toThrow(/which only the local stack fills in/);
  });
});

describe('Function: partnerKeyRefusal (ops partner-key)', () => {
  const stored = (orders?: Record<string, unknown>) => ({
    status: 200,
    body: { connection: { id: 'c', ...(orders ? { orders } : {}) } },
  });

  it('issues a key for a connection that takes orders from inside Greenhouse or Ashby', () => {
    expect(partnerKeyRefusal('c', stored({ greenhouse: { tests: [] } }))).toBeUndefined();
    expect(partnerKeyRefusal('c', stored({ ashby: {} }))).toBeUndefined();
  });

  it('refuses one the admin API does not know, or one that takes no such orders', () => {
    expect(partnerKeyRefusal('c', { status: 404, body: { error: 'no connection c' } })).toBe(
      'no connection c in the connections table (see: npm run ops -- connections list)',
    );
    expect(partnerKeyRefusal('c', stored())).toBe(
      'c takes no orders from inside its ATS: set its orders.greenhouse or orders.ashby first',
    );
    expect(partnerKeyRefusal('c', stored({ kombo: {} }))).toMatch(/takes no orders/);
    expect(partnerKeyRefusal('c', { status: 403, body: { error: 'Forbidden' } })).toBe(
      'the admin API answered 403: c could not be checked, so no key is issued',
    );
  });

  it('issues it where the admin API is out of reach or answers another 404 (a wrong URL): nothing to check by', () => {
    expect(partnerKeyRefusal('c', undefined)).toBeUndefined();
    expect(partnerKeyRefusal('c', { status: 404, body: { error: 'Not Found' } })).toBeUndefined();
  });
});
