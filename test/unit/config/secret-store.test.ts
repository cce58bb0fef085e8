import {
  CreateSecretCommand,
  PutSecretValueCommand,
  ResourceExistsException,
  ResourceNotFoundException,
  type SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { describe, expect, it } from 'vitest';
import { secretsManagerStore } from '../../../shared/config/secret-store';

const notFound = () => new ResourceNotFoundException({ message: 'no such secret', $metadata: {} });
const exists = () => new ResourceExistsException({ message: 'already exists', $metadata: {} });

/** A Secrets Manager client whose answers to each command are given in turn; every command sent is kept. */
function client(answers: Record<string, (() => Error)[]>) {
  const sent: { name: string; input: Record<string, unknown> }[] = [];
  const fake = {
    send: async (command: { constructor: { name: string }; input: Record<string, unknown> }) => {
      const name = command.constructor.name;
      sent.push({ name, input: command.input });
      const failure = answers[name]?.shift();
      if (failure) throw failure();
      return {};
    },
  };
  return { sent, store: secretsManagerStore(fake as unknown as SecretsManagerClient) };
}

describe('Function: secretsManagerStore.write', () => {
  it("creates a connection's secret that does not exist yet, with the value written", async () => {
    const { sent, store } = client({ [PutSecretValueCommand.name]: [notFound] });
    await store.write('ats-interview-connector/acme', { atsApiKey: 'k' });
    expect(sent.map((c) => c.name)).toEqual([PutSecretValueCommand.name, CreateSecretCommand.name]);
    expect(sent[1]?.input).toEqual({ Name: 'ats-interview-connector/acme', SecretString: '{"atsApiKey":"k"}' });
  });

  it('writes a new version where another write created the secret meanwhile; else only where it exists', async () => {
    const raced = client({ [PutSecretValueCommand.name]: [notFound], [CreateSecretCommand.name]: [exists] });
    await raced.store.write('ats-interview-connector/acme', { atsApiKey: 'k' });
    expect(raced.sent.map((c) => c.name)).toEqual([
      PutSecretValueCommand.name,
      CreateSecretCommand.name,
      PutSecretValueCommand.name,
    ]);
    const existing = client({});
    await existing.store.write('ats-interview-connector/acme', { atsApiKey: 'k' });
    expect(existing.sent.map((c) => c.name)).toEqual([PutSecretValueCommand.name]);
  });
});
