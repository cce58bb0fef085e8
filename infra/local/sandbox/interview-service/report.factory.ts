import { createHash } from 'node:crypto';
import { formatDate, formatTimestamp, seededRandom } from '../http-kit';
import type { CompletionRequest, SandboxInterview, SandboxReport } from './types';

// The vocabularies the service's documentation shows (facts, Corrections: "Response shapes").
const LEVELS = ['Not experienced', 'Junior', 'Mid-level', 'Senior'] as const;
const LANGUAGE_LEVELS = ['A2', 'B1', 'B2', 'C1', 'C2'] as const;
const ANSWER_PHRASES = ['Not an impressive answer', 'Average answer', 'Good answer', 'Great answer'] as const;
const VIOLATION_TYPES = ['tab_switch', 'eye_movement', 'ai_classifier'] as const;

function pick<T>(items: readonly T[], random: () => number): T {
  return items[Math.floor(random() * items.length)] as T;
}

/** Same candidate and interview, same report: scores come from a hash, so tests can reason about them. */
function randomFor(...parts: string[]): () => number {
  const digest = createHash('sha256').update(parts.join('|')).digest();
  return seededRandom(digest.readUInt32BE(0));
}

/**
 * Recordings and the player live on the service's file host, always over https; nothing here serves them (the
 * connector only links them), and a reserved example domain never resolves. The report's PDF is served (files.ts).
 */
const FILES_HOST = 'https://files.interview-sandbox.example';

export function shortId(prefix: string, random: () => number = Math.random): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  let id = prefix;
  for (let i = 0; i < 10; i++) id += alphabet[Math.floor(random() * alphabet.length)];
  return id;
}

/** A report with every field of spec §2.2 filled the way the live service fills it. */
export function buildReport(options: {
  interview: SandboxInterview;
  completion: CompletionRequest;
  candidateId: string;
  reportId: string;
  /** Where the file host serves the PDF; null where the service has no file for the report. */
  reportUrl: string | null;
  jobApplicantId: string;
  now: Date;
}): SandboxReport {
  const { interview, completion, candidateId, reportId, now } = options;
  const random = randomFor(interview.interview_id, completion.candidate_email.toLowerCase());
  const aiMatchScore = completion.ai_match_score ?? Math.round(45 + random() * 53);
  const violationCount = completion.proctoring_violations ?? (random() < 0.2 ? 1 + Math.floor(random() * 3) : 0);
  const questions = interview.settings.custom_question_list;
  const skills = interview.settings.skills.length
    ? interview.settings.skills.map((s) => s.name)
    : ['Problem solving', 'Communication of technical ideas'];
  const timestamp = formatTimestamp(now);
  let clock = 0;
  const transcript = questions.flatMap((q, index) => {
    clock += 5;
    const asked = { timestamp: clock, role: 'interviewer', content: q.question };
    clock += 20 + Math.floor(random() * 60);
    const answered = {
      timestamp: clock,
      role: 'user',
      content: `Answer ${index + 1}: a worked example drawn from recent projects.`,
    };
    return [asked, answered];
  });
  return {
    report_id: reportId,
    session_id: sessionIdFor(reportId),
    interview_id: interview.interview_id,
    interview_name: interview.interview_name,
    candidate_id: candidateId,
    job_applicant_id: options.jobApplicantId,
    ats_job_application_id: completion.ats_job_application_id ?? '',
    ats_job_id: completion.ats_job_id ?? '',
    candidate_name: completion.candidate_name,
    candidate_email_id: completion.candidate_email,
    report_date: formatDate(now),
    report_url: options.reportUrl,
    interview_recording_url: `${FILES_HOST}/files/recordings/${reportId}.m3u8?expires=${now.getTime() + 3_600_000}`,
    interview_recording_player_url: `${FILES_HOST}/player/${reportId}`,
    proctoring_score: violationCount === 0 ? 100 : Math.max(40, 95 - violationCount * 15),
    ai_match_score: aiMatchScore,
    proctoring_violations: Array.from({ length: violationCount }, (_, i) => ({
      type: pick(VIOLATION_TYPES, random),
      value: String(i + 1),
      description: `Violation ${i + 1} detected during the interview.`,
    })),
    interview_transcript: transcript,
    technical_skills_evaluation: skills.map((skill, i) => ({
      skill,
      ai_evaluation: { feedback: `Showed working knowledge of ${skill.toLowerCase()}.`, rating: pick(LEVELS, random) },
      timestamp: 30 + i * 60,
    })),
    soft_skills_evaluation: [
      {
        skill: 'Communication',
        ai_evaluation: {
          feedback: 'Clear, structured answers.',
          rating: pick(LANGUAGE_LEVELS, random),
          sub_score: { vocabulary: pick(LANGUAGE_LEVELS, random), grammar: pick(LANGUAGE_LEVELS, random) },
        },
      },
    ],
    coding_skills_evaluation: interview.settings.is_coding_round_required
      ? {
          feedback: `Solved the ${interview.settings.selected_coding_language ?? 'coding'} exercise with tests.`,
          rating: pick(LEVELS, random),
        }
      : { feedback: '', rating: '' },
    custom_exercise_evaluation: { feedback: '', rating: '' },
    custom_question_evaluation: questions.map((q, i) => ({
      question_text: q.question,
      answer_text: `Answer ${i + 1}: a worked example drawn from recent projects.`,
      ai_evaluation: { feedback: 'Relevant and specific.', rating: pick(ANSWER_PHRASES, random) },
    })),
    date_created: timestamp,
    date_modified: timestamp,
    status: 'active',
  };
}

/** A session id as the service's reports carry it: stable per report. */
function sessionIdFor(reportId: string): string {
  const hex = createHash('sha256').update(`session|${reportId}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** The fields the OpenAPI marks nullable, and optional fields a sparse report leaves out. */
const NULLABLE_FIELDS = ['ats_job_id', 'ats_job_application_id', 'custom_exercise_evaluation', 'report_date'] as const;
const LEFT_OUT_FIELDS = ['session_id', 'interview_name', 'candidate_name', 'job_applicant_id', 'status'] as const;

/**
 * A report as a sparse record of the service: documented-nullable fields null (transcript and skill timestamps
 * too), some optional fields missing. What the connector must read (ids, scores, e-mail, links) stays.
 */
export function sparseReport(report: SandboxReport): SandboxReport {
  const sparse: Record<string, unknown> = structuredClone(report);
  for (const field of NULLABLE_FIELDS) sparse[field] = null;
  for (const field of LEFT_OUT_FIELDS) delete sparse[field];
  for (const list of ['interview_transcript', 'technical_skills_evaluation'] as const)
    for (const entry of (sparse[list] as Record<string, unknown>[] | undefined) ?? []) entry.timestamp = null;
  return sparse as SandboxReport;
}

/** Whether a report is one of the sparse share: by its id, so every read of it agrees. */
export function isSparse(reportId: string, rate: number): boolean {
  if (rate <= 0) return false;
  return createHash('sha256').update(`sparse|${reportId}`).digest().readUInt32BE(0) / 0x1_0000_0000 < rate;
}
