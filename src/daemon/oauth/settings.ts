import { z } from 'zod';
import { about } from '../settings/definitions.js';
import type { SettingsSection } from '../settings/registry.js';

/** The providers with an OAuth login or token import (CONTRACT "Wave two"). */
export const OAUTH_PROVIDER_IDS = ['claude-code', 'codex', 'gemini-cli', 'github-copilot', 'qwen-code', 'antigravity', 'windsurf', 'devin-cli'] as const;
export type OAuthProviderId = (typeof OAUTH_PROVIDER_IDS)[number];

const url = z
  .string()
  .max(2000)
  .url()
  .refine((u) => /^https?:\/\//i.test(u), 'must be an http(s) URL');

/** One provider's endpoint overrides; each replaces the built-in URL of that step. */
export const oauthEndpointOverrideSchema = z
  .object({ authorizeUrl: url, tokenUrl: url, deviceAuthorizationUrl: url, apiBaseUrl: url })
  .partial()
  .strict();
export type OAuthEndpointOverride = z.infer<typeof oauthEndpointOverrideSchema>;

/**
 * Setting `oauthEndpoints`: per provider, the authorization, token and device endpoints and the API base
 * URL to use instead of the real ones (mock servers in tests, private deployments). For GitHub Copilot,
 * `apiBaseUrl` is the GitHub API the Copilot token is fetched from; chat goes where that token says.
 */
export const oauthEndpointsSchema = z.partialRecord(z.enum(OAUTH_PROVIDER_IDS), oauthEndpointOverrideSchema).default({});

/** The `oauthEndpoints` settings section. */
export const oauthEndpointSettings: SettingsSection<z.infer<typeof oauthEndpointsSchema>> = {
  key: 'oauthEndpoints',
  schema: oauthEndpointsSchema.meta(
    about({ group: 'accounts', description: 'OAuth endpoint overrides per provider: {"<provider>": {authorizeUrl, tokenUrl, deviceAuthorizationUrl, apiBaseUrl}} (docs/accounts.md).' }),
  ),
};

declare module '../settings/registry.js' {
  interface FeatureSettings {
    oauthEndpoints: z.infer<typeof oauthEndpointsSchema>;
  }
}
