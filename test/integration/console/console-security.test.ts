import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../../infra/local/local-stack';
import { useTestStack } from '../../helpers/local-stack';

/**
 * Who reaches what: every operator page's call needs the operator's sign-in (refused before its body is read); a
 * customer's connect link reaches only its own connection, and answers nothing once used; no secret value of any
 * connection reaches a browser, from the operators' API, the connect link's or the console's files.
 */
describe("The console's sign-in, the connect links' reach, and the secrets kept from the browser", () => {
  const held = useTestStack('console-security');
  let stack: LocalStack;
  let secretValues: string[];
  const call = async (method: string, path: string, options: { key?: string; body?: unknown } = {}) => {
    const response = await fetch(`${stack.gatewayUrl}${path}`, {
      method,
      headers: {
        ...(options.key === undefined ? {} : { authorization: `Bearer ${options.key}` }),
        'content-type': 'application/json',
      },
      ...(options.body === undefined || method === 'GET' ? {} : { body: JSON.stringify(options.body) }),
    });
    return { status: response.status, text: await response.text() };
  };
  const operator = (method: string, path: string, body?: unknown) =>
    call(method, path, { key: stack.operatorKey, body });

  beforeAll(() => {
    stack = held.stack;
    const secretsFile = JSON.parse(readFileSync(stack.stackFile, 'utf8')).files.secrets as string;
    const secrets = JSON.parse(readFileSync(secretsFile, 'utf8')) as Record<string, Record<string, unknown>>;
    // Every value of every connection's secret long enough to be a key, nested ones included.
    const values = (value: unknown): string[] =>
      typeof value === 'string'
        ? [value]
        : value && typeof value === 'object'
          ? Object.values(value).flatMap(values)
          : [];
    secretValues = [...new Set(Object.values(secrets).flatMap(values))].filter((v) => v.length >= 12);
    expect(secretValues.length).toBeGreaterThan(8);
  });

  const OPERATOR_CALLS: [string, string][] = [
    ['GET', '/console-api/overview'],
    ['GET', '/console-api/connections/demo-greenhouse'],
    ['PATCH', '/console-api/connections/demo-greenhouse'],
    ['POST', '/console-api/connections/demo-greenhouse/doctor'],
    ['GET', '/console-api/connections/demo-greenhouse/stages'],
    ['POST', '/console-api/connections/demo-greenhouse/connect-link'],
    ['GET', '/console-api/candidates/demo-greenhouse/1'],
    ['GET', '/console-api/failures'],
    ['POST', '/console-api/failures/redrive'],
    ['POST', '/console-api/failures/retry'],
  ];

  it.each(OPERATOR_CALLS)('refuses %s %s without the operator, or with another key', async (method, path) => {
    expect((await call(method, path, { body: {} })).status).toBe(403);
    expect((await call(method, path, { key: `${stack.operatorKey}x`, body: {} })).status).toBe(403);
    expect((await call(method, path, { key: '', body: {} })).status).toBe(403);
  });

  it('serves the console files to anyone, with nothing in them but the app', async () => {
    for (const file of ['', 'index.html', 'app.js', 'app.css', 'icon.svg', 'config.json']) {
      const served = await call('GET', `/console/${file}`);
      expect(served.status).toBe(200);
      for (const secret of secretValues) expect(served.text).not.toContain(secret);
      expect(served.text).not.toContain(stack.operatorKey);
    }
    expect((await call('GET', '/console/../stack.json')).status).toBe(404);
    // `/console` sends the browser to `/console/`, where index.html's relative app.js resolves (as CloudFront does).
    const bare = await fetch(`${stack.gatewayUrl}/console`, { redirect: 'manual' });
    expect([bare.status, bare.headers.get('location')]).toEqual([301, '/console/']);
  });

  it("answers no secret value in any of the operators' pages", async () => {
    const answers = await Promise.all(
      [
        ['GET', '/console-api/overview'],
        ['GET', '/console-api/connections/demo-greenhouse'],
        ['GET', '/console-api/connections/demo-ashby'],
        ['POST', '/console-api/connections/demo-lever/doctor'],
        ['POST', '/console-api/connections/demo-workable/doctor'],
        ['GET', '/console-api/connections/demo-greenhouse/stages'],
        ['GET', '/console-api/connections/demo-greenhouse/audit'],
        ['GET', '/console-api/failures'],
      ].map(([method, path]) => operator(method as string, path as string)),
    );
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      for (const secret of secretValues) expect(answer.text).not.toContain(secret);
    }
  });

  it('lets a connect link reach its own connection only, never a secret, and nothing once used', async () => {
    const made = await operator('POST', '/console-api/connections/demo-ashby/connect-link', {});
    expect(made.status).toBe(201);
    const { token } = JSON.parse(made.text) as { token: string };
    const summary = await call('GET', `/connect-api/${token}`);
    expect(JSON.parse(summary.text).connectionId).toBe('demo-ashby');
    // The token is the whole credential: the operator's key opens no link, and a link no operator page.
    expect((await call('GET', `/connect-api/${randomUUID()}`, { key: stack.operatorKey })).status).toBe(404);
    expect((await call('GET', '/console-api/overview', { key: token })).status).toBe(403);
    // Its stages are its own ATS's; its doctor, its own connection's.
    const stages = await call('GET', `/connect-api/${token}/stages`);
    expect(stages.status).toBe(200);
    const doctor = JSON.parse((await call('POST', `/connect-api/${token}/doctor`)).text) as { connectionId: string };
    expect(doctor.connectionId).toBe('demo-ashby');
    for (const answer of [summary, stages])
      for (const secret of secretValues) expect(answer.text).not.toContain(secret);
    // The credentials go in and never come back out.
    const key = stack.ats.ashby.credentials.atsApiKey as string;
    const saved = await call('POST', `/connect-api/${token}/credentials`, { body: { atsApiKey: key } });
    expect(JSON.parse(saved.text)).toMatchObject({ saved: true, works: true });
    expect(saved.text).not.toContain(key);
    expect((await call('POST', `/connect-api/${token}/finish`)).status).toBe(200);
    for (const [method, path] of [
      ['GET', ''],
      ['GET', '/stages'],
      ['POST', '/credentials'],
      ['POST', '/trigger'],
      ['POST', '/doctor'],
      ['POST', '/finish'],
    ])
      expect((await call(method as string, `/connect-api/${token}${path}`, { body: {} })).status).toBe(404);
  });
});
