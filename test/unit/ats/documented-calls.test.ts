import { describe, expect, it } from 'vitest';
import { atsOfPath } from '../../../infra/local/sandbox/documented-routes';
import { takeUndocumented } from '../../helpers/documented-calls';
import { stubFetch } from '../../helpers/stub-fetch';

const ok = () => ({ status: 200, json: {} });

describe('stubbed ATS calls are held against the routes the vendors document', () => {
  it('flags a call with an undocumented query parameter, body field or route, and passes documented ones', async () => {
    const { fetch } = stubFetch(ok);
    await fetch('https://acme.workable.com/spi/v3/candidates?shortcode=GROOV005&stage=ai&limit=100');
    await fetch('https://harvest.greenhouse.io/v3/applications/7/move', {
      method: 'POST',
      body: JSON.stringify({ to_stage_id: 9 }),
    });
    expect(takeUndocumented()).toEqual([]);
    await fetch('https://acme.workable.com/spi/v3/candidates?status=active');
    await fetch('https://api.ashbyhq.com/candidate.createNote', {
      method: 'POST',
      body: JSON.stringify({ candidateId: 'c', note: 'n', colour: 'red' }),
    });
    await fetch('https://harvest.greenhouse.io/v1/candidates/7/tags', { method: 'PUT', body: '{}' });
    // Taken here, so this test's own check after it finds none left.
    expect(takeUndocumented()).toEqual([
      'workable GET /spi/v3/candidates: undocumented query parameter status',
      'ashby POST /candidate.createNote: undocumented body field colour',
      'lever PUT /v1/candidates/7/tags: no documented route',
    ]);
  });

  it('knows each ATS by the shape of its paths, and leaves other APIs alone', () => {
    expect(['/spi/v3/jobs', '/v3/jobs', '/token', '/v1/opportunities', '/application.info'].map(atsOfPath)).toEqual([
      'workable',
      'greenhouse',
      'greenhouse',
      'lever',
      'ashby',
    ]);
    expect(atsOfPath('/interviews')).toBeUndefined();
  });
});
