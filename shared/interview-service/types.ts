import type * as v from 'valibot';
import type {
  candidateInviteSchema,
  invitationSchema,
  createdInterviewSchema,
  createInterviewInputSchema,
  interviewReportSchema,
  interviewSummarySchema,
  jobApplicantDetailSchema,
  jobApplicantListItemSchema,
  listQuerySchema,
  reportCreatedDeliverySchema,
  updateInterviewInputSchema,
  webhookSchema,
} from './schemas';

export type JobApplicant = v.InferOutput<typeof jobApplicantListItemSchema>;
export type JobApplicantDetail = v.InferOutput<typeof jobApplicantDetailSchema>;
export type InterviewReport = v.InferOutput<typeof interviewReportSchema>;
export type CandidateInvite = v.InferOutput<typeof candidateInviteSchema>;
export type Webhook = v.InferOutput<typeof webhookSchema>;
export type InterviewSummary = v.InferOutput<typeof interviewSummarySchema>;
export type Invitation = v.InferOutput<typeof invitationSchema>;
export type CreatedInterview = v.InferOutput<typeof createdInterviewSchema>;
export type CreateInterviewInput = v.InferInput<ReturnType<typeof createInterviewInputSchema>>;
export type CreateInterviewBody = v.InferOutput<ReturnType<typeof createInterviewInputSchema>>;
export type UpdateInterviewInput = v.InferInput<ReturnType<typeof updateInterviewInputSchema>>;
export type ListQuery = v.InferInput<typeof listQuerySchema>;
export type ReportCreatedDelivery = v.InferOutput<typeof reportCreatedDeliverySchema>;
