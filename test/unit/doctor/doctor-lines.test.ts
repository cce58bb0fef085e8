import { GetAccountCommand, GetEmailIdentityCommand, NotFoundException } from '@aws-sdk/client-sesv2';
import { describe, expect, it } from 'vitest';
import { closest, formatLine } from '../../../shared/doctor/lines';
import { sesSenderLine } from '../../../infra/cli/doctor/ses';

/** A stand-in SES answering `GetEmailIdentity` from `identities` (verified or not) and `GetAccount`. */
function fakeSes(identities: Record<string, boolean>, production: boolean) {
  const asked: string[] = [];
  return {
    asked,
    send: async (command: unknown) => {
      if (command instanceof GetEmailIdentityCommand) {
        const identity = command.input.EmailIdentity as string;
        asked.push(identity);
        if (!(identity in identities))
          throw new NotFoundException({ message: `${identity} does not exist`, $metadata: {} });
        return { VerifiedForSendingStatus: identities[identity] };
      }
      if (command instanceof GetAccountCommand) return { ProductionAccessEnabled: production };
      throw new Error('unexpected command');
    },
  };
}

describe('the doctor: SES sender', () => {
  it('passes a sender whose domain is verified, after looking for the address first', async () => {
    const ses = fakeSes({ 'acme.com': true }, true);
    const line = await sesSenderLine(ses as never, 'talent@acme.com');
    expect(line).toMatchObject({ status: 'pass', what: 'SES may send as talent@acme.com (identity acme.com)' });
    expect(ses.asked).toEqual(['talent@acme.com', 'acme.com']);
  });

  it('fails an unverified identity and one SES does not have, naming what to verify', async () => {
    expect(await sesSenderLine(fakeSes({ 'talent@acme.com': false }, true) as never, 'talent@acme.com')).toMatchObject({
      status: 'fail',
      what: 'SES identity talent@acme.com is not verified',
    });
    const none = await sesSenderLine(fakeSes({}, true) as never, 'talent@acme.com');
    expect(none.status).toBe('fail');
    expect(none.fix).toBe('verify acme.com (or the address) in SES');
  });

  it("says, without failing, that an account in SES's sandbox mails verified recipients only", async () => {
    const line = await sesSenderLine(fakeSes({ 'acme.com': true }, false) as never, 'talent@acme.com');
    expect(line.status).toBe('info');
    expect(line.fix).toContain('request production access');
  });
});

describe('the doctor: lines', () => {
  it('prints a failure with its fix under it', () => {
    expect(formatLine({ status: 'fail', what: 'no webhook', fix: 'register it\nthen check' })).toBe(
      '  ✗ no webhook\n      → register it\n        then check',
    );
    expect(formatLine({ status: 'pass', what: 'ok' })).toBe('  ✓ ok');
  });

  it('names the closest stage names first', () => {
    expect(closest('AI Intervew', ['Offer', 'AI Interview', 'Application Review', 'Hiring Manager Review'], 2)).toEqual(
      ['AI Interview', 'Offer'],
    );
  });
});
