export * from './constants';
export * from './errors';
export * from './schemas';
export type * from './types';
export {
  InterviewServiceClient,
  type InterviewServiceClientOptions,
  type CallOptions,
  type WarningLogger,
} from './client';
export { listAll, type ListAllOptions } from './list-all';
