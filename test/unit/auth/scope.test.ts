import { describe, expect, it } from 'vitest';
import { PermissionError } from '../../../src/errors.js';
import { Scope } from '../../../src/auth/tenancy.js';

const org = new Scope({ apiKeyId: 'k1', organisationId: 'o1', type: 'organisation', workspaceId: null });
const ws = new Scope({ apiKeyId: 'k2', organisationId: 'o1', type: 'workspace', workspaceId: 'w1' });

describe('Scope: a workspace key sees only its own workspace', () => {
  it('rows: the organisation, and a workspace key its workspace (with or without organisation-wide rows)', () => {
    expect(org.rows()).toEqual({ organisationId: 'o1' });
    expect(ws.rows()).toEqual({ organisationId: 'o1', workspaceId: 'w1' });
    expect(org.rowsWithShared()).toEqual({ organisationId: 'o1' });
    expect(ws.rowsWithShared()).toEqual({ organisationId: 'o1', $or: [{ workspaceId: 'w1' }, { workspaceId: null }] });
  });

  it('sees: organisation-wide rows are visible to every key of the organisation; owns: only a row of its own workspace', () => {
    expect(ws.sees({ organisationId: 'o1', workspaceId: 'w1' })).toBe(true);
    expect(ws.sees({ organisationId: 'o1', workspaceId: null })).toBe(true);
    expect(ws.sees({ organisationId: 'o1', workspaceId: 'w2' })).toBe(false);
    expect(ws.sees({ organisationId: 'o2', workspaceId: 'w1' })).toBe(false);
    expect(ws.sees(null)).toBe(false);
    expect(org.sees({ organisationId: 'o1', workspaceId: 'w2' })).toBe(true);
    expect(ws.owns({ organisationId: 'o1', workspaceId: null })).toBe(false);
    expect(org.owns({ organisationId: 'o1', workspaceId: null })).toBe(true);
    expect(org.owns({ organisationId: 'o2', workspaceId: null })).toBe(false);
  });

  it('requireOrganisationKey: one 403 with one message', () => {
    expect(() => org.requireOrganisationKey()).not.toThrow();
    expect(() => ws.requireOrganisationKey()).toThrow(PermissionError);
    expect(() => ws.requireOrganisationKey()).toThrow('This operation needs an organisation API key.');
  });
});
