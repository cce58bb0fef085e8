export class ConfigError extends Error {
  public readonly code = 'invalid-config';
  public readonly retryable = false;

  public constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ConfigError';
  }
}

export class SecretsError extends Error {
  public readonly code: 'secret-not-found' | 'secret-invalid' | 'secret-unavailable';
  public readonly retryable: boolean;

  public constructor(code: SecretsError['code'], message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SecretsError';
    this.code = code;
    this.retryable = code === 'secret-unavailable';
  }
}
