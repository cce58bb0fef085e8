import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cachedSecrets, fileSecretsProvider, loadConnectionsFile, parseConnections } from '../../../shared/config';
import { connectionDocument } from '../../helpers/connections';

const dir = mkdtempSync(join(tmpdir(), 'connector-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('Function: parseConnections', () => {
  it('applies the defaults a user would expect', () => {
    const [connection] = parseConnections(connectionDocument());
    expect(connection).toMatchObject({
      triggers: [
        {
          interview: {
            language: 'en',
            proctoring: true,
            allowLanguageChange: false,
            skills: [],
            namePattern: '{jobName} – AI interview',
          },
          invite: { email: true, atsNote: true },
        },
      ],
      writeBack: { note: { visibility: 'admin_only' }, advance: { maxProctoringViolations: 0 } },
    });
  });

  it.each([
    [{ ats: 'taleo' }, 'connections[0] (acme-greenhouse).ats: must be one of greenhouse, ashby, lever, workable'],
    [{ atsBaseUrl: 'harvest' }, 'connections[0] (acme-greenhouse).atsBaseUrl: must be a URL'],
    [{ id: 'Acme Greenhouse' }, 'connections[0] (Acme Greenhouse).id: must be lowercase'],
    [{ triggers: [] }, 'connections[0] (acme-greenhouse).triggers: at least one trigger'],
    [
      { triggers: [{ id: 't', stage: {}, interview: { questions: [{ question: 'q', time: 2, type: 'audio' }] } }] },
      'connections[0] (acme-greenhouse).triggers.0.stage: needs an id, idsByJob or a name',
    ],
    [
      {
        triggers: [
          {
            id: 't',
            stage: { id: '1' },
            interview: { questions: Array.from({ length: 21 }, () => ({ question: 'q', time: 2, type: 'audio' })) },
          },
        ],
      },
      'triggers.0.interview.questions: allows at most 20 questions',
    ],
    [
      {
        triggers: [
          {
            id: 't',
            stage: { id: '1' },
            interview: { language: 'xx', questions: [{ question: 'q', time: 2, type: 'audio' }] },
          },
        ],
      },
      'triggers: interview.language must be a language of the service or listed in interviewService.extraLanguages',
    ],
    [{ writeBack: { advance: { minAiMatchScore: 120, toStage: { id: '2' } } } }, 'writeBack.advance.minAiMatchScore'],
  ])('names the connection and the field (%#)', (override, message) => {
    expect(() => parseConnections(connectionDocument(override))).toThrow(message);
  });

  it('accepts a language outside the 12 when the connection opts into it', () => {
    const document = connectionDocument({
      interviewService: { baseUrl: 'https://x.example.com', extraLanguages: ['it'] },
      triggers: [
        {
          id: 't',
          stage: { id: '1' },
          interview: { language: 'it', questions: [{ question: 'q', time: 2, type: 'audio' }] },
        },
      ],
    });
    expect(parseConnections(document)[0]?.triggers[0]?.interview.language).toBe('it');
  });

  it('refuses duplicate connection ids and duplicate trigger ids', () => {
    const document = connectionDocument();
    expect(() => parseConnections({ connections: [document.connections[0], document.connections[0]] })).toThrow(
      'id acme-greenhouse is used twice',
    );
    const trigger = (document.connections[0]!.triggers as unknown[])[0];
    expect(() => parseConnections(connectionDocument({ triggers: [trigger, trigger] }))).toThrow(
      'trigger ids must be unique',
    );
  });

  it('refuses a field it does not know, naming it and the field meant: a misspelt rule is not dropped', () => {
    const [connection] = connectionDocument().connections as Record<string, unknown>[];
    const { writeBack, ...rest } = connection as { writeBack: unknown };
    const triggers = (connection!.triggers as Record<string, unknown>[]).map((t) => ({ ...t, stagee: 'x' }));
    const typo = { connections: [{ ...rest, writeback: writeBack, triggers }] };
    expect(() => parseConnections(typo)).toThrow(
      'connections[0] (acme-greenhouse).writeback: unknown field (did you mean writeBack?)',
    );
    expect(() => parseConnections(typo)).toThrow(
      '(acme-greenhouse).triggers.0.stagee: unknown field (did you mean stage?)',
    );
    // A key Object itself has is a stray key too, never taken for one the schema knows.
    const [own] = JSON.parse(JSON.stringify(connectionDocument().connections)) as Record<string, unknown>[];
    expect(() => parseConnections({ connections: [{ ...own, constructor: { x: 1 } }] })).toThrow(
      '(acme-greenhouse).constructor: unknown field',
    );
    // Connections already stored are read as the functions read them: the field is not refused there.
    expect(parseConnections(typo, 'the connections table', { unknownFields: 'ignore' })).toHaveLength(1);
    // What the schema knows, nested and optional, passes: the shipped files are checked below.
    expect(parseConnections(connectionDocument())).toHaveLength(1);
    // A field left out is said so, not as valibot's "Invalid key".
    const { stage: _stage, ...stageless } = (connection!.triggers as Record<string, unknown>[])[0]!;
    expect(() => parseConnections(connectionDocument({ triggers: [stageless] }))).toThrow(
      'connections[0] (acme-greenhouse).triggers.0.stage: is required',
    );
    expect(() => parseConnections(connectionDocument({ triggers: [{ ...stageless, stage: { name: '' } }] }))).toThrow(
      'connections[0] (acme-greenhouse).triggers.0.stage.name: must not be empty',
    );
  });

  it('refuses a Kombo integration listed by two connections (each would take its orders)', () => {
    const kombo = (id: string) =>
      connectionDocument({
        id,
        orders: {
          kombo: {
            integrations: ['teamtailor:acme'],
            tests: [{ id: 't', name: 'T', interview: { questions: [{ question: 'q', time: 2, type: 'audio' }] } }],
          },
        },
      }).connections[0];
    expect(parseConnections({ connections: [kombo('a')] })[0]?.orders?.kombo?.baseUrl).toBe('https://api.kombo.dev/v1');
    expect(() => parseConnections({ connections: [kombo('a'), kombo('b')] })).toThrow(
      'Kombo integration teamtailor:acme is listed by more than one connection',
    );
  });

  it('refuses a document without connections', () => {
    expect(() => parseConnections({})).toThrow('connections');
    expect(() => parseConnections({ connections: [] })).toThrow('at least one connection');
  });
});

