import type { ListAllOptions } from './list-all';
import type {
  CandidateInvite,
  CreatedInterview,
  CreateInterviewInput,
  InterviewReport,
  InterviewSummary,
  Invitation,
  ListQuery,
  UpdateInterviewInput,
} from './types';

export interface CallOptions {
  /** The caller's deadline; aborting it stops the call and any waits between retries. */
  signal?: AbortSignal;
}

/** A candidate invited to an interview (`POST /interview/invite`). */
export interface InviteInput {
  interviewId: string;
  name: string;
  email: string;
  jobApplicationId?: string | undefined;
  /** Asks again for that candidate's invitation (the service's re-send) instead of a new one. */
  candidateId?: string | undefined;
  /** The service sends its own e-mail unless this is true. */
  disableEmailNotification: boolean;
}

/** What the pipeline asks of the interview service: the port its client (./client.ts) implements. */
export interface InterviewService {
  createInterview(input: CreateInterviewInput, options?: CallOptions): Promise<CreatedInterview>;
  updateInterview(interviewId: string, input: UpdateInterviewInput, options?: CallOptions): Promise<void>;
  findInterviewsByName(name: string, options?: CallOptions): Promise<InterviewSummary[]>;
  listReports(query?: ListQuery, options?: CallOptions): Promise<InterviewReport[]>;
  listAllReports(
    query?: Omit<ListQuery, 'page' | 'limit'>,
    options?: CallOptions & ListAllOptions,
  ): Promise<InterviewReport[]>;
  inviteCandidate(input: InviteInput, options?: CallOptions): Promise<Invitation>;
  findInvitation(interviewId: string, email: string, options?: CallOptions): Promise<CandidateInvite | undefined>;
  /** The report file at its link, at most `maxBytes`, a PDF (./report-file.ts). */
  readReportFile(url: string, options: CallOptions & { maxBytes: number }): Promise<Uint8Array>;
}

/** A port method's type, for the client that types each of its methods by the port it implements. */
export type ServiceMethod<K extends keyof InterviewService> = InterviewService[K];
