/**
 * The Yardstick client: typed calls for every path of the scoring and forecast services
 * (openapi-fetch over types generated from their OpenAPI documents), each service with its own
 * token (logged in and refreshed as needed, and once more on a 401 that says the token was
 * refused), and the NDJSON batch and group streams as async iterables.
 */
import createClient, { type Client, type Middleware } from "openapi-fetch";
import type { paths as ScoringPaths, components as ScoringComponents } from "./gen/scoring.js";
import type { paths as ForecastPaths, components as ForecastComponents } from "./gen/forecast.js";
import { TokenSource } from "./auth.js";
import { stream, type LineIn, type LineOut, type StreamOptions, type StreamPath } from "./ndjson.js";

export { TokenSource, type TokenSourceOptions } from "./auth.js";
export { YardstickError, type ErrorBody } from "./errors.js";
export type { LineIn, LineOut, StreamOptions, StreamPath } from "./ndjson.js";
export type { ScoringPaths, ScoringComponents, ForecastPaths, ForecastComponents };

/** Where a service is, and the client's credentials for it. */
export interface ServiceOptions {
  /** The service's base URL, e.g. http://127.0.0.1:8080 (make run's scoring service). */
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
  /** The clock of the token's refresh, in milliseconds (default Date.now). */
  now?: () => number;
}

/** A service's client: openapi-fetch's typed GET/POST…, its token, and its streams. */
export type ServiceClient<Paths extends {}> = Client<Paths> & {
  /** The service's token (one per service: the other service refuses it). */
  readonly tokens: TokenSource;
  /**
   * Streams input (any iterable or async iterable of lines) to an NDJSON path of the service
   * and yields the answer's lines in input order, as they come.
   */
  stream<P extends StreamPath<Paths>>(path: P, input: AsyncIterable<LineIn<Paths, P>> | Iterable<LineIn<Paths, P>>, opts?: StreamOptions): AsyncGenerator<LineOut<Paths, P>>;
};

/**
 * authenticate puts the service's token on every call but /authToken, and on a 401 whose
 * challenge says the token was refused (RFC 6750 error="invalid_token": expired, revoked, …)
 * logs in again and sends the call once more.
 */
function authenticate(tokens: TokenSource, fetchImpl: typeof fetch): Middleware {
  const again = new Map<string, Request>();
  return {
    async onRequest({ request, schemaPath, id }) {
      if (schemaPath === "/authToken") {
        return undefined;
      }
      request.headers.set("Authorization", `Bearer ${await tokens.token()}`);
      again.set(id, request.clone()); // the body of the request sent is consumed by then
      return request;
    },
    async onResponse({ response, id }) {
      const retry = again.get(id);
      again.delete(id);
      if (retry === undefined || response.status !== 401 || !/error="invalid_token"/.test(response.headers.get("WWW-Authenticate") ?? "")) {
        return undefined;
      }
      tokens.invalidate((retry.headers.get("Authorization") ?? "").replace(/^Bearer /, ""));
      retry.headers.set("Authorization", `Bearer ${await tokens.token()}`);
      return fetchImpl(retry);
    },
    onError({ id }) {
      again.delete(id);
    },
  };
}

function serviceClient<Paths extends {}>(opts: ServiceOptions): ServiceClient<Paths> {
  const fetchImpl = opts.fetch ?? globalThis.fetch;
  const tokens = new TokenSource(opts);
  const client = createClient<Paths>({ baseUrl: opts.baseUrl, fetch: fetchImpl });
  client.use(authenticate(tokens, fetchImpl));
  const target = { baseUrl: opts.baseUrl, token: () => tokens.token(), fetch: fetchImpl };
  return Object.assign(client, {
    tokens,
    stream<P extends StreamPath<Paths>>(path: P, input: AsyncIterable<LineIn<Paths, P>> | Iterable<LineIn<Paths, P>>, so?: StreamOptions) {
      return stream<LineIn<Paths, P>, LineOut<Paths, P>>(target, path as string, input, so);
    },
  });
}

/** The scoring service's client. */
export function createScoringClient(opts: ServiceOptions): ServiceClient<ScoringPaths> {
  return serviceClient<ScoringPaths>(opts);
}

/** The forecast service's client. */
export function createForecastClient(opts: ServiceOptions): ServiceClient<ForecastPaths> {
  return serviceClient<ForecastPaths>(opts);
}

/** Both services' clients, for the same client credentials: each logs in at its own service. */
export function createYardstick(opts: { scoring: string; forecast: string } & Omit<ServiceOptions, "baseUrl">): {
  scoring: ServiceClient<ScoringPaths>;
  forecast: ServiceClient<ForecastPaths>;
} {
  return {
    scoring: createScoringClient({ ...opts, baseUrl: opts.scoring }),
    forecast: createForecastClient({ ...opts, baseUrl: opts.forecast }),
  };
}
