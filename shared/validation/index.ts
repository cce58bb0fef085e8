export { describeFirstIssue, type IssueDescription } from './issues';
