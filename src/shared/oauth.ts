/** Wire types of the OAuth management routes (`/api/oauth/{provider}/{action}`), shared by the CLI. */

/** `GET authorize` and `GET start-callback-server`. */
export interface OAuthAuthorizeReply {
  authUrl: string;
  /** The login's handle: send it with `exchange` / `poll-callback`. */
  state: string;
  redirectUri: string;
}

/** `GET device-code`: what the user types where (RFC 8628); `state` is the handle `poll` takes. */
export interface OAuthDeviceCodeReply {
  state: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete?: string;
  /** Seconds to wait between polls. */
  interval: number;
  expires_in: number;
}

/** A connection as the management routes show it (secrets masked). */
export interface OAuthConnectionView {
  id: string;
  provider: string;
  name: string;
  expiresAt: string | null;
  isActive: boolean;
  testStatus: string | null;
  lastError: string | null;
  providerSpecificData: Record<string, unknown>;
  accessToken?: string | null;
  refreshToken?: string | null;
}

/** `POST poll-callback` and `POST poll`. */
export interface OAuthPollReply {
  status: 'pending' | 'slow_down' | 'complete' | 'expired' | 'denied' | 'error';
  /** Seconds to wait before the next poll (device flow). */
  interval?: number;
  error?: string;
  connection?: OAuthConnectionView;
}

/** `POST exchange` and `POST import-token`. */
export interface OAuthConnectionReply {
  /** False when the login updated an account already connected (same account id or e-mail). */
  created: boolean;
  connection: OAuthConnectionView;
}

/** `POST cancel`: whether a login in progress was abandoned (false: it had already ended or expired). */
export interface OAuthCancelReply {
  cancelled: boolean;
}

/** `GET /api/oauth/providers`: one OAuth provider and the login it offers. */
export interface OAuthProviderInfo {
  id: string;
  name: string;
  /** `browser`: start-callback-server + poll-callback; `device`: device-code + poll; null: import-token only. */
  login: 'browser' | 'device' | null;
  /** The browser login can also end on the provider's page showing a code to paste (authorize + exchange). */
  paste: boolean;
  /** The provider retired its browser login: only import-token remains. */
  retired: boolean;
}
