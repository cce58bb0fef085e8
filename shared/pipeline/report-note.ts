import type { AdvanceRule } from '../config';
import type { InterviewReport } from '../interview-service';
import { quoted, serviceLink, singleLine, TEXT_LIMITS } from '../validation';
import { type ApplicationExit, type ApplicationRecord, invitationMarker } from './records';

export interface AdvanceDecision {
  advance: boolean;
  /** Why, in words a recruiter reads in the note. */
  explanation: string;
}

/**
 * Scores may advance a candidate or flag them for review; nothing here can reject (the service's stance:
 * no candidate is rejected by AI alone).
 */
export function decideAdvance(rule: AdvanceRule | undefined, report: InterviewReport): AdvanceDecision {
  if (!rule) return { advance: false, explanation: 'No automatic stage move is configured; a recruiter decides.' };
  const violations = report.proctoring_violations?.length ?? 0;
  const problems: string[] = [];
  if (report.ai_match_score === null || report.ai_match_score === undefined)
    problems.push('the report has no AI match score');
  else if (report.ai_match_score < rule.minAiMatchScore)
    problems.push(`AI match score ${report.ai_match_score} is below ${rule.minAiMatchScore}`);
  if (violations > rule.maxProctoringViolations)
    problems.push(`${plural(violations, 'proctoring violation')} (at most ${rule.maxProctoringViolations} allowed)`);
  if (rule.minProctoringScore !== undefined && (report.proctoring_score ?? 0) < rule.minProctoringScore)
    problems.push(`proctoring score ${report.proctoring_score ?? 'missing'} is below ${rule.minProctoringScore}`);
  if (problems.length) return { advance: false, explanation: `Flagged for review: ${problems.join('; ')}.` };
  return {
    advance: true,
    explanation:
      `Advanced automatically: AI match score ${report.ai_match_score} ≥ ${rule.minAiMatchScore} ` +
      `and ${plural(violations, 'proctoring violation')}.`,
  };
}

const EXIT_PHRASES: Record<ApplicationExit['kind'], string> = {
  rejected: 'was rejected',
  withdrawn: 'withdrew',
  hired: 'was hired',
  archived: 'was archived',
  deleted: 'was removed from the ATS',
  moved: 'was moved out of the stage',
};

/** The decision for a candidate who left the process before their result came: the result is noted, never acted on. */
export function decisionAfterExit(exit: Pick<ApplicationExit, 'kind'>): AdvanceDecision {
  return {
    advance: false,
    explanation: `Stage not moved: the candidate ${EXIT_PHRASES[exit.kind]} before the result came.`,
  };
}

const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`;

/** `2 violations (tab_switch, face_not_visible)`: the count and each kind once. */
const describeViolations = (violations: readonly { type: string }[]) =>
  violations.length
    ? `${plural(violations.length, 'violation')} (${[...new Set(violations.map((v) => label(v.type)))].join(', ')})`
    : plural(0, 'violation');

/** A short value from the report (a skill, a rating, a violation type) on one bounded line. */
const label = (text: string) => singleLine(text, 100);

/**
 * `Skill: rating “feedback”`. Feedback and question texts may quote the candidate: quoted and flattened, they
 * cannot start a line of their own that reads like the note's ("AI match score: 100 / 100").
 */
const rated = (name: string, rating?: string | null, feedback?: string | null): string =>
  `${label(name)}: ${rating ? label(rating) : 'not rated'}${feedback ? ` ${quoted(feedback)}` : ''}`;

/**
 * The summary note written on the candidate's application; ids and links only, no contact details. The service's
 * links are shown when https, or on the service's own origin (`serviceBaseUrl`).
 */
export function formatReportNote(report: InterviewReport, decision: AdvanceDecision, serviceBaseUrl?: string): string {
  const violations = report.proctoring_violations ?? [];
  const lines = [
    `AI interview completed: ${singleLine(report.interview_name ?? report.interview_id, TEXT_LIMITS.name)}`,
    `AI match score: ${report.ai_match_score ?? 'n/a'} / 100`,
    `Proctoring score: ${report.proctoring_score ?? 'n/a'} / 100, ${describeViolations(violations)}`,
  ];
  const technical = report.technical_skills_evaluation ?? [];
  if (technical.length)
    lines.push(
      'Technical skills:',
      ...technical.map((s) => `  - ${rated(s.skill, s.ai_evaluation.rating, s.ai_evaluation.feedback)}`),
    );
  const soft = report.soft_skills_evaluation ?? [];
  if (soft.length)
    lines.push(
      'Soft skills:',
      ...soft.map((s) => `  - ${rated(s.skill, s.ai_evaluation.rating, s.ai_evaluation.feedback)}`),
    );
  if (report.coding_skills_evaluation?.rating)
    lines.push(rated('Coding', report.coding_skills_evaluation.rating, report.coding_skills_evaluation.feedback));
  if (report.custom_exercise_evaluation?.rating)
    lines.push(
      rated('Custom exercise', report.custom_exercise_evaluation.rating, report.custom_exercise_evaluation.feedback),
    );
  const custom = report.custom_question_evaluation ?? [];
  if (custom.length)
    lines.push(
      'Questions:',
      ...custom.map(
        (q, i) =>
          `  ${i + 1}. ${quoted(q.question_text, 300)}: ` +
          (q.ai_evaluation.rating ? label(q.ai_evaluation.rating) : 'not rated') +
          (q.ai_evaluation.feedback ? ` ${quoted(q.ai_evaluation.feedback)}` : ''),
      ),
    );
  // Only https: links (or the service's own): a `javascript:` or `data:` URL in a report is not shown to a recruiter.
  const reportLink = serviceLink(report.report_url, serviceBaseUrl);
  if (reportLink) lines.push(`Report: ${reportLink}`);
  // The stream URL expires; the player link stays valid (facts "Behaviour").
  const recordingLink = serviceLink(report.interview_recording_player_url, serviceBaseUrl);
  if (recordingLink) lines.push(`Recording: ${recordingLink}`);
  lines.push(decision.explanation);
  return lines.join('\n');
}

export function formatInviteNote(inviteUrl: string, emailed: boolean): string {
  const how = emailed ? 'e-mailed to the candidate' : 'ready to send to the candidate';
  return `AI interview invitation ${how}.\nInterview link: ${inviteUrl}`;
}

/**
 * The expiry's note of an invitation (its `reinvitations`): the same text and marker whichever worker writes it, the
 * expiry's follow-up or the re-entry that carried it into the next invitation.
 */
export function expiryNote(
  invitation: Pick<ApplicationRecord, 'atsApplicationId' | 'triggerId' | 'reinvitations'>,
  expiredAt: number,
): { body: string; marker: string } {
  const by = new Date(expiredAt).toISOString().slice(0, 10);
  const marker = invitationMarker(
    `ai-interview-expired:${invitation.atsApplicationId}:${invitation.triggerId}`,
    invitation,
  );
  return { body: `AI interview not completed by ${by}: the invitation has expired.`, marker };
}
