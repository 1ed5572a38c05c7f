import { z } from 'zod';
import { about } from '../settings/definitions.js';
import type { SettingsSection } from '../settings/registry.js';

/** Mask shown for a stored sync secret (GET /api/settings); a PATCH echoing it keeps the stored one. */
export const SECRET_MASK = '********';

/** The `cloudSync` setting (CONTRACT; docs/operations.md "Sync between machines"). */
export const cloudSyncSettingsSchema = z
  .object({
    url: z.union([z.literal(''), z.string().max(2000).url().refine((u) => /^https?:\/\//i.test(u), 'must be an http(s) URL')]).default('').describe("The remote: another router's `/api/sync/cloud/remote`, or an HTTPS endpoint speaking the same protocol."),
    secret: z.union([z.literal(''), z.literal(SECRET_MASK), z.string().min(16).max(256)]).default('').describe('Shared secret of both sides: signs every request and reply (X-Cloud-Sig) and seals credentials.'),
    enabled: z.boolean().default(false).describe("Sync on: this router syncs, and answers a remote's requests at /api/sync/cloud/remote."),
    overwriteCredentials: z.boolean().default(false).describe('Let tokens and providerSpecificData from the remote overwrite (and fill in) local ones. Off by default.'),
    /** The security settings, node base URLs (and new nodes), key scopes and re-enabling keys: sync/trust.ts. */
    applySecurityChanges: z
      .boolean()
      .default(false)
      .describe('Let the remote change what decides who may get in and where credentials and prompts go (security settings, node addresses, key scopes). Off by default.'),
  })
  .strict();
export type CloudSyncSettings = z.infer<typeof cloudSyncSettingsSchema>;

/** The `cloudSync` settings section: its secret stored sealed, shown masked; a PATCH echoing the mask keeps it. */
export const cloudSyncSettings: SettingsSection<CloudSyncSettings> = {
  key: 'cloudSync',
  schema: cloudSyncSettingsSchema
    .prefault({})
    .meta(about({ group: 'sync', description: 'Sync with another router or an HTTPS endpoint (docs/operations.md "Sync between machines"). The secret is shown masked.' })),
  mask: (s) => ({ ...s, secret: s.secret ? SECRET_MASK : '' }),
  unmask: (patch, stored) => (patch.secret === SECRET_MASK ? { ...patch, secret: stored.secret } : patch),
  sealed: { field: 'secret' },
};

declare module '../settings/registry.js' {
  interface FeatureSettings {
    cloudSync: CloudSyncSettings;
  }
}
