import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../../infra/local/local-stack';
import type { ReportCreatedMessage } from '../../../shared/queue';
import { dynamoMappingStore } from '../../../shared/mapping';
import { invitedInterviewId, useTestStack } from '../../helpers/local-stack';
import { waitFor } from '../../helpers/local-http';
import { chromiumPath, screenshotDir } from '../../helpers/browser';

const ACME = 'acme-ashby';

/**
 * The console in a real browser (Debian's Chromium, headless, driven by playwright-core) against the whole local
 * stack: an operator signs in, adds a customer's connection and sees the doctor run, follows a candidate, redrives a
 * dead letter after its preview and sees the result written back; the customer completes their connect link and a
 * stage change in their ATS invites a candidate. Each page is photographed (docs/console/ with UPDATE_SCREENSHOTS=1).
 */
describe('The console, in Chromium', () => {
  const held = useTestStack('console-browser');
  let stack: LocalStack;
  let browser: Browser;
  let page: Page;
  const shots = screenshotDir();
  const shoot = (p: Page, name: string) => p.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
  const consoleUrl = () => `${stack.gatewayUrl}/console/`;
  let interviewApiKey: string;
  const store = () => dynamoMappingStore({ tables: stack.tables, client: stack.dynamo });
  /** What any page threw, and the requests it made that nothing answered (a missing icon, a wrong path). */
  const thrown: string[] = [];
  const watch = (p: Page) => {
    p.on('pageerror', (error) => thrown.push(error.message));
    p.on('response', (response) => {
      if (response.status() === 404 && !response.url().includes('-api/')) thrown.push(`404 ${response.url()}`);
    });
    return p;
  };

  beforeAll(async () => {
    stack = held.stack;
    mkdirSync(shots, { recursive: true });
    browser = await chromium.launch({ executablePath: chromiumPath(), args: ['--no-sandbox'] });
    page = watch(await browser.newPage({ viewport: { width: 1366, height: 900 } }));
    interviewApiKey = `acme-${randomUUID()}`;
    stack.interview.addAccount(interviewApiKey);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });

  it('signs in with the local key, by keyboard', async () => {
    await page.goto(consoleUrl());
    await page.getByLabel('Operator key').fill('not-the-key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('not the operator key');
    await shoot(page, 'sign-in');
    // By keyboard alone: the key typed into its labelled field, Tab reaches the button, Enter signs in.
    await page.getByLabel('Operator key').fill('');
    await page.getByLabel('Operator key').focus();
    await page.keyboard.type(stack.operatorKey);
    await page.keyboard.press('Tab');
    expect(await page.getByRole('button', { name: 'Sign in' }).evaluate((button) => button.matches(':focus'))).toBe(
      true,
    );
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Connections' }).waitFor();
    for (const c of stack.connections) await page.getByRole('link', { name: c.id, exact: true }).waitFor();
  });

  it('adds a connection through the form: an error beside its field, fixed, then the doctor runs', async () => {
    await page.getByRole('link', { name: 'Add a connection' }).click();
    // An id the API's path cannot take is said beside the field (the API alone would answer "no such route").
    await page.getByRole('button', { name: 'Save the connection' }).click();
    await expect.poll(() => page.locator('#id-error').textContent()).toContain('lowercase letters, digits and dashes');
    await page.getByLabel('Connection id').fill(ACME);
    await page.getByLabel('ATS', { exact: true }).selectOption('ashby');
    await page.getByLabel("ATS API's base URL").fill('ashby sandbox');
    await page.getByLabel('ATS user the notes are written as').fill('ashby-user-1');
    await page.getByLabel('Secret name').fill(`connector/${ACME}`);
    await page.getByLabel("Interview service's base URL").fill(stack.interview.url);
    await page.getByLabel('Stage that invites').fill('AI Interview');
    await page.getByLabel('Interview questions, one a line').fill('Tell us about a system you built.\nWhy us?');
    await page.getByRole('button', { name: 'Save the connection' }).click();
    const error = page.locator('#atsBaseUrl-error');
    await error.waitFor();
    expect(await error.textContent()).toContain('connection.atsBaseUrl');
    await shoot(page, 'add-connection-error');
    await page.getByLabel("ATS API's base URL").fill(stack.ats.ashby.url);
    await page.getByRole('button', { name: 'Save the connection' }).click();
    await page.getByRole('list', { name: "The doctor's checks" }).waitFor({ timeout: 20_000 });
    // No secret yet: the doctor says so, and what to do.
    expect(await page.getByRole('list', { name: "The doctor's checks" }).textContent()).toContain(
      `secret connector/${ACME}`,
    );
    await expect.poll(() => page.locator('#ats-error').count()).toBe(0);
    await shoot(page, 'add-connection-doctor');
  });

  it("picks a trigger's stage from the ATS's own stages", async () => {
    await page.goto(`${consoleUrl()}#/connections/demo-greenhouse`);
    await page.getByRole('button', { name: "Pick from the ATS's stages" }).click();
    const picker = page.getByRole('combobox', { name: 'Stage that invites to ai-screen (3 questions)' });
    await picker.waitFor();
    // Greenhouse's own stages of its first job, read through the adapter with the connection's credentials.
    expect(await picker.locator('option').allTextContents()).toEqual(
      expect.arrayContaining(['Application Review', 'AI Interview', 'Hiring Manager Review', 'Offer']),
    );
    expect(await picker.inputValue()).toBe('AI Interview');
    expect(await page.getByRole('combobox', { name: 'Job' }).locator('option').count()).toBeGreaterThan(1);
  });

  let greenhouseApplication: string;
  let candidate: { name: string; email: string };

  it("opens a demo candidate's timeline and sees their steps", async () => {
    candidate = { name: 'Kemi Adeyemi', email: `kemi.${randomUUID().slice(0, 6)}@candidates.example.com` };
    const application = stack.ats.greenhouse.addCandidate({
      firstName: 'Kemi',
      lastName: 'Adeyemi',
      email: candidate.email,
      jobId: '3301',
    });
    greenhouseApplication = application.id;
    await stack.ats.greenhouse.moveCandidate({ applicationId: application.id, stageName: 'AI Interview' });
    await invitedInterviewId(stack, candidate.email);
    await page.getByRole('link', { name: 'Connections' }).click();
    await page.getByLabel('Connection', { exact: true }).fill('demo-greenhouse');
    await page.getByLabel('ATS application id').fill(greenhouseApplication);
    await page.getByRole('button', { name: 'Find the candidate' }).click();
    const timeline = page.getByRole('table', { name: 'Timeline' });
    await timeline.waitFor();
    await expect.poll(() => timeline.textContent()).toContain('webhook: entered AI Interview');
    expect(await timeline.textContent()).toContain('invitation e-mailed');
    // The e-mail is masked until asked for.
    expect(await page.locator('.facts').textContent()).not.toContain(candidate.email);
    await shoot(page, 'candidate');
    await page.getByRole('button', { name: /Show the e-mail/ }).click();
    await expect.poll(() => page.locator('.facts').textContent()).toContain(candidate.email);
  });

  it('redrives a dead letter after its preview count, and the result is written back', async () => {
    const [record] = await store().findApplicationsByAtsId('demo-greenhouse', greenhouseApplication);
    const interviewId = record?.interviewId as string;
    // The report's webhook never came, and its message failed its last try: it waits in the report DLQ.
    const report = stack.interview.completeInterview(
      { interview_id: interviewId, candidate_name: candidate.name, candidate_email: candidate.email, delay_ms: 0 },
      false,
    );
    const message: ReportCreatedMessage = {
      v: 1,
      enqueueId: randomUUID(),
      connectionId: 'demo-greenhouse',
      receivedAt: Date.now(),
      kind: 'report-created',
      source: 'reconciler',
      reportId: report.report_id,
      interviewId,
      candidateId: report.candidate_id,
    };
    await stack.sqs.send(
      new SendMessageCommand({ QueueUrl: stack.queues.report.dlqUrl, MessageBody: JSON.stringify(message) }),
    );
    await page.getByRole('link', { name: 'Failures' }).click();
    await page.getByRole('heading', { name: "The report queue's dead letters: 1" }).waitFor({ timeout: 15_000 });
    await page.getByRole('button', { name: 'Redrive the report DLQ…' }).click();
    const preview = page.getByRole('alertdialog');
    await preview.waitFor();
    expect(await preview.textContent()).toContain('This moves 1 message back to the report queue');
    await shoot(page, 'failures');
    await page.getByRole('button', { name: 'Move 1 message' }).click();
    await expect.poll(() => page.getByRole('status').first().textContent()).toContain('Moving 1 message');
    await waitFor(
      async () =>
        (await store().findApplicationsByAtsId('demo-greenhouse', greenhouseApplication))[0]?.state === 'written_back',
      30_000,
      'the redriven report written back',
    );
    await page.goto(`${consoleUrl()}#/candidates/demo-greenhouse/${greenhouseApplication}`);
    await expect.poll(() => page.locator('.facts').first().textContent()).toContain('written_back');
    expect(await page.getByRole('table', { name: 'Timeline' }).textContent()).toContain('report note posted');
    await page.getByRole('link', { name: 'Failures' }).click();
    await expect.poll(() => page.getByRole('list').last().textContent()).toContain('redrove 1 message');
    // Its own bound covers the waits inside it (15 s for the dead letter to show, 30 s for the write-back).
  }, 60_000);

  it('a customer completes their connect link, and a stage change in their ATS invites a candidate', async () => {
    await page.goto(`${consoleUrl()}#/connections/${ACME}`);
    await page.getByLabel("The customer's interview-service API key").fill(interviewApiKey);
    await page.getByRole('button', { name: 'Make a connect link' }).click();
    const href = (await page.locator('#connect-link').getAttribute('href')) as string;
    await shoot(page, 'connection');
    // The interview service's side, which its vendor sets up in its own settings (it has no API for webhooks).
    const secretsFile = JSON.parse(readFileSync(stack.stackFile, 'utf8')).files.secrets as string;
    const token = JSON.parse(readFileSync(secretsFile, 'utf8'))[`connector/${ACME}`].interviewWebhookToken;
    stack.interview.registerWebhook(
      `${stack.gatewayUrl}/webhooks/interview/${ACME}/${token}`,
      'interview_report.created',
      interviewApiKey,
    );

    // The customer's browser: no operator sign-in, only the link.
    const customer = watch(await browser.newPage({ viewport: { width: 1280, height: 900 } }));
    await customer.goto(href);
    await customer.getByRole('heading', { name: 'Connect your Ashby account' }).waitFor();
    // Finishing before any credentials work keeps the link, and says what is missing.
    await customer.getByRole('button', { name: 'Finish' }).click();
    await expect.poll(() => customer.locator('section').last().textContent()).toContain('Save your ATS credentials');
    await customer.getByLabel('API key').fill(stack.ats.ashby.credentials.atsApiKey as string);
    await customer.getByRole('button', { name: 'Save the credentials' }).click();
    await expect.poll(() => customer.getByRole('status').first().textContent()).toContain('they work');
    // The stage the connection was made with is the one shown, not the job's first.
    await expect.poll(() => customer.getByRole('combobox', { name: 'Stage' }).inputValue()).toBe('AI Interview');
    await customer.getByRole('combobox', { name: 'Stage' }).selectOption('Hiring Manager Review');
    await customer.getByRole('button', { name: 'Save the stage' }).click();
    await expect.poll(() => customer.locator('section').nth(1).textContent()).toContain('will be invited');
    await customer.getByRole('button', { name: 'Register the webhooks' }).click();
    await customer.getByRole('list', { name: 'Webhooks registered' }).waitFor();
    await customer.getByRole('button', { name: 'Run the checks' }).click();
    const checks = customer.getByRole('list', { name: "The doctor's checks" });
    await checks.waitFor({ timeout: 20_000 });
    expect(await checks.locator('li.fail').allTextContents()).toEqual([]);
    await shoot(customer, 'connect');
    await customer.getByRole('button', { name: 'Finish' }).click();
    await customer.getByRole('heading', { name: 'Connected' }).waitFor();
    // Spent: the link answers nothing more.
    await customer.goto(`${href.replace('#', '?again#')}`);
    await customer.getByText('this link has expired or was used').waitFor();
    await customer.close();

    const email = `ada.${randomUUID().slice(0, 6)}@candidates.example.com`;
    const application = stack.ats.ashby.addCandidate({ firstName: 'Ada', lastName: 'Obi', email });
    await stack.ats.ashby.moveCandidate({ applicationId: application.id, stageName: 'Hiring Manager Review' });
    await waitFor(
      async () => (await store().findApplicationsByAtsId(ACME, application.id))[0]?.state === 'invited',
      30_000,
      'the candidate invited through the connected account',
    );
    expect((await invitedInterviewId(stack, email)).length).toBeGreaterThan(0);
    // The customer's secret holds what they gave; none of it reached a page.
    const secrets = JSON.parse(readFileSync(secretsFile, 'utf8'));
    expect(secrets[`connector/${ACME}`].atsApiKey).toBe(stack.ats.ashby.credentials.atsApiKey);

    await page.goto(consoleUrl());
    await page.getByRole('link', { name: ACME, exact: true }).waitFor();
    await shoot(page, 'connections');
  }, 90_000);

  it('threw nothing on any page, and asked for no file the console does not have', () => {
    expect(thrown).toEqual([]);
  });
});
