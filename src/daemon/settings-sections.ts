import { registerSettings } from './settings/registry.js';
import { compressionSettings } from './compression/settings.js';
import { outboundProxySettings } from './net/settings.js';
import { cloudSyncSettings } from './sync/settings.js';
import { agentSettings } from './mcp/settings.js';
import { oauthEndpointSettings } from './oauth/settings.js';

/**
 * The features' settings sections, registered once in the order the Settings page and GET /api/settings
 * list them (after the core's settings). Imported first by the route table (routes.ts) and boot.ts, so
 * the sections are in before the settings schema is read; src/daemon/settings/ imports no feature.
 */
export const FEATURE_SETTINGS = [compressionSettings, outboundProxySettings, cloudSyncSettings, agentSettings, oauthEndpointSettings] as const;

for (const section of FEATURE_SETTINGS) registerSettings(section);
