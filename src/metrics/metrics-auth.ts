import type { Dispatcher } from 'undici';
import { clientCredentials, staticToken, type TokenProvider } from '../cloud/token-provider.js';
import { AppError, ErrorCode } from '../errors.js';

// Which bearer the metrics read API gets: the static key when one is set, otherwise an OAuth
// client-credentials token for the metrics audience.

export interface MetricsAuthSettings {
  readonly metricsUrl: string;
  readonly apiKey?: string | undefined;
  readonly clientId?: string | undefined;
  readonly clientSecret?: string | undefined;
  readonly authUrl?: string | undefined;
  readonly audience?: string | undefined;
  readonly dispatcher?: Dispatcher;
  readonly now?: () => number;
}

/**
 * The audience the spec asks for is "the metrics server address": METRICS_URL without its trailing
 * /read (https://metrics.example.com/read → https://metrics.example.com), unless METRICS_AUDIENCE says otherwise.
 */
export function metricsAudience(metricsUrl: string, override?: string): string {
  if (override !== undefined && override !== '') return override;
  return metricsUrl.replace(/\/+$/, '').replace(/\/read$/, '');
}

/** A static key wins when both are configured, since it needs no token server. */
export function metricsTokenProvider(settings: MetricsAuthSettings): TokenProvider {
  if (settings.apiKey) return staticToken(settings.apiKey);
  if (settings.clientId && settings.clientSecret && settings.authUrl) {
    return clientCredentials({
      authUrl: settings.authUrl,
      clientId: settings.clientId,
      clientSecret: settings.clientSecret,
      audience: metricsAudience(settings.metricsUrl, settings.audience),
      ...(settings.dispatcher ? { dispatcher: settings.dispatcher } : {}),
      ...(settings.now ? { now: settings.now } : {}),
    });
  }
  throw new AppError(
    ErrorCode.Config,
    'No metrics credentials: set METRICS_API_KEY, or METRICS_CLIENT_ID, METRICS_CLIENT_SECRET and METRICS_AUTH_URL.',
  );
}
