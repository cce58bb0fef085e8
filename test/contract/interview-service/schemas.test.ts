import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import {
  candidateInviteSchema,
  createdInterviewSchema,
  createInterviewInputSchema,
  dateSchema,
  describeIssues,
  envelopeSchema,
  interviewReportSchema,
  jobApplicantDetailSchema,
  jobApplicantListItemSchema,
  deliveredCandidateEmail,
  reportCreatedDeliverySchema,
  timestampSchema,
  updateInterviewInputSchema,
  webhookDeliverySchema,
  webhookSchema,
} from '../../../shared/interview-service';
import { loadFixture } from '../../helpers/fixtures';

const fixture = (name: string) => loadFixture(`contract/interview-service/fixtures/${name}`);

function failurePath(schema: v.GenericSchema, input: unknown): string {
  const result = v.safeParse(schema, input);
  expect(result.success).toBe(false);
  return result.success ? '' : describeIssues(result.issues).field;
}

describe('Schemas: interview service resources (fixtures from the spec)', () => {
  it.each([
    ['report.json', interviewReportSchema],
    ['applicant-detail.json', jobApplicantDetailSchema],
    ['invite.json', candidateInviteSchema],
    ['webhook.json', webhookSchema],
  ] as const)('parses %s', (name, schema) => {
    const result = v.safeParse(schema, fixture(name));
    expect(result.issues).toBeUndefined();
  });

  it('keeps screening answers on the detail and accepts a list item without them', () => {
    const detail = v.parse(jobApplicantDetailSchema, fixture('applicant-detail.json'));
    expect(detail.screening_question_answers).toEqual([{ question: 'Notice period?', answer: '1 month' }]);
    const { screening_question_answers: _dropped, ...listItem } = fixture('applicant-detail.json');
    expect(v.safeParse(jobApplicantListItemSchema, listItem).success).toBe(true);
  });

  it('tolerates fields the spec does not name', () => {
    const report = { ...fixture('report.json'), new_field_from_service: { nested: true } };
    expect(v.safeParse(interviewReportSchema, report).success).toBe(true);
  });

  type Mutation = [string, v.GenericSchema, (input: any) => unknown, string];
  it.each<Mutation>([
    // What the connector reads is strict: ids (keys), scores (a rule decides on them), the e-mail when present.
    ['report.json', interviewReportSchema, (r: any) => (r.candidate_id = 42), 'candidate_id'],
    ['report.json', interviewReportSchema, (r: any) => delete r.report_id, 'report_id'],
    ['report.json', interviewReportSchema, (r: any) => (r.ai_match_score = '82'), 'ai_match_score'],
    ['report.json', interviewReportSchema, (r: any) => (r.candidate_email_id = 7), 'candidate_email_id'],
    [
      'applicant-detail.json',
      jobApplicantDetailSchema,
      (a: any) => (a.screening_question_answers[0].answer = 3),
      'screening_question_answers.0.answer',
    ],
    ['invite.json', candidateInviteSchema, (i: any) => delete i.candidate_id, 'candidate_id'],
    ['webhook.json', webhookSchema, (w: any) => delete w.event, 'event'],
  ])('%s: a wrong field the connector reads is reported by its path (%#)', (name, schema, mutate, path) => {
    const input = fixture(name);
    mutate(input);
    expect(failurePath(schema, input)).toBe(path);
  });

  // No response field is required in the service's OpenAPI: what the connector does not read never refuses.
  it.each<[string, v.GenericSchema, (input: any) => unknown]>([
    ['report.json', interviewReportSchema, (r: any) => (r.technical_skills_evaluation[0].ai_evaluation = 'good')],
    ['report.json', interviewReportSchema, (r: any) => (r.custom_question_evaluation[0].question_text = null)],
    ['report.json', interviewReportSchema, (r: any) => (r.interview_transcript[1].timestamp = null)],
    ['report.json', interviewReportSchema, (r: any) => (r.interview_transcript[1].timestamp = '12s')],
    ['report.json', interviewReportSchema, (r: any) => (r.proctoring_violations[0].type = undefined)],
    ['report.json', interviewReportSchema, (r: any) => (r.date_created = '2026-11-20T14:03:11Z')],
    ['report.json', interviewReportSchema, (r: any) => (r.report_date = null)],
    ['report.json', interviewReportSchema, (r: any) => delete r.candidate_email_id],
    ['report.json', interviewReportSchema, (r: any) => delete r.interview_name],
    [
      'applicant-detail.json',
      jobApplicantDetailSchema,
      (a: any) => (a.parsed_resume_data.experience[0].end_date = '2025-01-01'),
    ],
    ['applicant-detail.json', jobApplicantDetailSchema, (a: any) => (a.screening_question_answers = null)],
    ['invite.json', candidateInviteSchema, (i: any) => (i.date_modified = '2026-11-20 25:00:00')],
  ])('%s: tolerates an odd field the connector does not read (%#)', (name, schema, mutate) => {
    const input = fixture(name);
    mutate(input);
    expect(v.safeParse(schema, input).issues).toBeUndefined();
  });
});

