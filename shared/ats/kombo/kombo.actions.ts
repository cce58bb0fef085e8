/**
 * The ids of Kombo's write actions the connector relies on, as `GET /integrations/{integration_id}` lists them in
 * `write_actions[].id` (coverage_status SUPPORTED|UNSUPPORTED|NOT_IMPLEMENTED|UNKNOWN, is_available).
 *
 * Confirmed: `ats_add_application_attachment` (its limits route is `GET /ats/actions/ats_add_application_attachment`,
 * api-evangelist/kombo's copy of Kombo's OpenAPI). Kombo's SDK (kombohq/typescript-sdk @1dc00a9,
 * src/models/getintegrationsintegrationidpositiveresponse.ts) names only `ats_create_candidate` as an example.
 * Unconfirmed, chosen by the same naming until Kombo's list is read: the stage move, the note and the two tag ids
 * (one search of the stored SDK, docs and public code found none of them).
 */
export const KOMBO_WRITE_ACTIONS = {
  moveStage: 'ats_move_application_stage',
  addNote: 'ats_add_application_note',
  addTag: 'ats_add_candidate_tag',
  removeTag: 'ats_remove_candidate_tag',
  addAttachment: 'ats_add_application_attachment',
} as const;

export type KomboWriteAction = (typeof KOMBO_WRITE_ACTIONS)[keyof typeof KOMBO_WRITE_ACTIONS];

/** Kombo's per-integration support of a write action (the SDK's WriteActionCoverageStatus). */
export const KOMBO_COVERAGE_STATUSES = ['SUPPORTED', 'UNSUPPORTED', 'NOT_IMPLEMENTED', 'UNKNOWN'] as const;
export type KomboCoverageStatus = (typeof KOMBO_COVERAGE_STATUSES)[number];

/** Kombo's error codes the connector branches on (the SDK's KomboAtsErrorCode, docs/models/komboatserrorcode.md). */
export const KOMBO_ERROR_CODES = {
  concurrencyLimit: 'PLATFORM.CONCURRENCY_LIMIT_EXCEEDED',
  rateLimit: 'PLATFORM.RATE_LIMIT_EXCEEDED',
  integrationNotFound: 'PLATFORM.INTEGRATION_NOT_FOUND',
  inputInvalid: 'PLATFORM.INPUT_INVALID',
  authenticationInvalid: 'PLATFORM.AUTHENTICATION_INVALID',
  actionNotAvailable: 'INTEGRATION.ACTION_NOT_AVAILABLE',
  actionDisabled: 'INTEGRATION.ACTION_DISABLED',
  permissionMissing: 'INTEGRATION.PERMISSION_MISSING',
  remoteRateLimit: 'REMOTE.RATE_LIMIT_EXCEEDED',
  jobClosed: 'ATS.JOB_CLOSED',
} as const;
