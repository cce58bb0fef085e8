export * from './constants';
export * from './errors';
export * from './schemas';
export type * from './types';
export { InterviewServiceClient, type InterviewServiceClientOptions, type WarningLogger } from './client';
export type { CallOptions, InterviewService, InviteInput } from './port';
export { listAll, type ListAllOptions } from './list-all';
export { ReportFileUnavailableError, type ReportFile } from './report-file';
