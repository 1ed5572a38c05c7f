import { arch, platform, versions } from 'node:process';

/**
 * The headers of the clients router speaks for on Google's Code Assist API, read from their public code.
 */

/**
 * The Gemini CLI release whose headers `gemini-cli` sends (tag v0.56.0 of google-gemini/gemini-cli, its
 * packages/core/package.json version; that release bundles google-auth-library 10.9.0, package-lock.json).
 */
export const GEMINI_CLI_VERSION = '0.56.0';
const GOOGLE_AUTH_LIBRARY_VERSION = '10.9.0';

/**
 * Gemini CLI's user agent towards Code Assist for one model: gemini-cli v0.56.0
 * packages/core/src/core/contentGenerator.ts builds `GeminiCLI/${version}/${model} (${process.platform};
 * ${process.arch}; ${surface})` (surface `terminal` outside an IDE, packages/core/src/utils/surface.ts) and
 * passes it as the Code Assist server's `User-Agent` (code_assist/server.ts `requestPost` /
 * `requestStreamingPost`, setup.ts too); google-auth-library's request interceptor (AuthClient
 * DEFAULT_REQUEST_INTERCEPTOR, build/src/auth/authclient.js) then appends `google-api-nodejs-client/<its
 * version>` and sets `x-goog-api-client: gl-node/<node version>`.
 */
export function geminiCliUserAgent(model: string): string {
  return `GeminiCLI/${GEMINI_CLI_VERSION}/${model} (${platform}; ${arch}; terminal) google-api-nodejs-client/${GOOGLE_AUTH_LIBRARY_VERSION}`;
}

/** `x-goog-api-client` as google-auth-library sets it: `gl-node/` and the running Node's version. */
export const GOOGLE_API_CLIENT = `gl-node/${versions.node}`;

/** Gemini CLI's headers for one Code Assist request: the user agent names the request's model. */
export function geminiCliHeaders(model: string): Record<string, string> {
  return { 'user-agent': geminiCliUserAgent(model), 'x-goog-api-client': GOOGLE_API_CLIENT };
}
