import './settings-sections.js';
import { authRoutes } from './auth/routes.js';
import { comboRoutes } from './combos/routes.js';
import { fallbackChainRoutes } from './combos/fallback-chains.js';
import type { RouteDef } from './http/routes.js';
import { keyRoutes } from './keys/routes.js';
import { settingsRoutes } from './settings/routes.js';
import { netRoutes } from './net/routes.js';
import { syncRoutes } from './sync/routes.js';
import { systemRoutes } from './system/routes.js';
import { clusterRoutes } from './cluster/routes.js';
import { providerRoutes } from './providers/routes.js';
import { importRoutes } from './imports/routes.js';
import { healthRoutes } from './providers/health.js';
import { modelTestRoutes } from './proxy/model-test.js';
import { proxyRoutes } from './proxy/routes.js';
import { familyRoutes } from './proxy/family-routes.js';
import { responsesSocketRoutes } from './responses-ws/routes.js';
import { resilienceRoutes } from './resilience/routes.js';
import { inspectRoutes } from './inspect/routes.js';
import { webhookRoutes } from './webhooks/routes.js';
import { usageRoutes } from './usage/routes.js';
import { liveRoutes } from './live/routes.js';
import { quotaRoutes } from './quotas/routes.js';
import { memoryRoutes } from './memory/routes.js';
import { playgroundRoutes } from './playground/routes.js';
import { cacheRoutes } from './cache/routes.js';
import { guardrailRoutes } from './guardrails/routes.js';
import { compressionRoutes } from './compression/routes.js';
import { backupRoutes } from './backups/routes.js';
import { observabilityRoutes } from './observability/routes.js';
import { hookRoutes } from './hooks/routes.js';
import { reasoningRoutes } from './reasoning/routes.js';
import { mcpRoutes } from './mcp/routes.js';
import { copilotRoutes } from './copilot/routes.js';
import { dashboardRoutes } from './dashboard/routes.js';
import { a2aRoutes } from './a2a/routes.js';
import { agentRoutes } from './agents/routes.js';
import { doctorRoutes } from './doctor/routes.js';
import { skillRoutes } from './skills/routes.js';
import { batchRoutes } from './batches/routes.js';
import { oauthRoutes } from './oauth/routes.js';
import { insightRoutes } from './insights/routes.js';
import { evalRoutes } from './evals/routes.js';
import { vaultRoutes } from './vault/routes.js';
import { oauthCatalogRoutes } from './oauth/catalog.js';
import { catalogRoutes } from './catalog/routes.js';

/**
 * Every route of the daemon, each with its authorization tier. This is the only list: the app registers
 * exactly these, and the OpenAPI document is generated from them.
 */
export const ROUTES: readonly RouteDef[] = [...systemRoutes, ...clusterRoutes, ...authRoutes, ...keyRoutes, ...quotaRoutes, ...settingsRoutes, ...netRoutes, ...syncRoutes, ...webhookRoutes, ...usageRoutes, ...catalogRoutes, ...liveRoutes, ...importRoutes, ...providerRoutes, ...healthRoutes, ...modelTestRoutes, ...comboRoutes, ...fallbackChainRoutes, ...resilienceRoutes, ...inspectRoutes, ...proxyRoutes, ...familyRoutes(), ...responsesSocketRoutes, ...memoryRoutes, ...playgroundRoutes, ...cacheRoutes, ...guardrailRoutes, ...compressionRoutes, ...backupRoutes, ...observabilityRoutes, ...hookRoutes, ...reasoningRoutes, ...mcpRoutes, ...copilotRoutes, ...dashboardRoutes, ...a2aRoutes, ...agentRoutes, ...doctorRoutes, ...skillRoutes, ...batchRoutes, ...oauthRoutes, ...insightRoutes, ...evalRoutes, ...vaultRoutes, ...oauthCatalogRoutes];