describe('Schemas: envelope and primitives', () => {
  it('reads status given as the text "true" and as a boolean', () => {
    const schema = envelopeSchema(v.array(v.unknown()));
    expect(v.parse(schema, fixture('reports-envelope-text-status.json')).status).toBe(true);
    expect(v.parse(envelopeSchema(createdInterviewSchema), fixture('create-response.json')).data.interview_id).toMatch(
      /^3f9a/,
    );
    expect(v.parse(envelopeSchema(v.optional(v.unknown())), fixture('update-response.json')).status).toBe(true);
    expect(v.parse(envelopeSchema(v.optional(v.unknown())), fixture('error-401.json')).status).toBe(false);
    expect(failurePath(schema, { status: 'yes', message: '', data: [] })).toBe('status');
  });

  it.each([
    ['2026-11-20 14:03:11', true],
    ['2024-02-29 00:00:00', true],
    ['2026-02-29 10:00:00', false],
    ['2026-11-20 24:00:00', false],
    ['2026-11-20T14:03:11', false],
    ['2026-11-20', false],
  ])('timestamp %s valid: %s', (value, valid) => {
    expect(v.safeParse(timestampSchema, value).success).toBe(valid);
  });

  it.each([
    ['2026-11-20', true],
    ['2026-13-01', false],
    ['20-11-2026', false],
  ])('date %s valid: %s', (value, valid) => {
    expect(v.safeParse(dateSchema, value).success).toBe(valid);
  });
});

describe('Schemas: create and update inputs', () => {
  const question = { question: 'Describe a hard bug you fixed.', time: 2, type: 'audio' };

  it('applies the service defaults on create', () => {
    const body = v.parse(createInterviewInputSchema(), { interview_name: 'Backend', custom_question_list: [question] });
    expect(body).toEqual({
      interview_name: 'Backend',
      custom_question_list: [question],
      interview_language: 'en',
      can_change_interview_language: false,
      is_proctoring_required: true,
    });
  });

  it.each([
    [{ custom_question_list: Array.from({ length: 21 }, () => question) }, 'custom_question_list'],
    [{ custom_question_list: [] }, 'custom_question_list'],
    [{ custom_question_list: [{ ...question, time: 5 }] }, 'custom_question_list.0.time'],
    [{ custom_question_list: [{ ...question, type: 'video' }] }, 'custom_question_list.0.type'],
    [{ interview_name: '  ' }, 'interview_name'],
    [{ interview_language: 'xx' }, 'interview_language'],
    [{ skills: [{ name: 'Go' }] }, 'skills'],
  ])('refuses a create body with a bad field (%#)', (override, path) => {
    const input = { interview_name: 'Backend', custom_question_list: [question], ...override };
    expect(failurePath(createInterviewInputSchema(), input)).toBe(path);
  });

  it.each(['it', 'pt-BR', 'zh-TW', 'afb', 'en-GB'])('accepts the documented language %s without an opt-in', (code) => {
    const input = { interview_name: 'Backend', custom_question_list: [question], interview_language: code };
    expect(v.safeParse(createInterviewInputSchema(), input).success).toBe(true);
  });

  it('accepts a language beyond the 36 documented codes only when the connection opts into it', () => {
    const input = { interview_name: 'Backend', custom_question_list: [question], interview_language: 'eu' };
    expect(v.safeParse(createInterviewInputSchema(), input).success).toBe(false);
    expect(v.safeParse(createInterviewInputSchema(['eu']), input).success).toBe(true);
  });

  it.each([
    [{ skills: Array.from({ length: 11 }, (_, i) => ({ name: `Skill ${i}`, description: '' })) }, 'skills'],
    [{ selected_coding_language: 'cobol' }, 'selected_coding_language'],
    [{}, '(root)'],
    [{ only_coding_round: 'yes' }, 'only_coding_round'],
  ])('refuses an update body with a bad field (%#)', (input, path) => {
    expect(failurePath(updateInterviewInputSchema(), input)).toBe(path);
  });

  it('takes up to 10 skills and the documented coding languages', () => {
    const skills = Array.from({ length: 10 }, (_, i) => ({ name: `Skill ${i}`, description: '' }));
    expect(v.safeParse(updateInterviewInputSchema(), { skills, selected_coding_language: 'typescript' }).success).toBe(
      true,
    );
  });

  it('leaves absent update fields absent (no defaults that would overwrite settings)', () => {
    expect(v.parse(updateInterviewInputSchema(), { is_coding_round_required: true })).toEqual({
      is_coding_round_required: true,
    });
  });
});

describe('Schemas: webhook deliveries', () => {
  it('reads an ids-only delivery and a full one', () => {
    expect(v.parse(reportCreatedDeliverySchema, fixture('webhook-delivery-ids-only.json')).data.report_id).toBe(
      'rpt8x2k4q',
    );
    const full = { event: 'interview_report.created', data: fixture('report.json') };
    expect(v.parse(reportCreatedDeliverySchema, full).data.ai_match_score).toBe(78);
  });

  it("takes the candidate's e-mail from a delivery that gives one address, and leaves anything else out", () => {
    expect(deliveredCandidateEmail(fixture('report.json'))).toMatch(/^[^@\s]+@[^@\s]+$/);
    expect(deliveredCandidateEmail({ candidate_email_id: ' ana@example.com ' })).toBe('ana@example.com');
    expect(deliveredCandidateEmail(fixture('webhook-delivery-ids-only.json').data)).toBeUndefined();
    for (const odd of ['a@b.com, c@d.com', 'not an address', '', 42, null])
      expect(deliveredCandidateEmail({ candidate_email_id: odd })).toBeUndefined();
    expect(deliveredCandidateEmail(undefined)).toBeUndefined();
  });

  it('reads any event kind through the envelope, so unknown kinds can be acknowledged', () => {
    expect(v.parse(webhookDeliverySchema, { event: 'interview.started', data: {} }).event).toBe('interview.started');
    expect(failurePath(webhookDeliverySchema, { data: {} })).toBe('event');
    expect(
      failurePath(reportCreatedDeliverySchema, { event: 'interview_report.created', data: { report_id: 'r1' } }),
    ).toBe('data.interview_id');
  });
});
