import { describe, expect, it, vi } from 'vitest';
import { deadlineAfter, deadlinePassed } from '../../../shared/http/deadline';
import { sendHttpRequest } from '../../../shared/http/fetch';

describe('Function: deadlinePassed', () => {
  it('tells by the clock, before the signal timer has fired', () => {
    let clock = 1_000_000;
    const signal = deadlineAfter(5_000, () => clock);
    expect(deadlinePassed(signal, () => clock + 4_999)).toBe(false);
    clock += 5_000;
    // A starved event loop: the time has come, the timer has not run, the signal is not aborted yet.
    expect(signal.aborted).toBe(false);
    expect(deadlinePassed(signal, () => clock)).toBe(true);
  });

  it('follows the signal alone when it carries no time, and is false without one', () => {
    const controller = new AbortController();
    expect(deadlinePassed(controller.signal)).toBe(false);
    controller.abort();
    expect(deadlinePassed(controller.signal)).toBe(true);
    expect(deadlinePassed(undefined)).toBe(false);
  });
});

describe('Function: sendHttpRequest past the deadline', () => {
  it('sends nothing once the deadline has passed by the clock, and says so', async () => {
    // The deadline's time was 10 s ago, but its timer (60 s) has not fired.
    const signal = deadlineAfter(60_000, () => Date.now() - 70_000);
    const fetchImpl = vi.fn();
    const sent = sendHttpRequest(
      { url: 'http://127.0.0.1:9/v3/notes?q=x', method: 'POST', body: '{}', timeoutMs: 1_000, signal },
      fetchImpl as unknown as typeof fetch,
    );
    await expect(sent).rejects.toMatchObject({
      name: 'HttpTransportError',
      code: 'aborted',
      retryable: false,
      message: 'POST http://127.0.0.1:9/v3/notes not sent: deadline passed',
    });
    expect(fetchImpl).not.toHaveBeenCalled();
  });

  it('sends when time remains', async () => {
    const fetchImpl = vi.fn().mockResolvedValue(new Response('{}', { status: 201 }));
    const answer = await sendHttpRequest(
      { url: 'http://127.0.0.1:9/v3/notes', method: 'POST', timeoutMs: 1_000, signal: deadlineAfter(60_000) },
      fetchImpl as unknown as typeof fetch,
    );
    expect(answer.status).toBe(201);
    expect(fetchImpl).toHaveBeenCalledTimes(1);
  });
});
