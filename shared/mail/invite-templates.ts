/** Invitation e-mails per interview language; languages without a text of their own get English. */
interface InviteTemplate {
  subject: (jobName: string) => string;
  body: (name: string, jobName: string, url: string) => string;
}

/** Paragraphs separated by a blank line, so each text reads as it is written. */
const paragraphs = (...lines: string[]) => lines.join('\n\n');

const TEMPLATES: Record<string, InviteTemplate> = {
  en: {
    subject: (job) => `Your interview for ${job}`,
    body: (name, job, url) =>
      paragraphs(
        `Hello ${name},`,
        `Thank you for applying for ${job}. The next step is a short AI-led interview that you can take at a time ` +
          'that suits you:',
        url,
        'Good luck!',
      ),
  },
  fr: {
    subject: (job) => `Votre entretien pour le poste ${job}`,
    body: (name, job, url) =>
      paragraphs(
        `Bonjour ${name},`,
        `Merci pour votre candidature au poste ${job}. L'étape suivante est un court entretien mené par une IA, ` +
          'à passer quand cela vous convient :',
        url,
        'Bonne chance !',
      ),
  },
  de: {
    subject: (job) => `Ihr Interview für ${job}`,
    body: (name, job, url) =>
      paragraphs(
        `Hallo ${name},`,
        `vielen Dank für Ihre Bewerbung als ${job}. Der nächste Schritt ist ein kurzes KI-gestütztes Interview, ` +
          'das Sie zu einem passenden Zeitpunkt führen können:',
        url,
        'Viel Erfolg!',
      ),
  },
  es: {
    subject: (job) => `Tu entrevista para ${job}`,
    body: (name, job, url) =>
      paragraphs(
        `Hola ${name}:`,
        `Gracias por postularte a ${job}. El siguiente paso es una breve entrevista guiada por IA que puedes hacer ` +
          'cuando te venga bien:',
        url,
        '¡Mucha suerte!',
      ),
  },
  pt: {
    subject: (job) => `A sua entrevista para ${job}`,
    body: (name, job, url) =>
      paragraphs(
        `Olá ${name},`,
        `Obrigado pela sua candidatura a ${job}. O próximo passo é uma breve entrevista conduzida por IA, que pode ` +
          'fazer quando lhe for conveniente:',
        url,
        'Boa sorte!',
      ),
  },
};

/**
 * Reminders: the same link, for a candidate who has not taken the interview yet. The connector keeps no name, so
 * a reminder greets without one; `job` is the job's name when known.
 */
const REMINDERS: Record<string, InviteTemplate> = {
  en: {
    subject: (job) => `Reminder: your interview for ${job}`,
    body: (_name, job, url) =>
      paragraphs('Hello,', `Your AI-led interview for ${job} is still waiting for you. You can take it here:`, url),
  },
  fr: {
    subject: (job) => `Rappel : votre entretien pour le poste ${job}`,
    body: (_name, job, url) =>
      paragraphs('Bonjour,', `Votre entretien mené par une IA pour le poste ${job} vous attend toujours :`, url),
  },
  de: {
    subject: (job) => `Erinnerung: Ihr Interview für ${job}`,
    body: (_name, job, url) => paragraphs('Hallo,', `Ihr KI-gestütztes Interview für ${job} wartet noch auf Sie:`, url),
  },
  es: {
    subject: (job) => `Recordatorio: tu entrevista para ${job}`,
    body: (_name, job, url) => paragraphs('Hola:', `Tu entrevista guiada por IA para ${job} te sigue esperando:`, url),
  },
  pt: {
    subject: (job) => `Lembrete: a sua entrevista para ${job}`,
    body: (_name, job, url) =>
      paragraphs('Olá,', `A sua entrevista conduzida por IA para ${job} ainda está à sua espera:`, url),
  },
};

function templateFor(templates: Record<string, InviteTemplate>, language: string): InviteTemplate {
  const base = language.toLowerCase().split('-')[0] ?? 'en';
  const own = (code: string) => (Object.hasOwn(templates, code) ? templates[code] : undefined);
  return own(language) ?? own(base) ?? (templates.en as InviteTemplate);
}

export function inviteTemplateFor(language: string, reminder = false): InviteTemplate {
  return templateFor(reminder ? REMINDERS : TEMPLATES, language);
}
