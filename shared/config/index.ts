export * from './connection.schema';
export * from './errors';
export { parseConnections, loadConnectionsFile, ConnectionRegistry, fillPlaceholders } from './loader';
export {
  CachedConnections,
  CONNECTION_CACHE,
  connectionCacheMs,
  type ConnectionReader,
  type ServedConnection,
  servedConnection,
  type StoredConnection,
} from './connection-source';
export { cachedSecrets, fileSecretsProvider, SECRETS_CACHE_MS, type SecretsProvider } from './secrets';
export { type MatchResult, outOfStage, stageMatches } from './stage-match';