describe('Function: loadConnectionsFile', () => {
  it('reads a file, and names the file when it is missing or not JSON', () => {
    const good = join(dir, 'good.json');
    writeFileSync(good, JSON.stringify(connectionDocument()));
    expect(loadConnectionsFile(good)).toHaveLength(1);
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{ nope');
    expect(() => loadConnectionsFile(bad)).toThrow(`${bad} is not valid JSON`);
    expect(() => loadConnectionsFile(join(dir, 'missing.json'))).toThrow('cannot read the connections file');
  });

  it('accepts the example and local configs shipped with the project', () => {
    expect(loadConnectionsFile('config/connections.example.json')[0]?.id).toBe('acme-greenhouse');
  });
});

describe('Function: fileSecretsProvider', () => {
  it('reads a connection secret and names a missing field without its value', async () => {
    const path = join(dir, 'secrets.json');
    writeFileSync(
      path,
      JSON.stringify({
        good: { interviewApiKey: 'key-123', interviewWebhookToken: 'x'.repeat(32) },
        short: { interviewApiKey: 'key-456', interviewWebhookToken: 'tiny' },
      }),
    );
    const provider = fileSecretsProvider(path);
    expect((await provider.getConnectionSecrets('good')).interviewApiKey).toBe('key-123');
    const error = await provider.getConnectionSecrets('short').catch((e: unknown) => e as Error);
    expect(error).toMatchObject({ code: 'secret-invalid', message: expect.stringContaining('interviewWebhookToken') });
    expect((error as Error).message).not.toContain('tiny');
    await expect(provider.getConnectionSecrets('absent')).rejects.toMatchObject({ code: 'secret-not-found' });
    await expect(fileSecretsProvider(join(dir, 'none.json')).getConnectionSecrets('good')).rejects.toMatchObject({
      code: 'secret-unavailable',
      retryable: true,
    });
  });

  it('caches secrets for the TTL, then reads them again', async () => {
    let now = Date.UTC(2026, 10, 21);
    let loads = 0;
    const provider = cachedSecrets(
      async () => ({ interviewApiKey: `key-${++loads}`, interviewWebhookToken: 'x'.repeat(32) }),
      () => now,
      60_000,
    );
    expect((await provider.getConnectionSecrets('c')).interviewApiKey).toBe('key-1');
    now += 59_000;
    expect((await provider.getConnectionSecrets('c')).interviewApiKey).toBe('key-1');
    now += 2_000;
    expect((await provider.getConnectionSecrets('c')).interviewApiKey).toBe('key-2');
  });

  it('loads a secret once for the callers that miss the cache at the same moment', async () => {
    let loads = 0;
    const provider = cachedSecrets(async () => {
      loads++;
      await new Promise((resolve) => setTimeout(resolve, 10));
      return { interviewApiKey: 'key', interviewWebhookToken: 'x'.repeat(32) };
    });
    const all = await Promise.all(Array.from({ length: 10 }, () => provider.getConnectionSecrets('c')));
    expect(loads).toBe(1);
    expect(new Set(all).size).toBe(1);
  });
});
