/**
 * Invitation e-mails per interview language, as texts: `{name}`, `{job}` and `{url}` are filled in, each once. The
 * body is the greeting, the text, the link and the closing where there is one, separated by a blank line. Languages
 * without a text of their own get English.
 */
interface InviteText {
  subject: string;
  greeting: string;
  text: string;
  closing?: string;
}

export interface InviteTemplate {
  subject: (jobName: string) => string;
  body: (name: string, jobName: string, url: string) => string;
}

const INVITES: Record<string, InviteText> = {
  en: {
    subject: 'Your interview for {job}',
    greeting: 'Hello {name},',
    text:
      'Thank you for applying for {job}. The next step is a short AI-led interview that you can take at a time ' +
      'that suits you:',
    closing: 'Good luck!',
  },
  fr: {
    subject: 'Votre entretien pour le poste {job}',
    greeting: 'Bonjour {name},',
    text:
      "Merci pour votre candidature au poste {job}. L'étape suivante est un court entretien mené par une IA, " +
      'à passer quand cela vous convient :',
    closing: 'Bonne chance !',
  },
  de: {
    subject: 'Ihr Interview für {job}',
    greeting: 'Hallo {name},',
    text:
      'vielen Dank für Ihre Bewerbung als {job}. Der nächste Schritt ist ein kurzes KI-gestütztes Interview, ' +
      'das Sie zu einem passenden Zeitpunkt führen können:',
    closing: 'Viel Erfolg!',
  },
  es: {
    subject: 'Tu entrevista para {job}',
    greeting: 'Hola {name}:',
    text:
      'Gracias por postularte a {job}. El siguiente paso es una breve entrevista guiada por IA que puedes hacer ' +
      'cuando te venga bien:',
    closing: '¡Mucha suerte!',
  },
  pt: {
    subject: 'A sua entrevista para {job}',
    greeting: 'Olá {name},',
    text:
      'Obrigado pela sua candidatura a {job}. O próximo passo é uma breve entrevista conduzida por IA, que pode ' +
      'fazer quando lhe for conveniente:',
    closing: 'Boa sorte!',
  },
};

/**
 * Reminders: the same link, for a candidate who has not taken the interview yet. The connector keeps no name, so
 * a reminder greets without one; `job` is the job's name when known.
 */
const REMINDERS: Record<string, InviteText> = {
  en: {
    subject: 'Reminder: your interview for {job}',
    greeting: 'Hello,',
    text: 'Your AI-led interview for {job} is still waiting for you. You can take it here:',
  },
  fr: {
    subject: 'Rappel : votre entretien pour le poste {job}',
    greeting: 'Bonjour,',
    text: 'Votre entretien mené par une IA pour le poste {job} vous attend toujours :',
  },
  de: {
    subject: 'Erinnerung: Ihr Interview für {job}',
    greeting: 'Hallo,',
    text: 'Ihr KI-gestütztes Interview für {job} wartet noch auf Sie:',
  },
  es: {
    subject: 'Recordatorio: tu entrevista para {job}',
    greeting: 'Hola:',
    text: 'Tu entrevista guiada por IA para {job} te sigue esperando:',
  },
  pt: {
    subject: 'Lembrete: a sua entrevista para {job}',
    greeting: 'Olá,',
    text: 'A sua entrevista conduzida por IA para {job} ainda está à sua espera:',
  },
};

/** The text with its placeholders filled in, in one pass: a value that holds `{job}` is not filled again. */
const fill = (text: string, values: Record<'name' | 'job' | 'url', string>): string =>
  text.replace(/\{(name|job|url)\}/g, (_match, key: 'name' | 'job' | 'url') => values[key]);

function textFor(texts: Record<string, InviteText>, language: string): InviteText {
  const base = language.toLowerCase().split('-')[0] ?? 'en';
  const own = (code: string) => (Object.hasOwn(texts, code) ? texts[code] : undefined);
  return own(language) ?? own(base) ?? (texts.en as InviteText);
}

/**
 * The e-mail in the candidate's language. With no name (a resend: the connector keeps none), the greeting is the
 * reminder's, which names no one, in the same language.
 */
export function inviteTemplateFor(language: string, reminder = false): InviteTemplate {
  const text = textFor(reminder ? REMINDERS : INVITES, language);
  const greetingFor = (name: string) => (name.trim() === '' ? textFor(REMINDERS, language).greeting : text.greeting);
  return {
    subject: (job) => fill(text.subject, { name: '', job, url: '' }),
    body: (name, job, url) =>
      [greetingFor(name), text.text, '{url}', ...(text.closing === undefined ? [] : [text.closing])]
        .map((p) => fill(p, { name, job, url }))
        .join('\n\n'),
  };
}
