import { setTimeout as sleep } from 'node:timers/promises';
import { CODE_ASSIST_METADATA, loadCodeAssistBody } from '../translate/formats/code-assist/index.js';
import type { ProviderDef } from '../providers/types.js';
import { formatProviderError } from '../routing/provider-error.js';
import { oauthCall, type OAuthReply } from './http.js';

/** How often an unfinished onboarding is asked again, and how long apart. */
const ONBOARD_ROUNDS = 10;
const ONBOARD_WAIT_MS = 1000;

function projectOf(value: unknown): string | undefined {
  if (typeof value === 'string' && value) return value;
  const id = (value as { id?: unknown } | undefined)?.id;
  return typeof id === 'string' && id ? id : undefined;
}

function failed(step: string, reply: OAuthReply): Error {
  const err = (reply.json?.error ?? {}) as { message?: unknown };
  return new Error(formatProviderError(reply.status, `${step}: ${typeof err.message === 'string' ? err.message : 'refused'}`));
}

/**
 * Finds the Google Cloud project Code Assist bills a login to, as Gemini CLI does: `loadCodeAssist` names
 * it for an account already set up; otherwise `onboardUser` on the default tier (free tier for personal
 * accounts) creates it, a long-running operation asked again until `done`.
 */
export async function discoverProject(def: ProviderDef, apiBase: string, accessToken: string, proxy?: string | null): Promise<string> {
  const base = apiBase.replace(/\/+$/, '');
  const headers = { authorization: `Bearer ${accessToken}`, ...def.headers };
  const load = await oauthCall({ url: `${base}/v1internal:loadCodeAssist`, def, proxy, headers, json: loadCodeAssistBody(undefined) });
  if (load.status >= 400) throw failed('loadCodeAssist', load);
  const found = projectOf(load.json?.cloudaicompanionProject);
  if (found) return found;
  const tiers = Array.isArray(load.json?.allowedTiers) ? (load.json.allowedTiers as Array<{ id?: unknown; isDefault?: unknown }>) : [];
  const tier = tiers.find((t) => t.isDefault === true)?.id ?? 'free-tier';
  for (let round = 0; round < ONBOARD_ROUNDS; round++) {
    const op = await oauthCall({ url: `${base}/v1internal:onboardUser`, def, proxy, headers, json: { tierId: tier, metadata: CODE_ASSIST_METADATA } });
    if (op.status >= 400) throw failed('onboardUser', op);
    if (op.json?.done === true) {
      const project = projectOf((op.json.response as { cloudaicompanionProject?: unknown } | undefined)?.cloudaicompanionProject);
      if (project) return project;
      throw new Error(formatProviderError(502, 'onboardUser finished without a project'));
    }
    await sleep(ONBOARD_WAIT_MS);
  }
  throw new Error(formatProviderError(504, 'Code Assist onboarding did not finish; try the login again'));
}
