import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { atsOfPath, undocumentedCalls } from '../../../infra/local/sandbox/documented-routes';
import {
  komboApplicationSchema,
  komboDataChangedSchema,
  komboIntegrationSchema,
  readKomboPage,
} from '../../../shared/ats/kombo/kombo.schemas';

/** An application as kombohq/typescript-sdk @1dc00a9 (getatsapplicationspositiveresponseresult.md) shows it. */
const sdkApplication = {
  id: '26vafvWSRmbhNcxJYqjCzuJg',
  remote_id: '32',
  outcome: 'DECLINED',
  rejection_reason_name: 'Not a fit',
  rejected_at: '2026-04-25T03:44:05.647Z',
  current_stage_id: 'H5daSm8e85Dmvmne3wLeCPhX',
  job_id: 'H5daSm8e85Dmvmne3wLeCPhY',
  candidate_id: '26vafvWSRmbhNcxJYqjCzuJh',
  custom_fields: { key: '<value>' },
  remote_url: 'https://cooperative-freight.org',
  changed_at: '2026-01-30T03:42:24.376Z',
  remote_deleted_at: null,
  remote_created_at: '2026-03-16T11:35:15.222Z',
  remote_updated_at: '2026-01-22T17:23:56.115Z',
  candidate: {
    id: '26vafvWSRmbhNcxJYqjCzuJh',
    remote_id: '7',
    first_name: 'Richie',
    last_name: 'Hegmann',
    email_addresses: [{ email_address: 'richie@example.com', type: 'PERSONAL' }, { type: 'WORK' }],
    source: null,
    remote_url: null,
    tags: [{ id: '26vafvWSRmbhNcxJYqjCzuJi', remote_id: '32', name: 'High Potential' }],
  },
  current_stage: { id: 'H5daSm8e85Dmvmne3wLeCPhX', remote_id: null, name: 'AI Interview', status: 'ACTIVE', index: 2 },
  job: { id: 'H5daSm8e85Dmvmne3wLeCPhY', remote_id: '32', name: 'Backend Engineer' },
  interviews: [],
  offers: [{ id: '76bab8LKuFtqpZ89mofCPMHX', remote_id: '6', status: 'ACCEPTED' }],
};

describe('Kombo unified ATS schemas', () => {
  it('reads an application as the SDK documents it, an entry without an address left out of the e-mails', () => {
    const application = v.parse(komboApplicationSchema, sdkApplication);
    expect(application).toMatchObject({ outcome: 'DECLINED', current_stage: { name: 'AI Interview', index: 2 } });
    expect(application.candidate?.email_addresses).toEqual([{ email_address: 'richie@example.com', type: 'PERSONAL' }]);
    expect(application.candidate?.tags.map((t) => t.name)).toEqual(['High Potential']);
  });

  it('keeps a page whose one item does not read, and says how many did not', () => {
    const body = { status: 'success', data: { next: 'abc', results: [sdkApplication, { id: 7 }] } };
    const page = readKomboPage(body, komboApplicationSchema);
    expect(page).toMatchObject({ unreadable: 1, next: 'abc' });
    expect(page?.items.map((a) => a.id)).toEqual([sdkApplication.id]);
    expect(readKomboPage({ status: 'error', error: { code: 'PLATFORM.INPUT_INVALID' } }, komboApplicationSchema)).toBe(
      undefined,
    );
  });

  it('reads write actions leniently: an unknown coverage is UNKNOWN, an unreadable action is left out', () => {
    const details = {
      status: 'success',
      data: {
        ...{ id: 'personio:acme', tool: { id: 'personio', label: 'Personio' }, status: 'ACTIVE' },
        write_actions: [
          { id: 'ats_add_application_attachment', is_available: true, coverage_status: 'SUPPORTED' },
          { id: 'ats_add_application_note', is_available: false, coverage_status: 'PARTIAL' },
          { id: 'ats_move_application_stage' },
        ],
      },
    };
    const actions = v.parse(komboIntegrationSchema, details).data.write_actions;
    expect(actions.map((a) => [a.id, a.coverage_status])).toEqual([
      ['ats_add_application_attachment', 'SUPPORTED'],
      ['ats_add_application_note', 'UNKNOWN'],
    ]);
  });

  it('reads the data-changed hint as the models it names', () => {
    const hint = {
      id: 'evt_1',
      type: 'data-changed',
      data: {
        ...{ integration_id: 'personio:acme', integration_tool: 'personio', integration_category: 'ATS' },
        changed_models: [{ name: 'ats_applications' }, { name: 'ats_candidates' }, {}],
      },
    };
    expect(v.parse(komboDataChangedSchema, hint).data.changed_models).toEqual(['ats_applications', 'ats_candidates']);
  });

  it("holds Kombo's paths against Kombo's documented routes, not Lever's", () => {
    expect(['/v1/ats/applications', '/v1/integrations/personio:acme', '/v1/opportunities'].map(atsOfPath)).toEqual([
      'kombo',
      'kombo',
      'lever',
    ]);
    const shape = { method: 'GET', route: '/v1/ats/applications', query: ['ids', 'status'], body: [] };
    expect(undocumentedCalls('kombo', [shape])).toEqual([
      'kombo GET /v1/ats/applications: undocumented query parameter status',
    ]);
  });
});
