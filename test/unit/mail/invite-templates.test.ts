import { describe, expect, it } from 'vitest';
import { inviteTemplateFor } from '../../../shared/mail/invite-templates';

describe('Invite e-mail texts', () => {
  it('fills the name, the job and the link, in paragraphs, in the interview language or English', () => {
    const body = inviteTemplateFor('fr-CA').body('Ana', 'Backend Engineer', 'https://i/1');
    expect(body.split('\n\n')).toEqual([
      'Bonjour Ana,',
      expect.stringContaining('au poste Backend Engineer.'),
      'https://i/1',
      'Bonne chance !',
    ]);
    expect(inviteTemplateFor('xx').subject('Data Engineer')).toBe('Your interview for Data Engineer');
    expect(inviteTemplateFor('de', true).subject('X')).toBe('Erinnerung: Ihr Interview für X');
  });

  it('fills each placeholder once: a name that reads like one stays as written', () => {
    const body = inviteTemplateFor('en').body('{url} {job}', 'Ops', 'https://i/2');
    expect(body.startsWith('Hello {url} {job},')).toBe(true);
    expect(body.match(/https:\/\/i\/2/g)).toHaveLength(1);
  });

  it("greets without a name where none is held (a resend), in the e-mail's language", () => {
    expect(inviteTemplateFor('fr').body('', 'Ops', 'https://i/3').split('\n\n')[0]).toBe('Bonjour,');
    expect(inviteTemplateFor('en').body(' ', 'Ops', 'https://i/3').split('\n\n')[0]).toBe('Hello,');
    expect(inviteTemplateFor('de').body('Ana', 'Ops', 'https://i/3').split('\n\n')[0]).toBe('Hallo Ana,');
  });
});
