/** Invitation e-mails per interview language; languages without a text of their own get English. */
interface InviteTemplate {
  subject: (jobName: string) => string;
  body: (name: string, jobName: string, url: string) => string;
}

const TEMPLATES: Record<string, InviteTemplate> = {
  en: {
    subject: (job) => `Your interview for ${job}`,
    body: (name, job, url) =>
      `Hello ${name},\n\nThank you for applying for ${job}. The next step is a short AI-led interview that you can take at a time that suits you:\n\n${url}\n\nGood luck!`,
  },
  fr: {
    subject: (job) => `Votre entretien pour le poste ${job}`,
    body: (name, job, url) =>
      `Bonjour ${name},\n\nMerci pour votre candidature au poste ${job}. L'étape suivante est un court entretien mené par une IA, à passer quand cela vous convient :\n\n${url}\n\nBonne chance !`,
  },
  de: {
    subject: (job) => `Ihr Interview für ${job}`,
    body: (name, job, url) =>
      `Hallo ${name},\n\nvielen Dank für Ihre Bewerbung als ${job}. Der nächste Schritt ist ein kurzes KI-gestütztes Interview, das Sie zu einem passenden Zeitpunkt führen können:\n\n${url}\n\nViel Erfolg!`,
  },
  es: {
    subject: (job) => `Tu entrevista para ${job}`,
    body: (name, job, url) =>
      `Hola ${name}:\n\nGracias por postularte a ${job}. El siguiente paso es una breve entrevista guiada por IA que puedes hacer cuando te venga bien:\n\n${url}\n\n¡Mucha suerte!`,
  },
  pt: {
    subject: (job) => `A sua entrevista para ${job}`,
    body: (name, job, url) =>
      `Olá ${name},\n\nObrigado pela sua candidatura a ${job}. O próximo passo é uma breve entrevista conduzida por IA, que pode fazer quando lhe for conveniente:\n\n${url}\n\nBoa sorte!`,
  },
};

export function inviteTemplateFor(language: string): InviteTemplate {
  const base = language.toLowerCase().split('-')[0] ?? 'en';
  return TEMPLATES[language] ?? TEMPLATES[base] ?? (TEMPLATES.en as InviteTemplate);
}
