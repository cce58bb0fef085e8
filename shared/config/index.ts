export * from './connection.schema';
export * from './errors';
export { parseConnections, loadConnectionsFile, ConnectionRegistry } from './loader';
export { cachedSecrets, fileSecretsProvider, SECRETS_CACHE_MS, type SecretsProvider } from './secrets';
export { type MatchResult, stageMatches } from './stage-match';
