import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../../infra/local/local-stack';
import { QueuePublisher, type StageEnteredMessage } from '../../../shared/queue';
import { emailsTo, invitedInterviewId, useTestStack } from '../../helpers/local-stack';
import { waitFor } from '../../helpers/local-http';
import { runOps } from '../../helpers/ops-cli';

const ID = 'acme-greenhouse';
const SECRET_REF = 'connector/acme-greenhouse';

/**
 * A customer added, changed, turned off and on while the local stack runs, through the admin API and its CLI
 * (`npm run ops -- connections …`): no restart, every function reading the connection from the connections table
 * within its cache time (2 s here).
 */
/** The connections' cache time of this file's stack: a change is in effect within it. */
const CACHE_SECONDS = 2;

describe('Connections in DynamoDB, changed through the admin API with no restart', () => {
  const held = useTestStack('connections-admin', { connectionCacheSeconds: CACHE_SECONDS });
  let stack: LocalStack;
  let admin: { url: string; key: string };
  let file: string;
  let atsWebhookSecret: string;
  const call = async (method: string, path: string, body?: unknown, key = admin.key) => {
    const response = await fetch(`${admin.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as Record<string, any> };
  };
  /** A new customer on the Greenhouse sandbox: its secret and interview-service account set up as an operator would. */
  const acme = () => {
    const demo = JSON.parse(readFileSync(JSON.parse(readFileSync(stack.stackFile, 'utf8')).files.connections, 'utf8'))
      .connections[0] as Record<string, any>;
    return {
      ...demo,
      id: ID,
      secretRef: SECRET_REF,
      // The demo connection invites at "AI Interview" on the same sandbox: this customer at another stage.
      triggers: [{ ...demo.triggers[0], id: 'screen', stage: { name: 'Hiring Manager Review' } }],
    };
  };

  beforeAll(async () => {
    stack = held.stack;
    admin = JSON.parse(readFileSync(stack.stackFile, 'utf8')).admin;
    const secretsPath = JSON.parse(readFileSync(stack.stackFile, 'utf8')).files.secrets as string;
    const secrets = JSON.parse(readFileSync(secretsPath, 'utf8'));
    const demo = secrets[stack.connections.find((c) => c.ats === 'greenhouse')!.secretRef];
    const interviewApiKey = `acme-${randomUUID()}`;
    stack.interview.addAccount(interviewApiKey);
    atsWebhookSecret = randomBytes(24).toString('hex');
    const interviewWebhookToken = randomBytes(24).toString('hex');
    secrets[SECRET_REF] = { ...demo, interviewApiKey, atsWebhookSecret, interviewWebhookToken };
    writeFileSync(secretsPath, JSON.stringify(secrets));
    file = join(held.workDir, 'acme.json');
    writeFileSync(file, JSON.stringify({ connections: [acme()] }));
  });

  const moveIn = async (name: string, stageName: string) => {
    const email = `${name}.${randomUUID().slice(0, 6)}@candidates.example.com`;
    const application = stack.ats.greenhouse.addCandidate({ firstName: name, lastName: 'Acme', email, jobId: '3301' });
    const deliveries = await stack.ats.greenhouse.moveCandidate({ applicationId: application.id, stageName });
    const acmeDelivery = deliveries.find((d) => d.url.endsWith(`/webhooks/ats/${ID}`));
    return { email, application, acmeDelivery };
  };

  it('refuses a request without the key before reading it, and never returns a secret', async () => {
    const refused = await fetch(admin.url, { method: 'GET', headers: { authorization: 'Bearer wrong' } });
    expect(refused.status).toBe(403);
    expect((await call('GET', '', undefined, 'wrong')).status).toBe(403);
    const listed = await call('GET', '');
    expect(listed.status).toBe(200);
    expect(listed.body.connections.map((c: { id: string }) => c.id)).toContain('demo-greenhouse');
    const text = JSON.stringify((await call('GET', '/demo-greenhouse')).body);
    expect(text).toContain('secretRef');
    const secrets = JSON.parse(readFileSync(JSON.parse(readFileSync(stack.stackFile, 'utf8')).files.secrets, 'utf8'));
    for (const value of Object.values(secrets['connector/demo-greenhouse'] as Record<string, unknown>))
      if (typeof value === 'string' && value.length > 8) expect(text).not.toContain(value);
  });

  it('adds a customer with `ops connections put`: its next stage change is invited within 60 s', async () => {
    const put = await runOps(stack, 'connections', 'put', file);
    expect(put.out).toContain(`${ID}: created (version 1)`);
    expect(put.status).toBe(0);
    // Then the customer adds the webhook in Greenhouse, whose ping the new connection answers at once.
    const url = `${stack.gatewayUrl}/webhooks/ats/${ID}`;
    await stack.ats.greenhouse.registerWebhook({ url, secret: atsWebhookSecret });
    const pings = stack.greenhouse.state.deliveries.filter((d) => d.url === url && d.action === 'ping');
    expect(pings.map((d) => d.status)).toEqual([200]);
    const { email } = await moveIn('Ada', 'Hiring Manager Review');
    expect(await invitedInterviewId(stack, email, 60_000)).toMatch(/\w/);
    // Putting the same file again, through put or import, changes nothing and says so.
    expect((await runOps(stack, 'connections', 'put', file)).out).toContain(`${ID}: unchanged (version 1)`);
    expect((await runOps(stack, 'connections', 'import', file)).out).toContain(`${ID}: unchanged (version 1)`);
  }, 120_000);

  it('refuses a stale write with 409 and an invalid one with 400 naming the field', async () => {
    const read = await call('GET', `/${ID}`);
    const changed = await call('PATCH', `/${ID}`, {
      patch: { webhookFreshnessMinutes: 30 },
      version: read.body.version,
    });
    expect(changed.status).toBe(200);
    // Written by someone who read it before that change.
    const stale = await call('PATCH', `/${ID}`, { patch: { webhookFreshnessMinutes: 20 }, version: read.body.version });
    expect(stale.status).toBe(409);
    const current = await call('GET', `/${ID}`);
    expect(current.body.connection.webhookFreshnessMinutes).toBe(30);
    const invalid = await call('PATCH', `/${ID}`, {
      patch: { triggers: [{ ...current.body.connection.triggers[0], stage: {} }] },
      version: current.body.version,
    });
    expect(invalid.status).toBe(400);
    expect(invalid.body.field).toBe('connection.triggers.0.stage');
    expect((await call('GET', `/${ID}`)).body.version).toBe(current.body.version);
  });

  it('a changed trigger takes effect within the cache time', async () => {
    const current = await call('GET', `/${ID}`);
    const triggers = [{ ...current.body.connection.triggers[0], stage: { name: 'Offer' } }];
    const patched = await call('PATCH', `/${ID}`, { patch: { triggers }, version: current.body.version });
    expect(patched.status).toBe(200);
    expect(patched.body.version).toBe(current.body.version + 1);
    await new Promise((resolve) => setTimeout(resolve, CACHE_SECONDS * 1000 + 500));
    const { email } = await moveIn('Bea', 'Offer');
    expect(await invitedInterviewId(stack, email, 60_000)).toMatch(/\w/);
  }, 120_000);

  it('disabled: webhooks enqueue nothing, queued work is parked; enabled: the parked work completes', async () => {
    expect((await runOps(stack, 'connections', 'disable', ID)).out).toContain(`${ID}: disabled`);
    await new Promise((resolve) => setTimeout(resolve, CACHE_SECONDS * 1000 + 500));
    const { email, application, acmeDelivery } = await moveIn('Cy', 'Offer');
    // Answered, so the ATS does not deliver it again, and dropped.
    expect(acmeDelivery?.status).toBe(200);
    // Work already queued (as the sweep would have enqueued it) waits on the queue.
    const parkedEmail = `dee.${randomUUID().slice(0, 6)}@candidates.example.com`;
    const parked = stack.ats.greenhouse.addCandidate({
      firstName: 'Dee',
      lastName: 'Acme',
      email: parkedEmail,
      jobId: '3301',
    });
    stack.ats.greenhouse.setWebhooksEnabled(false);
    await stack.ats.greenhouse.moveCandidate({ applicationId: parked.id, stageName: 'Offer' });
    stack.ats.greenhouse.setWebhooksEnabled(true);
    const message: StageEnteredMessage = {
      v: 1,
      kind: 'stage-entered',
      enqueueId: randomUUID(),
      connectionId: ID,
      receivedAt: Date.now(),
      event: {
        deliveryId: `sweep-${randomUUID()}`,
        atsJobId: '3301',
        atsApplicationId: parked.id,
        atsCandidateId: parked.candidateId,
        stage: { name: 'Offer' },
        candidate: { name: 'Dee Acme', email: parkedEmail },
      },
    };
    const { stats } = stack.sources.invite;
    const received = stats.records;
    await new QueuePublisher({ client: stack.sqs }).publish(stack.queues.stage.url, message);
    // The worker took it and parked it: received, and no invocation still at work.
    await waitFor(() => stats.records > received && stats.inFlight === 0, 30_000, 'the parked message');
    expect(await emailsTo(stack, email)).toEqual([]);
    expect(await emailsTo(stack, parkedEmail)).toEqual([]);
    expect(stack.ats.greenhouse.notesOf(application.id)).toEqual([]);

    const enabled = await runOps(stack, 'connections', 'enable', ID);
    expect(enabled.out).toContain(`${ID}: enabled`);
    expect(await invitedInterviewId(stack, parkedEmail, 60_000)).toMatch(/\w/);
    // The stage change that came while it was off was answered and dropped: nothing reached its candidate.
    expect(await emailsTo(stack, email)).toEqual([]);
  }, 150_000);

  it('rotates the keys the connector issues into the secret, never answered; the old token is refused', async () => {
    const secretsPath = JSON.parse(readFileSync(stack.stackFile, 'utf8')).files.secrets as string;
    const tokenOf = () => JSON.parse(readFileSync(secretsPath, 'utf8'))[SECRET_REF].interviewWebhookToken as string;
    const old = tokenOf();
    const rotated = await runOps(stack, 'connections', 'rotate-keys', ID);
    expect(rotated.status).toBe(0);
    // The token of the interview webhook, and the partner key of the Greenhouse orders this customer takes.
    expect(rotated.out).toContain(`${ID}: interviewWebhookToken, greenhousePartnerKey rotated in secret ${SECRET_REF}`);
    const token = tokenOf();
    expect(token).not.toBe(old);
    expect(rotated.out).not.toContain(token);
    const post = (t: string) =>
      fetch(`${stack.gatewayUrl}/webhooks/interview/${ID}/${t}`, { method: 'POST', body: '{}' }).then((r) => r.status);
    expect(await post(old)).toBe(401);
    // The new token is accepted (the body is then checked: 400 for this empty delivery).
    expect(await post(token)).toBe(400);
  });

  it('audit lists each change with its principal', async () => {
    const audit = await runOps(stack, 'connections', 'audit', ID);
    expect(audit.status).toBe(0);
    const lines = audit.out.trim().split('\n');
    for (const action of ['create', 'patch', 'disable', 'enable', 'rotate-keys'])
      expect(lines.some((l) => l.includes(` ${action} by local:operator-key`))).toBe(true);
    expect(audit.out).toContain('triggers');
    const listed = await runOps(stack, 'connections', 'list');
    expect(listed.out).toMatch(new RegExp(`${ID} \\(greenhouse\\): enabled, version \\d+`));
  });

  it('exits non-zero when a connections command is refused or mistyped, naming why', async () => {
    // Each command a process of its own, started together: the suite's load makes one start take seconds.
    const [missing, mistyped, bare, extra, command, local, option] = await Promise.all([
      runOps(stack, 'connections', 'get', 'no-such-connection'),
      runOps(stack, 'connections', 'frob', ID),
      runOps(stack, 'connections', 'disable'),
      runOps(stack, 'unmatched', 'junk'),
      runOps(stack, 'frob'),
      // The local file's `${…_SANDBOX_URL}` placeholders are filled in from the running stack: each connection taken.
      runOps(stack, 'connections', 'import', 'config/connections.local.json'),
      runOps(stack, 'status', '--frob'),
    ]);
    expect([missing.status, missing.out]).toEqual([1, expect.stringContaining('no-such-connection')]);
    expect([mistyped.status, mistyped.out]).toEqual([2, expect.stringContaining('connections frob: unknown (list,')]);
    expect([bare.status, bare.out]).toEqual([2, expect.stringContaining('connections disable: needs an argument')]);
    expect([extra.status, extra.out]).toEqual([2, expect.stringContaining('ops: unexpected junk after unmatched')]);
    expect([command.status, command.out]).toEqual([2, expect.stringContaining('ops: unknown command frob')]);
    expect(local.status).toBe(0);
    expect(local.out.trim().split('\n')).toEqual(
      ['greenhouse', 'ashby', 'lever', 'workable'].map((kind) =>
        expect.stringMatching(new RegExp(`^demo-${kind}: (unchanged|replaced) \\(version \\d+\\)$`)),
      ),
    );
    expect([option.status, option.out]).toEqual([2, expect.stringContaining("Unknown option '--frob'")]);
  });

  it('says when a --connection that found nothing is no connection at all (a typo), and exits non-zero', async () => {
    const unknown = 'no connection acme-grenhouse in the connections table';
    const commands = ['failed', 'unmatched', 'orders'];
    // Started together, as above: a connection that exists and has nothing to show is not flagged.
    const [typos, quiets, status] = await Promise.all([
      Promise.all(commands.map((command) => runOps(stack, command, '--connection', 'acme-grenhouse'))),
      Promise.all(commands.map((command) => runOps(stack, command, '--connection', ID))),
      runOps(stack, 'status', '--connection', 'acme-grenhouse', '--application', '1'),
    ]);
    for (const typo of typos) expect([typo.status, typo.out]).toEqual([1, expect.stringContaining(unknown)]);
    for (const quiet of quiets)
      expect([quiet.status, quiet.out]).toEqual([0, expect.not.stringContaining('no connection')]);
    expect([status.status, status.out]).toEqual([2, expect.stringContaining(unknown)]);
  });
});
