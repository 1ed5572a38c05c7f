import { bearer, type ProviderDef } from '../types.js';

/**
 * IDE logins whose browser flows the vendors retired: a token copied from the IDE is imported
 * (`POST /api/oauth/{windsurf|devin-cli}/import-token`) and sent as a Bearer token to the OpenAI-compatible
 * chat endpoint of the connection (`providerSpecificData.baseUrl`, or the `oauthEndpoints` setting's
 * `apiBaseUrl`). There is no refresh: an expired token is imported again. Neither vendor's own chat wire is
 * public (Windsurf's is protobuf Connect-RPC from a closed language server; Devin's public API is agent
 * sessions, not chat): docs/accounts.md "Windsurf and Devin: what is known of their wire".
 */
function ideProvider(id: string, name: string): ProviderDef {
  return {
    id,
    name,
    kind: 'oauth',
    format: 'openai-chat',
    // No public chat endpoint of its own: each connection (or the oauthEndpoints setting) names one.
    baseUrl: 'http://127.0.0.1:1/v1',
    authKinds: ['oauth'],
    authHeaders: bearer,
    endpoints: {},
    oauth: { tokenUrl: '', clientId: '', body: 'json', retired: true },
    models: [{ id: 'default' }],
  };
}

export const windsurf = ideProvider('windsurf', 'Windsurf (imported IDE token)');
export const devinCli = ideProvider('devin-cli', 'Devin CLI (imported token)');
