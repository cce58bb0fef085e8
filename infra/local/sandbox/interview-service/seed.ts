import { formatTimestamp, seededRandom } from '../http-kit';

/** The job the sandbox starts with, so list and detail endpoints have something real to return. */
export const SEEDED_JOB = {
  job_id: '6f0d5a3e-7c1b-4e8a-9d2f-0a1b2c3d4e5f',
  job_title: 'Backend Engineer',
} as const;

const FIRST = ['Ana', 'Bram', 'Chen', 'Dara', 'Elif', 'Farid', 'Greta', 'Hiro', 'Ines', 'Jonas', 'Kemi', 'Luca'];
const LAST = [
  'Ruiz',
  'de Vries',
  'Wang',
  'Okafor',
  'Yilmaz',
  'Haddad',
  'Nilsson',
  'Tanaka',
  'Costa',
  'Berg',
  'Adeyemi',
  'Rossi',
];
const SOURCES = ['LinkedIn', 'Referral', 'Careers page'];

export interface SeededApplicant extends Record<string, unknown> {
  job_applicant_id: string;
  first_name: string;
  last_name: string;
  email_id: string;
}

function uuidFrom(random: () => number): string {
  const hex = Array.from({ length: 32 }, () => Math.floor(random() * 16).toString(16)).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** Applicants of the seeded job, with parsed resumes and screening answers; the same every start. */
export function seedApplicants(count = 24): SeededApplicant[] {
  const random = seededRandom(20261121);
  const created = new Date(Date.UTC(2026, 9, 1, 9, 0, 0));
  return Array.from({ length: count }, (_, i) => {
    const first = FIRST[i % FIRST.length] as string;
    const last = LAST[(i * 5) % LAST.length] as string;
    const currentJob = i % 3 !== 0;
    return {
      job_applicant_id: uuidFrom(random),
      job_id: SEEDED_JOB.job_id,
      job_title: SEEDED_JOB.job_title,
      first_name: first,
      last_name: last,
      email_id: `${first}.${last}.${i}@example.com`.toLowerCase().replace(/\s+/g, ''),
      phone_number: `+3161234${String(1000 + i)}`,
      phone_country_iso_code: 'NL',
      resume_url: `https://files.example.com/resumes/${i}.pdf`,
      linkedin_url: `https://www.linkedin.com/in/example-${i}`,
      source_name: SOURCES[i % SOURCES.length],
      resume_score: Math.round(50 + random() * 50),
      parsed_resume_data: {
        education: [
          {
            major: 'Computer Science',
            degree: 'BSc',
            university_name: 'Delft University of Technology',
            start_date: '2014-09-01',
            end_date: '2018-07-01',
            is_present: false,
          },
        ],
        experience: [
          {
            role: 'Software Engineer',
            company_name: `Company ${i}`,
            start_date: '2021-03-01',
            end_date: currentJob ? null : '2025-12-31',
            is_present: currentJob,
            tech_stack: ['TypeScript', 'Node.js', 'PostgreSQL'],
            responsibilities: '<ul><li>Built payment services</li><li>Ran on-call</li></ul>',
          },
        ],
      },
      screening_question_answers: [
        { question: 'Are you authorised to work in the EU?', answer: i % 4 === 0 ? 'No' : 'Yes' },
        { question: 'Notice period?', answer: `${1 + (i % 3)} months` },
      ],
      date_created: formatTimestamp(new Date(created.getTime() + i * 3_600_000)),
      date_modified: formatTimestamp(new Date(created.getTime() + i * 3_600_000)),
      status: 'active',
    };
  });
}
