import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestedWaitMs } from '../../../functions/_runtime/deferral';
import { WORKER_TIMING } from '../../../shared/pipeline/constants';
import { connectionNeverOpened } from '../../../shared/errors';
import { type MailerError, SesMailer } from '../../../shared/mail/ses.mailer';
import { startRecordingServer } from '../../helpers/local-http';

/** SES answers as the test says: a 500 (the message may have gone), or a definite refusal. */
describe('Class: SesMailer, as configured for the functions', () => {
  let answer: { status: number; type?: string } = { status: 500 };
  let server: Awaited<ReturnType<typeof startRecordingServer>>;
  const saved = { ...process.env };

  beforeAll(async () => {
    server = await startRecordingServer((_request, response) => {
      response.writeHead(answer.status, {
        'content-type': 'application/json',
        ...(answer.type ? { 'x-amzn-errortype': answer.type } : {}),
      });
      response.end(JSON.stringify({ message: 'answered by the test' }));
    });
    Object.assign(process.env, {
      AWS_ENDPOINT_URL_SESV2: server.url,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
    });
  });
  afterAll(async () => {
    process.env = saved;
    await server.close();
  });

  const send = () =>
    new SesMailer({ defaultFrom: 'talent@acme.example.com' })
      .sendInvite({
        to: 'ana@example.com',
        candidateName: 'Ana',
        jobName: 'Backend Engineer',
        inviteUrl: 'https://interviews.example.com/i/1',
        language: 'en',
      })
      .then(
        () => undefined,
        (error: unknown) => error as MailerError,
      );

  it('sends once after a 5xx (no SDK retry) and leaves the e-mail uncertain, not unsent', async () => {
    answer = { status: 500, type: 'InternalFailure' };
    const before = server.received.length;
    const error = await send();
    expect(server.received.length - before).toBe(1);
    expect(error).toMatchObject({ definitelyNotSent: false, refused: false, retryable: true });
  });

  it('reads a definite refusal as the e-mail channel failing for good', async () => {
    answer = { status: 400, type: 'MessageRejected' };
    const before = server.received.length;
    const error = await send();
    expect(server.received.length - before).toBe(1);
    expect(error).toMatchObject({
      definitelyNotSent: true,
      refused: true,
      retryable: false,
      reason: 'MessageRejected',
    });
  });

  it('reads throttling as not sent, a rate limit: its message deferred, not counted toward the DLQ', async () => {
    answer = { status: 429, type: 'TooManyRequestsException' };
    const error = await send();
    expect(error).toMatchObject({ definitelyNotSent: true, refused: false, retryable: true, rateLimited: true });
    expect(requestedWaitMs(error)).toBe(WORKER_TIMING.defaultRateLimitWaitMs);
    answer = { status: 500, type: 'InternalFailure' };
    expect(requestedWaitMs(await send())).toBeUndefined();
  });

  it('reads a connection that never opened as not sent, to be tried again (not an uncertain e-mail)', async () => {
    // A port nothing listens on: the connection is refused before any byte of the request leaves.
    const closed = await startRecordingServer((_request, response) => response.end());
    await closed.close();
    process.env.AWS_ENDPOINT_URL_SESV2 = closed.url;
    try {
      expect(await send()).toMatchObject({ definitelyNotSent: true, refused: false, retryable: true });
    } finally {
      process.env.AWS_ENDPOINT_URL_SESV2 = server.url;
    }
    // Not established within the client's connection timeout, as @smithy/node-http-handler words it.
    const notEstablished = Object.assign(
      new Error(
        '@smithy/node-http-handler - the request socket did not establish a connection with the server within the ' +
          'configured timeout of 1000 ms.',
      ),
      { name: 'TimeoutError' },
    );
    expect(connectionNeverOpened(notEstablished)).toBe(true);
    // A request that timed out after it was sent may have been carried out.
    const sentThenTimedOut = Object.assign(new Error('a request has exceeded the configured 5000 ms requestTimeout.'), {
      name: 'TimeoutError',
      code: 'ETIMEDOUT',
    });
    expect(connectionNeverOpened(sentThenTimedOut)).toBe(false);
  });
});
