export { describeFirstIssue, type IssueDescription, issueMessage } from './issues';
export { deliveryIdOf, MAX_ID_LENGTH, SAFE_ID_PATTERN, safeIdSchema } from './ids';
export { httpsLink, quoted, serviceLink, singleEmailAddress, singleLine, TEXT_LIMITS } from './text';
export { describeUnknownField, type UnknownField, unknownFields } from './unknown-fields';
